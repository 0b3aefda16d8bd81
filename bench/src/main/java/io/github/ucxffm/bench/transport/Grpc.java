package io.github.ucxffm.bench.transport;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The gRPC service of the benchmark, without generated code: methods on byte arrays. {@code Unary} answers a request
 * with the same bytes; {@code Stream} takes a count and a size and sends that many messages of
 * {@link Payloads#pattern} of that size, as fast as flow control lets it. Server and client run their calls on the
 * transport's event loops ({@code directExecutor}), for every transport alike.
 */
final class Grpc {

    /** The service's name. */
    static final String SERVICE = "ucxffm.bench.Transport";

    /** Byte arrays as they are. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("cannot read a message").withCause(e).asRuntimeException();
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> UNARY = method(MethodDescriptor.MethodType.UNARY, "Unary");
    static final MethodDescriptor<byte[], byte[]> STREAM = method(MethodDescriptor.MethodType.SERVER_STREAMING,
            "Stream");

    private Grpc() {
    }

    private static MethodDescriptor<byte[], byte[]> method(MethodDescriptor.MethodType type, String name) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }

    /**
     * Starts the gRPC server.
     *
     * @param t       the transport; the server's boss and workers are its group
     * @param address where to listen
     * @return the server
     * @throws IOException if it cannot listen
     */
    static Server serve(NettyTransport t, InetSocketAddress address) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder(SERVICE)
                .addMethod(UNARY, new UnaryHandler()).addMethod(STREAM, new StreamHandler()).build();
        return NettyServerBuilder.forAddress(address).channelType(t.serverChannel())
                .bossEventLoopGroup(t.group()).workerEventLoopGroup(t.group()).directExecutor()
                .addService(service).build().start();
    }

    /** Answers with the request. */
    private static final class UnaryHandler implements ServerCallHandler<byte[], byte[]> {
        @Override
        public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> call, Metadata headers) {
            call.request(2);
            return new ServerCall.Listener<>() {
                private byte[] request;

                @Override
                public void onMessage(byte[] message) {
                    request = message;
                }

                @Override
                public void onHalfClose() {
                    if (request == null) {
                        call.close(Status.INVALID_ARGUMENT.withDescription("no request"), new Metadata());
                        return;
                    }
                    call.sendHeaders(new Metadata());
                    call.sendMessage(request);
                    call.close(Status.OK, new Metadata());
                }
            };
        }
    }

    /** Sends {@code count} messages of {@code size} bytes: the request is the two numbers, 8 and 4 bytes. */
    private static final class StreamHandler implements ServerCallHandler<byte[], byte[]> {
        private volatile byte[] payload = new byte[0];

        @Override
        public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> call, Metadata headers) {
            call.request(2);
            return new ServerCall.Listener<>() {
                private long count = -1;
                private long sent;
                private byte[] message;

                @Override
                public void onMessage(byte[] request) {
                    if (request.length != 12) {
                        return;
                    }
                    ByteBuffer b = ByteBuffer.wrap(request);
                    count = b.getLong();
                    int size = b.getInt();
                    byte[] p = payload;
                    if (p.length != size && size >= 0 && size <= TransportOptions.MAX_SIZE) {
                        p = Payloads.pattern(size);
                        payload = p;
                    }
                    message = p.length == size ? p : null;
                }

                @Override
                public void onHalfClose() {
                    if (count < 0 || message == null) {
                        call.close(Status.INVALID_ARGUMENT.withDescription("expected a count and a size"),
                                new Metadata());
                        return;
                    }
                    call.sendHeaders(new Metadata());
                    pump();
                }

                @Override
                public void onReady() {
                    if (message != null && sent < count) {
                        pump();
                    }
                }

                private void pump() {
                    while (sent < count && call.isReady()) {
                        call.sendMessage(message);
                        sent++;
                    }
                    if (sent == count) {
                        sent++; // closed once
                        call.close(Status.OK, new Metadata());
                    }
                }
            };
        }
    }

    /**
     * A client channel to the gRPC server.
     *
     * @param t       the transport
     * @param address the server
     * @return the channel, which the caller shuts down
     */
    static ManagedChannel channel(NettyTransport t, InetSocketAddress address) {
        return NettyChannelBuilder.forAddress(address).channelType(t.channel()).eventLoopGroup(t.group())
                .usePlaintext().directExecutor().build();
    }

    /** Shuts a channel down, waiting up to 10 s. */
    static void shutdown(ManagedChannel channel) {
        channel.shutdownNow();
        try {
            channel.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Calls one after another on a channel, each started when the one before it ended, until the round has its count
     * or its time. Its fields belong to the round, which the calls' callbacks (on the event loop) carry on.
     */
    private abstract static class CallLoop implements Load {
        final ManagedChannel channel;
        private CompletableFuture<Round> done;
        private Latencies latencies;
        private long count;
        private long nanos;
        private long start;
        private long answered;
        private long bytes;

        CallLoop(ManagedChannel channel) {
            this.channel = channel;
        }

        @Override
        public CompletableFuture<Round> round(long count, long nanos, Latencies latencies) {
            this.done = new CompletableFuture<>();
            this.latencies = latencies;
            this.count = count;
            this.nanos = nanos;
            this.answered = 0;
            this.bytes = 0;
            this.start = System.nanoTime();
            CompletableFuture<Round> f = done;
            next(count);
            return f;
        }

        /** Starts the next call, of at most {@code left} answers. */
        abstract void next(long left);

        /**
         * Starts a call: its listener, made for it, then the request and half-close.
         *
         * @param method    the method
         * @param request   the request
         * @param window    answers asked for at once
         * @param listener  makes the call's listener
         */
        void call(MethodDescriptor<byte[], byte[]> method, byte[] request, int window,
                  Function<ClientCall<byte[], byte[]>, ClientCall.Listener<byte[]>> listener) {
            ClientCall<byte[], byte[]> call = channel.newCall(method, CallOptions.DEFAULT);
            call.start(listener.apply(call), new Metadata());
            call.request(window);
            call.sendMessage(request);
            call.halfClose();
        }

        /** A call ended well with its answers, every one verified: the next call, or the end of the round. */
        void ended(long answers, long answerBytes, long sentAt, long now) {
            if (latencies != null) {
                latencies.record(now - sentAt);
            }
            answered += answers;
            bytes += answerBytes;
            if (answered < count && now - start - nanos < 0) {
                next(count - answered);
            } else {
                done.complete(new Round(answered, bytes, now - start, answered));
            }
        }

        /** A call failed, or an answer was wrong: the round fails. */
        void failed(Throwable cause) {
            done.completeExceptionally(cause);
        }

        @Override
        public void close() {
            shutdown(channel);
        }
    }

    /** Unary calls, each answer compared with its request (an 8-byte call number, then the pattern). */
    static final class UnaryLoad extends CallLoop {
        private final byte[] pattern;
        private long number;

        UnaryLoad(ManagedChannel channel, int size) {
            super(channel);
            this.pattern = Payloads.pattern(size);
        }

        @Override
        void next(long left) {
            byte[] request = pattern.clone();
            ByteBuffer.wrap(request).putLong(0, number++);
            long t0 = System.nanoTime();
            call(UNARY, request, 2, call -> new ClientCall.Listener<>() {
                private boolean matched;

                @Override
                public void onMessage(byte[] message) {
                    matched = Arrays.equals(message, request);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    long now = System.nanoTime();
                    if (!status.isOk()) {
                        failed(status.asRuntimeException());
                    } else if (!matched) {
                        failed(new IllegalStateException("the answer to unary call "
                                + ByteBuffer.wrap(request).getLong(0) + " differs from its request"));
                    } else {
                        ended(1, request.length, t0, now);
                    }
                }
            });
        }
    }

    /** Server-streaming calls, every message compared with the pattern; no round trip is timed. */
    static final class StreamLoad extends CallLoop {
        /** Bytes per call, about: a long stream, and a new call when it ends before the round does. */
        static final long BYTES_PER_CALL = 16 << 20;

        private final byte[] expected;
        private long received;

        StreamLoad(ManagedChannel channel, int size) {
            super(channel);
            this.expected = Payloads.pattern(size);
        }

        @Override
        public CompletableFuture<Round> round(long count, long nanos, Latencies latencies) {
            return super.round(count, nanos, null);
        }

        @Override
        void next(long left) {
            long n = Math.min(Math.clamp(BYTES_PER_CALL / expected.length, 16, 4096), left);
            byte[] request = ByteBuffer.allocate(12).putLong(n).putInt(expected.length).array();
            call(STREAM, request, 8, call -> new ClientCall.Listener<>() {
                private long got;
                private String wrong;

                @Override
                public void onMessage(byte[] message) {
                    if (wrong == null && !Arrays.equals(message, expected)) {
                        wrong = "stream message " + (received + got) + " differs from what the server sends ("
                                + message.length + " bytes)";
                        call.cancel(wrong, null);
                    }
                    got++;
                    call.request(1);
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    long now = System.nanoTime();
                    if (wrong != null) {
                        failed(new IllegalStateException(wrong));
                    } else if (!status.isOk()) {
                        failed(status.asRuntimeException());
                    } else if (got != n) {
                        failed(new IllegalStateException("a stream of " + n + " messages ended after " + got));
                    } else {
                        received += got;
                        ended(got, got * expected.length, now, now);
                    }
                }
            });
        }
    }
}
