package io.github.ucxffm;

import io.github.ucxffm.testsupport.Await;

import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The two-worker fixture of the single-process tests: one context with the given features (and transports), two of
 * its workers {@code a} and {@code b} on this thread, an endpoint {@code ab} from a to b (and {@code ba} back, when
 * asked for), and a confined arena for the buffers. Every wait progresses both workers: UCX's software RMA and
 * atomics (tcp), rendezvous and wire-up complete only when the target worker progresses too.
 *
 * <p>It lives in this module's test sources rather than in {@code ucx-ffm-test-support}, which the tests of this
 * module use and which therefore cannot depend on this module (Maven allows no cycle); no other module's tests run
 * workers in their own JVM.
 */
final class TwoWorkers implements AutoCloseable {

    /** How long a wait of this fixture may take, unless the builder says otherwise. */
    static final Duration TIMEOUT = Duration.ofSeconds(20);

    final UcpContext context;
    final UcpWorker a;
    /** The second worker; {@code a} itself for a fixture {@link Builder#self() to itself}. */
    final UcpWorker b;
    final UcpEndpoint ab;
    /** {@code null} unless {@link Builder#bothWays()} or {@link Builder#throughListener} asked for it. */
    final UcpEndpoint ba;
    /** b's listener on 127.0.0.1 that {@code ab} connected through, or {@code null}. */
    final UcpListener listener;
    final Arena arena;
    /** Whether the endpoints ask for peer error handling; {@code null}: the default of {@code connect(address)}. */
    private final Boolean peerErrorHandling;
    /** Whether the endpoints between the workers get an error callback. */
    private final boolean errorCallbacks;
    private final boolean flushOnClose;
    private final Duration timeout;
    /** What {@code toString()} says, in test messages: the transports asked for. */
    private final String name;

    private TwoWorkers(Builder builder) {
        UcpContext.Builder cb = UcpContext.builder().features(builder.features);
        if (builder.tls != null) {
            cb.config("TLS", builder.tls);
        }
        this.context = cb.build();
        this.peerErrorHandling = builder.peerErrorHandling;
        this.errorCallbacks = builder.errorCallbacks;
        this.flushOnClose = builder.flushOnClose;
        this.timeout = builder.timeout;
        this.name = builder.tls != null ? builder.tls : "two workers";
        try {
            a = context.newWorker();
            b = builder.self ? a : context.newWorker();
            if (builder.throughListener) {
                listener = b.listen(new InetSocketAddress("127.0.0.1", 0));
                ab = connectToListener(a, builder.onAbError);
                ba = accept();
            } else {
                listener = null;
                ab = connect(a, b);
                ba = builder.bothWays ? connect(b, a) : null;
            }
            arena = Arena.ofConfined();
        } catch (RuntimeException | Error e) {
            context.close();
            throw e;
        }
    }

    /**
     * A fixture of a context with these features.
     *
     * @param features the context's features
     * @return a builder
     */
    static Builder builder(UcpContext.Feature... features) {
        return new Builder(features);
    }

    /** How the fixture is made. */
    static final class Builder {
        private final UcpContext.Feature[] features;
        private String tls;
        private Boolean peerErrorHandling;
        private boolean errorCallbacks = true;
        private boolean bothWays;
        private boolean self;
        private boolean flushOnClose;
        private boolean throughListener;
        private Consumer<UcxException> onAbError;
        private Duration timeout = TIMEOUT;

        private Builder(UcpContext.Feature... features) {
            this.features = features.clone();
        }

        /** The transports of the context ({@code UCX_TLS}). */
        Builder tls(String value) {
            tls = value;
            return this;
        }

        /** Whether the endpoints ask for peer error handling (otherwise the default of a worker-address connect). */
        Builder peerErrorHandling(boolean on) {
            peerErrorHandling = on;
            return this;
        }

        /** Endpoints (to worker addresses) without an error callback, which lets the workers make critical calls. */
        Builder withoutErrorCallbacks() {
            errorCallbacks = false;
            return this;
        }

        /** An endpoint {@code ba} from b to a too. */
        Builder bothWays() {
            bothWays = true;
            return this;
        }

        /**
         * {@code ab} made through a listener of b on 127.0.0.1 (a client-server endpoint, with the given error handler)
         * and {@code ba} the endpoint b accepted, instead of endpoints to worker addresses.
         */
        Builder throughListener(Consumer<UcxException> onError) {
            throughListener = true;
            onAbError = onError;
            return this;
        }

        /** One worker with an endpoint to itself: {@code b} is {@code a}. */
        Builder self() {
            self = true;
            return this;
        }

        /**
         * Flushes {@code ab} with both workers progressing before the close, so that the endpoint's close (which
         * progresses only its own worker) does not wait for its timeout to finish wire-up.
         */
        Builder flushOnClose() {
            flushOnClose = true;
            return this;
        }

        /** How long a wait of the fixture may take. */
        Builder timeout(Duration value) {
            timeout = value;
            return this;
        }

        TwoWorkers build() {
            return new TwoWorkers(this);
        }
    }

    private UcpEndpoint connect(UcpWorker from, UcpWorker to) {
        if (peerErrorHandling == null && errorCallbacks) {
            return from.connect(to.address());
        }
        UcpEndpoint.Params p = UcpEndpoint.Params.worker(to.address()).errorCallback(errorCallbacks);
        return from.connect(peerErrorHandling == null ? p : p.peerErrorHandling(peerErrorHandling));
    }

    /** An endpoint from {@code w} to b's {@link #listener}, with the given error handler (or none). */
    UcpEndpoint connectToListener(UcpWorker w, Consumer<UcxException> onError) {
        return w.connect(UcpEndpoint.Params.socket(listener.address()).onError(onError));
    }

    /** Progresses both workers until b's {@link #listener} has a connection request; accepts it. */
    UcpEndpoint accept() {
        UcpConnectionRequest[] r = new UcpConnectionRequest[1];
        awaitCondition(() -> (r[0] = listener.poll()) != null, "a connection request");
        return r[0].accept();
    }

    /** A second endpoint from {@code a} to {@code b}, made as {@code ab} was. */
    UcpEndpoint connectAgain() {
        return connect(a, b);
    }

    /** One progress of each worker. */
    void progress() {
        a.progress();
        if (b != a) {
            b.progress();
        }
    }

    /** Progresses both workers until the condition holds; fails after the timeout. */
    void awaitCondition(BooleanSupplier done, String what) {
        Await.until(what, timeout, this::progress, done);
    }

    /** Progresses both workers until the request of {@code a} completes; rethrows its failure. */
    void await(long token) {
        awaitCondition(() -> a.poll(token), "request " + Long.toHexString(token));
    }

    /** Progresses both workers until the future completes; returns its value or rethrows its failure's cause. */
    <T> T await(CompletableFuture<T> future) {
        awaitCondition(future::isDone, "future");
        return TestSupport.valueOf(future);
    }

    /** Flushes {@code ab}: everything started before is complete at the target. */
    void flush() {
        await(ab.flush());
    }

    /** Closes the context (and with it workers and endpoints), then the arena. */
    @Override
    public void close() {
        try {
            if (flushOnClose && !ab.isClosed() && !ab.isFailed() && !a.isClosed() && !b.isClosed()) {
                flush();
            }
        } finally {
            try {
                context.close();
            } finally {
                arena.close();
            }
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
