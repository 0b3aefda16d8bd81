package io.github.ucxffm;

import io.github.ucxffm.testsupport.Await;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;


/**
 * Two workers of one context in this JVM and an endpoint from {@code a} to {@code b}, for RMA and atomic tests; or,
 * in {@link Mode#SELF}, one worker with an endpoint to itself. Every wait progresses both workers: UCX's software
 * RMA and atomics (tcp) complete only when the target worker progresses too.
 */
final class RmaPeers implements AutoCloseable {

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

    static final Duration TIMEOUT = Duration.ofSeconds(20);

    final Mode mode;
    /** Whether the endpoints ask for peer error handling: the mode's choice, but see {@link #peerErrorHandling}. */
    final boolean peerErrorHandling;
    final UcpContext context;
    final UcpWorker a;
    final UcpWorker b;
    final UcpEndpoint ab;

    RmaPeers(Mode mode, UcpContext.Feature... features) {
        this.mode = mode;
        this.peerErrorHandling = peerErrorHandling(mode, features);
        this.context = UcpContext.builder().features(features).config("TLS", mode.tls).build();
        try {
            a = context.newWorker();
            b = mode == Mode.SELF ? a : context.newWorker();
            ab = a.connect(UcpEndpoint.Params.worker(b.address()).peerErrorHandling(peerErrorHandling));
        } catch (RuntimeException | Error e) {
            context.close();
            throw e;
        }
    }

    /** A second endpoint from {@code a} to {@code b}. */
    UcpEndpoint connectAgain() {
        return a.connect(UcpEndpoint.Params.worker(b.address()).peerErrorHandling(peerErrorHandling));
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

    void progress() {
        a.progress();
        if (b != a) {
            b.progress();
        }
    }

    void awaitCondition(BooleanSupplier done, String what) {
        Await.until(what, TIMEOUT, this::progress, done);
    }

    /** Progresses both workers until the request of {@code a} completes; rethrows its failure. */
    void await(long token) {
        awaitCondition(() -> a.poll(token), "request " + Long.toHexString(token));
    }

    /** Progresses both workers until the future completes; returns its value or rethrows its failure's cause. */
    <T> T await(CompletableFuture<T> future) {
        awaitCondition(future::isDone, "future");
        try {
            return future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new AssertionError(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Flushes the endpoint: everything started before is complete at the target. */
    void flush() {
        await(ab.flush());
    }

    @Override
    public void close() {
        try {
            // Completes wireup with both workers progressing, so that the endpoint's close (which progresses only
            // its own worker) does not wait for its timeout.
            if (!ab.isClosed() && !ab.isFailed() && !a.isClosed() && !b.isClosed()) {
                flush();
            }
        } finally {
            context.close();
        }
    }

    @Override
    public String toString() {
        return mode.name();
    }
}
