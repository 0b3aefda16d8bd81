package io.github.ucxffm;

/**
 * The transports and error handling of the RMA and atomic tests: a {@link TwoWorkers} fixture whose context uses the
 * transports of a {@link Mode}, with an endpoint from {@code a} to {@code b}; or, in {@link Mode#SELF}, one worker
 * with an endpoint to itself.
 */
final class RmaPeers {

    /** Which transports the endpoint uses. */
    enum Mode {
        /**
         * Shared memory (UCX_TLS=shm: sysv, posix, cma) with peer error handling off: UCX 1.13 picks no shared-memory
         * lane for an endpoint that asks for UCP_ERR_HANDLING_MODE_PEER, so the default endpoint would use tcp.
         */
        SHM("shm", false),
        /** UCX_TLS=tcp: RMA and atomics emulated by UCP over active messages; peer error handling on. */
        TCP("tcp", true),
        /** UCX_TLS=self: an endpoint from a worker to itself. */
        SELF("self", false);

        final String tls;
        final boolean peerErrorHandling;

        Mode(String tls, boolean peerErrorHandling) {
            this.tls = tls;
            this.peerErrorHandling = peerErrorHandling;
        }
    }

    private RmaPeers() {
    }

    /**
     * Two workers of a context with these features over the mode's transports, {@code ab} with the mode's peer error
     * handling (but see {@link #peerErrorHandling}); {@code ab} is flushed before the close.
     */
    static TwoWorkers open(Mode mode, UcpContext.Feature... features) {
        TwoWorkers.Builder b = TwoWorkers.builder(features).tls(mode.tls)
                .peerErrorHandling(peerErrorHandling(mode, features)).flushOnClose();
        return (mode == Mode.SELF ? b.self() : b).build();
    }

    /**
     * The mode's peer error handling, except for atomics over tcp on UCX 1.23: that release cancels every atomic on
     * a tcp endpoint with peer error handling and fails the endpoint ("cannot find remote protocol", a UCX defect
     * with a C reproduction in docs/UCX-BEHAVIOUR.md; its first protocols, the 1.18 workaround, refuse put and get).
     * Without peer error handling the atomics are exact there, so they are still checked, on such endpoints.
     */
    static boolean peerErrorHandling(Mode mode, UcpContext.Feature... features) {
        boolean atomics = java.util.Arrays.stream(features)
                .anyMatch(f -> f == UcpContext.Feature.AMO32 || f == UcpContext.Feature.AMO64);
        if (mode.peerErrorHandling && atomics && tcpAtomicsCanceledWithPeerErrorHandling()) {
            System.out.println("UCX " + UcxVersion.runtime() + ": atomics over tcp on endpoints without peer error "
                    + "handling (this release cancels them on endpoints with it; docs/UCX-BEHAVIOUR.md)");
            return false;
        }
        return mode.peerErrorHandling;
    }

    /** Whether the loaded UCX has the defect of {@link #peerErrorHandling}. */
    static boolean tcpAtomicsCanceledWithPeerErrorHandling() {
        return UcxVersion.runtime().has(UcxVersion.Defect.TCP_ATOMICS_CANCELED_WITH_PEER_ERROR_HANDLING);
    }
}
