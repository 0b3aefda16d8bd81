package io.github.ucxffm;

import io.github.ucxffm.bindings.support.UcxLibraryHook;

/**
 * A UCX release number, comparable; and what ucx-ffm does differently by release.
 * <p>
 * <b>Supported releases.</b> One ucx-ffm jar runs on UCX {@value #OLDEST_SUPPORTED} and later. Its raw bindings are
 * generated from UCX {@value #BINDINGS_GENERATED_FROM}'s headers; the whole test suite runs on each release of
 * {@value #TESTED} ({@code ./ucx-ffm matrix}: Debian 12, 13 and unstable). A function the loaded UCX lacks throws
 * {@link UnsatisfiedLinkError} naming it and the loaded version when called; a constant whose value moved between
 * releases takes the loaded release's value.
 * <p>
 * <b>What differs by release</b> is listed by {@link Capability}: each newer behaviour is used from the oldest release
 * on which the matrix has run it, and the older path stays in use (and tested) below that. {@link Defect} lists the
 * defects of a release that show through ucx-ffm, with their workaround. Two defects of 1.14+ the library avoids by
 * itself, in {@link UcpContext}: it sets {@code PROTO_INDIRECT_ID=on} (a failed endpoint's rendezvous sends are then
 * released; without it {@code ucp_cleanup} of 1.18 and 1.23 aborts), and on 1.14 to 1.18 a context uses the first
 * protocols ({@code PROTO_ENABLE=n}: the new ones of 1.18 fail tcp atomics and lost data over tcp after a peer
 * died); an application's own setting of either wins. docs/UCX-BEHAVIOUR.md
 * has each with a C reproduction.
 *
 * @param major   major version
 * @param minor   minor version
 * @param release release (patch) number
 */
public record UcxVersion(int major, int minor, int release) implements Comparable<UcxVersion> {

    /** The oldest UCX release ucx-ffm supports. */
    public static final String OLDEST_SUPPORTED = "1.13.0";

    /** The UCX release whose headers the raw bindings are generated from. */
    public static final String BINDINGS_GENERATED_FROM = "1.18.1";

    /** The UCX releases the whole test suite runs on ({@code ./ucx-ffm matrix}). */
    public static final String TESTED = "1.13.1, 1.18.1 and 1.23.0";

    private static final UcxVersion RUNTIME = query();

    /**
     * A UCX behaviour that depends on the release, and the oldest release on which ucx-ffm has run it. Releases
     * between two that the matrix tests take the older behaviour unless this says otherwise.
     */
    public enum Capability {
        /**
         * {@code ucp_tag_recv_nbx} writes the sender tag and length into {@code recv_info} when it completes at
         * once (UCX 1.13 leaves it unwritten). Where present, a polled tag receive is one call; before, it probes
         * for an arrived message first ({@code ucp_tag_probe_nb} + {@code ucp_tag_msg_recv_nbx}).
         */
        TAG_RECV_INFO_ON_IMMEDIATE_COMPLETION(1, 18);

        private final int major;
        private final int minor;

        Capability(int major, int minor) {
            this.major = major;
            this.minor = minor;
        }

        /**
         * The oldest release this is used on.
         *
         * @return that release, as {@code major.minor.0}
         */
        public UcxVersion since() {
            return new UcxVersion(major, minor, 0);
        }
    }

    /**
     * The UCX this process runs, from {@code ucp_get_version}.
     *
     * @return the runtime version
     */
    public static UcxVersion runtime() {
        return RUNTIME;
    }

    private static UcxVersion query() {
        int code = UcxLibraryHook.version(); // ucp_get_version, asked once for the whole process
        return new UcxVersion(code >>> 16, code >>> 8 & 0xff, code & 0xff);
    }

    /**
     * A defect of some UCX releases that shows through ucx-ffm (those the library works around are not listed), with
     * the releases it was seen on. Applications can ask {@link #has(Defect)} and take the workaround given.
     */
    public enum Defect {
        /**
         * UCX 1.23 cancels every remote atomic over tcp on an endpoint with peer error handling
         * ({@code UCS_ERR_CANCELED}, "cannot find remote protocol ... amo_fetch") and fails the endpoint. (1.14 to
         * 1.18 have it too, but there a context with atomics runs UCX's first protocols, which do not; on 1.23 those
         * refuse put and get.) Workaround: atomics over tcp on endpoints without peer error handling. C reproduction
         * in docs/UCX-BEHAVIOUR.md.
         */
        TCP_ATOMICS_CANCELED_WITH_PEER_ERROR_HANDLING(1, 23),
        /**
         * UCX 1.18.1 crashes the process (SIGSEGV, a call through a null function pointer in
         * {@code ucp_worker_progress}) when two workers of one process are connected through a listener over shared
         * memory without peer error handling, and the client's first tag send is made before its endpoint's wire-up
         * has completed; {@code ucp_ep_print_info} ({@link UcpEndpoint#describe()}, {@link UcpEndpoint#transports()}) on
         * that endpoint then crashes too. Two processes are not affected, nor 1.13.1 or 1.23.0~rc1. Workaround:
         * connect workers of one process by worker address ({@link UcpEndpoint.Params#worker}), or progress both
         * workers until the wire-up is done before the first send (docs/UCX-BEHAVIOUR.md).
         */
        IN_PROCESS_LISTENER_SHARED_MEMORY_EARLY_SEND(1, 18);

        private final int major;
        private final int minor;

        Defect(int major, int minor) {
            this.major = major;
            this.minor = minor;
        }
    }

    /**
     * Whether this release has {@code defect}: one of the minor releases it was seen on (a later release is taken to
     * be fixed until seen otherwise).
     *
     * @param defect a defect of some UCX releases
     * @return {@code true} if this release is one of them
     */
    public boolean has(Defect defect) {
        return major == defect.major && minor == defect.minor;
    }

    /**
     * Whether ucx-ffm uses {@code capability} on this release.
     *
     * @param capability a release-dependent behaviour
     * @return {@code true} if this release is at least the capability's {@link Capability#since()}
     */
    public boolean has(Capability capability) {
        return atLeast(capability.major, capability.minor);
    }

    /**
     * Whether this release is one ucx-ffm supports ({@value #OLDEST_SUPPORTED} or later).
     *
     * @return {@code true} if supported
     */
    public boolean isSupported() {
        return atLeast(1, 13);
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
