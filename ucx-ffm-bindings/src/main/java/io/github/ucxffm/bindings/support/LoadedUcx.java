package io.github.ucxffm.bindings.support;

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The UCX release this process loaded, read once from {@code ucp_get_version}. The support code uses it where a
 * {@code static inline} function of one release reads a struct whose layout another release changed; the result is
 * kept in {@code static final} fields of the caller, so the JIT folds the choice away.
 *
 * <p>{@code libucp}, {@code libuct} and {@code libucs} come from one build of UCX (the generated bindings load
 * {@code libucp.so.0}, which links the other two), so the version of {@code libucp} is that of UCT and UCS too.
 */
final class LoadedUcx {

    /** Major version of the loaded UCX, e.g. 1. */
    static final int MAJOR;

    /** Minor version of the loaded UCX, e.g. 13. */
    static final int MINOR;

    /** Release number of the loaded UCX, e.g. 1. */
    static final int RELEASE;

    static {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT, 3);
            ucx_h.ucp_get_version(v, v.asSlice(JAVA_INT.byteSize()), v.asSlice(2 * JAVA_INT.byteSize()));
            MAJOR = v.getAtIndex(JAVA_INT, 0);
            MINOR = v.getAtIndex(JAVA_INT, 1);
            RELEASE = v.getAtIndex(JAVA_INT, 2);
        }
    }

    private LoadedUcx() {
    }

    /**
     * Tells whether the loaded UCX is {@code major.minor} or newer.
     *
     * @param major major version
     * @param minor minor version
     * @return {@code true} when the loaded release is at least {@code major.minor}
     */
    static boolean atLeast(int major, int minor) {
        return MAJOR > major || (MAJOR == major && MINOR >= minor);
    }

    /**
     * Names the loaded release for messages.
     *
     * @return e.g. {@code "UCX 1.13.1"}
     */
    static String describe() {
        return "UCX " + MAJOR + "." + MINOR + "." + RELEASE;
    }
}
