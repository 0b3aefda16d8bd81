package io.github.ucxffm.bindings.support;

/**
 * The UCX release this process loaded ({@link UcxLibraryHook#version()}, asked once), split into its parts. The
 * support code uses it where a {@code static inline} function of one release reads a struct whose layout another
 * release changed; the result is kept in {@code static final} fields of the caller, so the JIT folds the choice
 * away.
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
        int code = UcxLibraryHook.version();
        MAJOR = code >>> 16;
        MINOR = code >>> 8 & 0xff;
        RELEASE = code & 0xff;
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
