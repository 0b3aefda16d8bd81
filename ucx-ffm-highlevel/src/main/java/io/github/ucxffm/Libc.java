package io.github.ucxffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/** The few C library calls the high-level layer needs. */
final class Libc {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle OPEN_MEMSTREAM = handle("open_memstream",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle FCLOSE = handle("fclose", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle FREE = handle("free", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle POLL = handle("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG,
            JAVA_INT));
    private static final short POLLIN = 1;
    private static final MethodHandle MMAP = handle("mmap", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MPROTECT = handle("mprotect", FunctionDescriptor.of(JAVA_INT, JAVA_LONG,
            JAVA_LONG, JAVA_INT));
    private static final MethodHandle MUNMAP = handle("munmap", FunctionDescriptor.of(JAVA_INT, JAVA_LONG,
            JAVA_LONG));
    private static final int PROT_READ = 1;
    private static final int PROT_WRITE = 2;
    private static final int PROT_EXEC = 4;
    private static final int MAP_PRIVATE = 2;
    private static final int MAP_ANONYMOUS = 0x20;

    private Libc() {
    }

    private static MethodHandle handle(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor);
    }

    /**
     * Waits until {@code fd} is readable or {@code timeoutMillis} passed ({@code poll(2)}). An interrupted or failed
     * poll returns early too: callers wait in a loop that re-checks their condition and deadline.
     */
    static void awaitReadable(MemorySegment pollFd, int fd, int timeoutMillis) {
        pollFd.set(JAVA_INT, 0, fd);
        pollFd.set(JAVA_SHORT, 4, POLLIN);
        pollFd.set(JAVA_SHORT, 6, (short) 0);
        try {
            int ignored = (int) POLL.invokeExact(pollFd, 1L, timeoutMillis);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** A {@code struct pollfd { int fd; short events; short revents; }} for {@link #awaitReadable}. */
    static MemorySegment pollFd(Arena arena) {
        return arena.allocate(8, 4);
    }

    /** Runs {@code print} with a C {@code FILE *} that writes to memory, and returns what it wrote. */
    static String printToString(Consumer<MemorySegment> print) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bufP = arena.allocate(ADDRESS);
            MemorySegment sizeP = arena.allocate(JAVA_LONG);
            MemorySegment stream = (MemorySegment) OPEN_MEMSTREAM.invokeExact(bufP, sizeP);
            if (stream.equals(MemorySegment.NULL)) {
                throw new OutOfMemoryError("open_memstream failed");
            }
            try {
                print.accept(stream);
            } finally {
                int ignored = (int) FCLOSE.invokeExact(stream);
            }
            MemorySegment buf = bufP.get(ADDRESS, 0);
            try {
                return new String(buf.reinterpret(sizeP.get(JAVA_LONG, 0)).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
            } finally {
                FREE.invokeExact(buf);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Maps a page, copies {@code code} into it and makes it executable and no longer writable ({@code mmap},
     * {@code mprotect}). The mapping lives as long as the process.
     *
     * @return the code's address, or 0 where the system refuses executable memory (a hardened kernel or policy)
     */
    static long mapExecutable(byte[] code) {
        long size = (code.length + 4095L) & ~4095L;
        try {
            long page = (long) MMAP.invokeExact(0L, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                    0L);
            if (page == -1L) {
                return 0;
            }
            MemorySegment.copy(code, 0, MemorySegment.ofAddress(page).reinterpret(size), JAVA_BYTE, 0, code.length);
            if ((int) MPROTECT.invokeExact(page, size, PROT_READ | PROT_EXEC) != 0) {
                int ignored = (int) MUNMAP.invokeExact(page, size);
                return 0;
            }
            return page;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
