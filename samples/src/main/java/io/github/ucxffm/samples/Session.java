package io.github.ucxffm.samples;

import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpListener;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcsStatus;
import io.github.ucxffm.UcxException;
import io.github.ucxffm.UcxTimeoutException;
import io.github.ucxffm.UcxVersion;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * One connection between a sample's server and client: the context, the worker, the listener (server side) and
 * the endpoint, with the waiting and error reporting every sample shares. A run that fails becomes a
 * {@link SampleException} with one clear line.
 */
final class Session implements AutoCloseable {

    final String sample;
    final SampleOptions options;
    final UcpContext context;
    final UcpWorker worker;
    final UcpListener listener;
    final UcpEndpoint endpoint;
    private volatile UcxException peerFailure;

    private Session(String sample, SampleOptions options, UcpContext context, UcpWorker worker,
                    UcpListener listener, UcpEndpoint endpoint) {
        this.sample = sample;
        this.options = options;
        this.context = context;
        this.worker = worker;
        this.listener = listener;
        this.endpoint = endpoint;
    }

    /**
     * Opens the session: as server, listens and accepts one client; as client, connects.
     *
     * @param sample   the sample's name, for messages
     * @param options  parsed options
     * @param features the UCP features the sample uses
     * @return the connected session
     */
    static Session open(String sample, SampleOptions options, UcpContext.Feature... features) {
        List<UcpContext.Feature> all = new ArrayList<>(List.of(features));
        if (options.wakeup()) {
            all.add(UcpContext.Feature.WAKEUP);
        }
        UcpContext.Builder builder = UcpContext.builder().features(all.toArray(UcpContext.Feature[]::new))
                .name("ucx-ffm " + sample);
        if (options.transport() != null) {
            // Client-server connections are set up over TCP sockets by UCX's connection manager, whatever the data
            // transports: tcp stays in the list.
            String tls = options.transport();
            builder.config("TLS", tls.matches(".*\\btcp\\b.*") ? tls : tls + ",tcp");
        }
        UcpContext context;
        try {
            context = builder.build();
        } catch (IllegalArgumentException | UcxException e) {
            throw SampleException.usage("UCX refuses --transport " + options.transport() + ": " + e.getMessage());
        }
        UcpWorker worker = null;
        UcpListener listener = null;
        try {
            worker = context.newWorker();
            boolean peerErrors = !options.sharedMemory();
            List<UcpContext.Feature> asked = List.of(features);
            if (peerErrors && (asked.contains(UcpContext.Feature.AMO64) || asked.contains(UcpContext.Feature.AMO32))
                    && UcxVersion.runtime().has(UcxVersion.Defect.TCP_ATOMICS_CANCELED_WITH_PEER_ERROR_HANDLING)) {
                // this UCX cancels atomics over tcp on endpoints with peer error handling (UcxVersion.Defect)
                System.out.println(sample + ": UCX " + UcxVersion.runtime() + " cancels atomics over tcp on endpoints"
                        + " with peer error handling: connecting without it");
                peerErrors = false;
            }
            Session[] self = new Session[1];
            UcpEndpoint endpoint;
            if (options.server()) {
                try {
                    listener = worker.listen(new InetSocketAddress(options.host(), options.port()));
                } catch (UcxException e) {
                    throw SampleException.failed(e.status() == UcsStatus.ERR_BUSY
                            ? "port " + options.port() + " is in use" : "cannot listen on port " + options.port()
                            + ": " + e.getMessage());
                }
                System.out.println(sample + ": listening on " + listener.address().getHostString() + ":"
                        + listener.address().getPort());
                System.out.flush();
                UcpListener l = listener;
                UcpConnectionRequest[] request = new UcpConnectionRequest[1];
                UcpWorker w = worker;
                try {
                    w.awaitCondition(() -> (request[0] = l.poll()) != null,
                            Duration.ofMillis(SampleConfig.ACCEPT_TIMEOUT_MILLIS), idle(options));
                } catch (UcxTimeoutException e) {
                    throw SampleException.failed("no client connected within "
                            + SampleConfig.ACCEPT_TIMEOUT_MILLIS / 1000 + " s");
                }
                endpoint = request[0].accept(e -> self[0].peerFailure = e, peerErrors);
                System.out.println(sample + ": client " + request[0].clientAddress() + " connected");
            } else {
                endpoint = worker.connect(UcpEndpoint.Params.socket(options.serverAddress())
                        .peerErrorHandling(peerErrors).onError(e -> self[0].peerFailure = e));
            }
            Session s = new Session(sample, options, context, worker, listener, endpoint);
            self[0] = s;
            return s;
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
    }

    private static UcpWorker.Idle idle(SampleOptions options) {
        return options.wakeup() ? UcpWorker.Idle.BLOCK : UcpWorker.Idle.SPIN;
    }

    /** How this session waits: spinning, or blocking on the event fd with {@code --wakeup}. */
    UcpWorker.Idle idle() {
        return idle(options);
    }

    /** The peer's name in messages. */
    String peer() {
        return options.server() ? "client" : "server " + options.host() + ":" + options.port();
    }

    /**
     * Progresses until the request completes.
     *
     * @param request a token
     * @param what    what the program is doing, for the message if it fails
     */
    void await(long request, String what) {
        try {
            worker.await(request, Duration.ofMillis(SampleConfig.STEP_TIMEOUT_MILLIS), idle());
        } catch (UcxTimeoutException e) {
            throw noAnswer(what);
        } catch (UcxException e) {
            throw lost(what, e);
        }
    }

    /**
     * Progresses until {@code condition} holds.
     *
     * @param condition checked after each progress
     * @param what      what the program is doing, for the message if it fails
     */
    void awaitCondition(BooleanSupplier condition, String what) {
        try {
            worker.awaitCondition(() -> {
                UcxException f = peerFailure;
                if (f != null) {
                    throw lost(what, f);
                }
                return condition.getAsBoolean();
            }, Duration.ofMillis(SampleConfig.STEP_TIMEOUT_MILLIS), idle());
        } catch (UcxTimeoutException e) {
            throw noAnswer(what);
        } catch (UcxException e) {
            throw lost(what, e);
        }
    }

    /** The one-line failure for a step that ran out of time while {@code what}. */
    private SampleException noAnswer(String what) {
        return SampleException.failed("no answer from the " + peer() + " within "
                + SampleConfig.STEP_TIMEOUT_MILLIS / 1000 + " s while " + what);
    }

    /** The one-line failure for a UCX error while {@code what}: names a peer that went away when that is the cause. */
    SampleException lost(String what, UcxException e) {
        UcxException f = peerFailure != null ? peerFailure : e;
        String reason = switch (f.status()) {
            case ERR_UNREACHABLE, ERR_REJECTED, ERR_NOT_CONNECTED ->
                    options.server() ? "the client went away" : "cannot reach " + peer();
            case ERR_CONNECTION_RESET, ERR_ENDPOINT_TIMEOUT -> "the " + peer() + " went away";
            default -> "UCX failed";
        };
        return SampleException.failed(reason + " while " + what + " (" + f.getMessage() + ")");
    }

    /** An endpoint that failed between two waits surfaces as a UCX exception from the next call: one line too. */
    SampleException failure(UcxException e) {
        return SampleException.failed(UcxException.isPeerFailure(e.code()) ? "the " + peer() + " went away ("
                + e.getMessage() + ")" : "UCX failed: " + e.getMessage());
    }

    /** Registered memory from UCX, or a one-line failure. */
    io.github.ucxffm.UcpMemory allocate(long bytes, String what) {
        try {
            return context.allocate(bytes);
        } catch (UcxException | IllegalArgumentException e) {
            throw SampleException.failed("cannot allocate " + bytes + " bytes of registered memory for " + what
                    + ": " + e.getMessage());
        }
    }

    /** A ping-pong's last check: the pong must hold the ping's bytes. */
    static void checkEcho(java.lang.foreign.MemorySegment in, java.lang.foreign.MemorySegment out, long size) {
        if (in.asSlice(0, size).mismatch(out.asSlice(0, size)) >= 0) {
            throw SampleException.failed("the last pong differs from the ping");
        }
    }

    /** The transports the endpoint uses, for reports. */
    String transports() {
        String t = String.join(",", endpoint.transports());
        return t.isEmpty() ? "unknown" : t;
    }

    @Override
    public void close() {
        if (options.server()) {
            // The server's last message may still be on its way: leave the client time to take it and disconnect
            // first, so that it never sees the server vanish before the goodbye arrived.
            long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            try {
                while (peerFailure == null && !endpoint.isFailed() && System.nanoTime() - deadline < 0) {
                    worker.progress();
                }
            } catch (RuntimeException ignored) {
                // only lingering: whatever failed here, the close below still runs
            }
        }
        try {
            endpoint.closeTimeout(Duration.ofSeconds(2));
            endpoint.close();
        } catch (RuntimeException ignored) {
            // the peer may be gone: the context close below releases everything anyway
        }
        context.close();
    }
}
