package io.github.ucxffm.bindings.support;

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Makes a JVM a safe home for UCX. The generated {@code ucx_h} runs {@link #beforeLoad()} before it loads
 * {@code libucp.so.0}, whose {@code libucs} reads its global options in a library constructor:
 * <ul>
 *   <li>{@code UCX_ERROR_SIGNALS} is set to the empty list in this process, so UCX installs no handlers for
 *   SIGSEGV, SIGBUS, SIGILL and SIGFPE. HotSpot relies on those signals for implicit null checks and safepoints; a
 *   UCX handler in their place turns a Java {@code NullPointerException} into a crash.</li>
 *   <li>{@code LC_NUMERIC} is set to "C", because UCX parses configuration values such as {@code 0.06ns} with
 *   {@code strtod}, which follows the numeric locale the JVM took from the environment.</li>
 * </ul>
 * Nothing is asked of the user. The system property {@value #KEEP_SIGNALS_PROPERTY}{@code =true} leaves UCX's
 * signal handling as the environment configures it (for debugging UCX itself; HotSpot may then crash).
 * If another library loaded UCX into this process first, its options are already read and this hook cannot help.
 */
public final class UcxLibraryHook {

    /** System property that, when {@code true}, keeps UCX's own error-signal handlers. */
    public static final String KEEP_SIGNALS_PROPERTY = "ucxffm.ucx.keepErrorSignals";

    /** {@code LC_NUMERIC} in glibc's {@code <locale.h>}. */
    static final int LC_NUMERIC = 1;

    private static volatile boolean prepared;

    private UcxLibraryHook() {
    }

    /**
     * Prepares the process before the UCX libraries load. Idempotent; called by the generated bindings.
     */
    public static synchronized void beforeLoad() {
        if (prepared) {
            return;
        }
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        try (Arena arena = Arena.ofConfined()) {
            if (!Boolean.getBoolean(KEEP_SIGNALS_PROPERTY)) {
                MethodHandle setenv = linker.downcallHandle(libc.find("setenv").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
                int rc = (int) setenv.invokeExact(arena.allocateFrom("UCX_ERROR_SIGNALS"), arena.allocateFrom(""), 1);
                if (rc != 0) {
                    throw new IllegalStateException("setenv(UCX_ERROR_SIGNALS) failed");
                }
            }
            MethodHandle setlocale = linker.downcallHandle(libc.find("setlocale").orElseThrow(),
                    FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
            MemorySegment result = (MemorySegment) setlocale.invokeExact(LC_NUMERIC, arena.allocateFrom("C"));
            if (result.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("setlocale(LC_NUMERIC, \"C\") failed");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        prepared = true;
    }

    /**
     * The release of the loaded UCX as {@code MAJOR << 16 | MINOR << 8 | PATCH} (1.18.1 is {@code 0x011201}), from
     * {@code ucp_get_version}, asked once and kept. The one place the bindings learn the UCX version: constants whose
     * value differs between UCX releases are resolved from it, and missing-symbol errors name it.
     *
     * @return the loaded UCX release code
     * @throws UnsatisfiedLinkError if the UCX libraries cannot be loaded
     */
    public static int version() {
        return LoadedVersion.CODE;
    }

    /**
     * The loaded UCX release as text, {@code "MAJOR.MINOR.PATCH"}.
     *
     * @return e.g. {@code "1.18.1"}
     * @throws UnsatisfiedLinkError if the UCX libraries cannot be loaded
     */
    public static String versionString() {
        int v = version();
        return (v >>> 16) + "." + (v >>> 8 & 0xff) + "." + (v & 0xff);
    }

    /** Lazy holder: the version is asked on first use, once. */
    private static final class LoadedVersion {
        static final int CODE = query();

        private static int query() {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment v = arena.allocate(JAVA_INT, 3);
                ucx_h.ucp_get_version(v, v.asSlice(4), v.asSlice(8));
                int major = v.getAtIndex(JAVA_INT, 0);
                int minor = v.getAtIndex(JAVA_INT, 1);
                int patch = v.getAtIndex(JAVA_INT, 2);
                if (major < 0 || minor < 0 || minor > 255 || patch < 0 || patch > 255) {
                    throw new UnsatisfiedLinkError("ucp_get_version gave an unexpected " + major + "." + minor + "."
                            + patch);
                }
                return major << 16 | minor << 8 | patch;
            }
        }
    }

    /**
     * Describes the loaded UCX for error messages, e.g. {@code "UCX 1.13.1"}.
     *
     * @return the UCX version the process runs, or a note that it is unknown
     */
    public static String describe() {
        try {
            return "UCX " + versionString();
        } catch (RuntimeException | Error e) {
            return "UCX of unknown version (" + e + ")";
        }
    }
}
