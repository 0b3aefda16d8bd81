package io.github.ucxffm;

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A UCX release number, comparable.
 *
 * @param major   major version
 * @param minor   minor version
 * @param release release (patch) number
 */
public record UcxVersion(int major, int minor, int release) implements Comparable<UcxVersion> {

    private static final UcxVersion RUNTIME = query();

    /**
     * The UCX this process runs, from {@code ucp_get_version}.
     *
     * @return the runtime version
     */
    public static UcxVersion runtime() {
        return RUNTIME;
    }

    private static UcxVersion query() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT, 3);
            ucx_h.ucp_get_version(v, v.asSlice(4), v.asSlice(8));
            return new UcxVersion(v.getAtIndex(JAVA_INT, 0), v.getAtIndex(JAVA_INT, 1), v.getAtIndex(JAVA_INT, 2));
        }
    }

    /**
     * Whether this version is at least {@code major.minor}.
     *
     * @param major major version
     * @param minor minor version
     * @return {@code true} if this is {@code major.minor.0} or later
     */
    public boolean atLeast(int major, int minor) {
        return compareTo(new UcxVersion(major, minor, 0)) >= 0;
    }

    @Override
    public int compareTo(UcxVersion o) {
        int c = Integer.compare(major, o.major);
        c = c != 0 ? c : Integer.compare(minor, o.minor);
        return c != 0 ? c : Integer.compare(release, o.release);
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + release;
    }
}
