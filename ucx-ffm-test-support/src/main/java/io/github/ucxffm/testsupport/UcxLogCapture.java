package io.github.ucxffm.testsupport;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Records what UCX logs at WARN level or worse in this process, the way UCX's own test harness does (a test fails on
 * an unexpected UCX warning, RELIABILITY.md b.0, oracle 4): a handler pushed with {@code ucs_log_push_handler} sees
 * every message UCX emits, on whatever thread (UCX's async thread included), and lets UCX print it as usual. It
 * records the level, the source location and the format string (the arguments are a {@code va_list}, left alone), e.g.
 * {@code mpool.c:53 WARN object %p was not returned to mpool %s}.
 * <p>
 * UCX prints to the process's native stdout, which in a surefire fork lands in the {@code .dumpstream} files; this
 * capture is what a test can assert on.
 * <p>
 * This module depends on the JDK alone, so the capture finds {@code libucs} among the libraries the process has
 * loaded: load UCX through the bindings first (any use of them, e.g. {@code UcxVersion.runtime()}), so that their
 * preparations apply before UCX initialises, and only then call {@link #start()}.
 */
public final class UcxLogCapture implements AutoCloseable {

    /**
     * One message: {@code level} 0 fatal, 1 error, 2 warn; the format string and, where the platform's
     * {@code va_list} can be handed on ({@code x86_64}), the formatted text.
     */
    public record Entry(int level, String file, int line, String format, String text) {
        @Override
        public String toString() {
            return file + ":" + line + " " + (level == 0 ? "FATAL" : level == 1 ? "ERROR" : "WARN") + " " + format;
        }
    }

    private static final int UCS_LOG_LEVEL_WARN = 2;
    private static final int UCS_LOG_FUNC_RC_CONTINUE = 1;
    private static final ConcurrentLinkedQueue<Entry> ENTRIES = new ConcurrentLinkedQueue<>();
    /** {@code vsnprintf}, where a {@code va_list} argument is a pointer (x86_64: UCX calls va_start per handler). */
    private static final MethodHandle VSNPRINTF;

    static {
        Linker linker = Linker.nativeLinker();
        VSNPRINTF = System.getProperty("os.arch").equals("amd64") ? linker.downcallHandle(linker.defaultLookup()
                .find("vsnprintf").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS, java.lang.foreign.ValueLayout
                .JAVA_LONG, ADDRESS, ADDRESS)) : null;
    }

    /** UCX's logging entry points and the handler, bound on the first {@link #start()}, once UCX is loaded. */
    private static final class Native {
        static final MethodHandle PUSH;
        static final MethodHandle POP;
        static final MemorySegment HANDLER;

        static {
            Linker linker = Linker.nativeLinker();
            // the library the process already loaded (through the bindings), not a second copy
            SymbolLookup ucs = SymbolLookup.libraryLookup("libucs.so.0", Arena.global());
            PUSH = linker.downcallHandle(ucs.find("ucs_log_push_handler").orElseThrow(),
                    FunctionDescriptor.ofVoid(ADDRESS));
            POP = linker.downcallHandle(ucs.find("ucs_log_pop_handler").orElseThrow(), FunctionDescriptor.ofVoid());
            HANDLER = handler(linker);
        }
    }

    private static MemorySegment handler(Linker linker) {
        try {
            // ucs_log_func_rc_t (*)(const char *file, unsigned line, const char *function, ucs_log_level_t level,
            //                       const ucs_log_component_config_t *comp_conf, const char *message, va_list ap)
            FunctionDescriptor fd = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS,
                    ADDRESS, ADDRESS);
            MethodHandle target = MethodHandles.lookup().findStatic(UcxLogCapture.class, "onLog",
                    MethodType.methodType(int.class, MemorySegment.class, int.class, MemorySegment.class, int.class,
                            MemorySegment.class, MemorySegment.class, MemorySegment.class));
            return linker.upcallStub(target, fd, Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static int onLog(MemorySegment file, int line, MemorySegment function, int level, MemorySegment comp,
                             MemorySegment message, MemorySegment ap) {
        try {
            if (level <= UCS_LOG_LEVEL_WARN) {
                ENTRIES.add(new Entry(level, string(file), line, string(message), format(message, ap)));
            }
        } catch (Throwable t) {
            // nothing may escape an upcall; a message that cannot be read is recorded as such
            ENTRIES.add(new Entry(level, "?", line, "(unreadable: " + t + ")", ""));
        }
        return UCS_LOG_FUNC_RC_CONTINUE;
    }

    private static String format(MemorySegment message, MemorySegment ap) throws Throwable {
        if (VSNPRINTF == null) {
            return string(message);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buffer = a.allocate(1024);
            int n = (int) VSNPRINTF.invokeExact(buffer, 1024L, message, ap);
            return n < 0 ? string(message) : buffer.getString(0).strip();
        }
    }

    private static String string(MemorySegment s) {
        return s.equals(MemorySegment.NULL) ? "" : s.reinterpret(Integer.MAX_VALUE).getString(0).strip();
    }

    private static boolean installed;
    private final int mark;

    private UcxLogCapture() {
        mark = ENTRIES.size();
    }

    /** Starts capturing; {@link #close()} stops. One capture at a time; UCX must be loaded (see above). */
    public static synchronized UcxLogCapture start() {
        if (installed) {
            throw new IllegalStateException("a UcxLogCapture is already installed");
        }
        try {
            Native.PUSH.invokeExact(Native.HANDLER);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        installed = true;
        ENTRIES.clear();
        return new UcxLogCapture();
    }

    /** What UCX logged at WARN or worse since {@link #start()}. */
    public List<Entry> entries() {
        List<Entry> all = new ArrayList<>(ENTRIES);
        return all.subList(Math.min(mark, all.size()), all.size());
    }

    @Override
    public void close() {
        synchronized (UcxLogCapture.class) {
            if (installed) {
                try {
                    Native.POP.invokeExact();
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
                installed = false;
            }
        }
    }
}
