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
     * Unary calls one after another, each answer compared with its request (an 8-byte call number, then the
     * pattern).
     */
    static final class UnaryLoad implements Load {
        private final ManagedChannel channel;
        private final byte[] request;
        private long number;

        UnaryLoad(ManagedChannel channel, int size) {
            this.channel = channel;
            this.request = Payloads.pattern(size);
        }

        @Override
        public CompletableFuture<Round> round(long count, long nanos, Latencies latencies) {
            CompletableFuture<Round> done = new CompletableFuture<>();
            long start = System.nanoTime();
            new Object() {
                long calls;

                void next() {
                    byte[] req = request.clone();
                    ByteBuffer.wrap(req).putLong(0, number++);
                    long t0 = System.nanoTime();
                    ClientCall<byte[], byte[]> call = channel.newCall(UNARY, CallOptions.DEFAULT);
                    call.start(new ClientCall.Listener<>() {
                        private boolean matched;

                        @Override
                        public void onMessage(byte[] message) {
                            matched = Arrays.equals(message, req);
                        }

                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            long now = System.nanoTime();
                            if (!status.isOk()) {
                                done.completeExceptionally(status.asRuntimeException());
                                return;
                            }
                            if (!matched) {
                                done.completeExceptionally(new IllegalStateException("the answer to unary call "
                                        + ByteBuffer.wrap(req).getLong(0) + " differs from its request"));
                                return;
                            }
                            if (latencies != null) {
                                latencies.record(now - t0);
                            }
                            calls++;
                            if (calls < count && now - start - nanos < 0) {
                                next();
                            } else {
                                done.complete(new Round(calls, calls * req.length, now - start, calls));
                            }
                        }
                    }, new Metadata());
                    call.request(2);
                    call.sendMessage(req);
                    call.halfClose();
                }
            }.next();
            return done;
        }

        @Override
        public void close() {
            shutdown(channel);
        }
    }

    /** Server-streaming calls one after another, every message compared with the pattern. */
    static final class StreamLoad implements Load {
        /** Bytes per call, about: a long stream, and a new call when it ends before the round does. */
        static final long BYTES_PER_CALL = 16 << 20;

        private final ManagedChannel channel;
        private final byte[] expected;

        StreamLoad(ManagedChannel channel, int size) {
            this.channel = channel;
            this.expected = Payloads.pattern(size);
        }

        @Override
        public CompletableFuture<Round> round(long count, long nanos, Latencies latencies) {
            CompletableFuture<Round> done = new CompletableFuture<>();
            long start = System.nanoTime();
            new Object() {
                long received;

                void next() {
                    long n = Math.min(Math.clamp(BYTES_PER_CALL / expected.length, 16, 4096), count - received);
                    byte[] req = ByteBuffer.allocate(12).putLong(n).putInt(expected.length).array();
                    ClientCall<byte[], byte[]> call = channel.newCall(STREAM, CallOptions.DEFAULT);
                    call.start(new ClientCall.Listener<>() {
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
                                done.completeExceptionally(new IllegalStateException(wrong));
                                return;
                            }
                            if (!status.isOk()) {
                                done.completeExceptionally(status.asRuntimeException());
                                return;
                            }
                            if (got != n) {
                                done.completeExceptionally(new IllegalStateException("a stream of " + n
                                        + " messages ended after " + got));
                                return;
                            }
                            received += got;
                            if (received < count && now - start - nanos < 0) {
                                next();
                            } else {
                                done.complete(new Round(received, received * expected.length, now - start,
                                        received));
                            }
                        }
                    }, new Metadata());
                    call.request(8);
                    call.sendMessage(req);
                    call.halfClose();
                }
            }.next();
            return done;
        }

        @Override
        public void close() {
            shutdown(channel);
        }
    }
}
