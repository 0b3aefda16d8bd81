package io.github.ucxffm.samples;

import io.github.ucxffm.grpc.UcxGrpc;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * gRPC's hello world over UCX: grpc-netty's server and channel on the UCX Netty transport, built with {@link UcxGrpc}
 * on an event loop group this sample owns. The client greets {@code --warmup} + {@code --iterations} times, checks
 * every answer, prints the first, the call latencies and the transport's counters. The server serves
 * {@code --clients} connections (default 1; 0: until stopped).
 * <p>
 * Service {@value #SERVICE}, method {@code SayHello}: a UTF-8 name in, {@code "hello, " + name} out; no generated code.
 */
final class GrpcHello {

    /** The service's full name. */
    static final String SERVICE = "ucxffm.samples.Greeter";

    private static final String NAME = "grpc-hello";

    private static final MethodDescriptor.Marshaller<String> TEXT = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try (stream) {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private static final MethodDescriptor<String, String> SAY_HELLO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "SayHello"))
            .setRequestMarshaller(TEXT).setResponseMarshaller(TEXT).build();

    private GrpcHello() {
    }

    static void run(String[] args) {
        SampleOptions options = SampleOptions.parse(0, 1_000, 100, args);
        if (options.server()) {
            serve(options);
        } else {
            greet(options);
        }
    }

    private static void serve(SampleOptions options) {
        EventLoopGroup group = NettyTransport.group(options, 2, NAME);
        try {
            AtomicInteger gone = new AtomicInteger();
            Server[] server = new Server[1];
            server[0] = UcxGrpc.serverBuilder(new InetSocketAddress(options.host(), options.port()), group)
                    .addService(ServerServiceDefinition.builder(SERVICE)
                            .addMethod(SAY_HELLO, ServerCalls.asyncUnaryCall((name, out) -> {
                                out.onNext("hello, " + name);
                                out.onCompleted();
                            })).build())
                    .addTransportFilter(new ServerTransportFilter() {
                        @Override
                        public void transportTerminated(Attributes transportAttrs) {
                            int n = gone.incrementAndGet();
                            if (options.clients() > 0 && n >= options.clients()) {
                                server[0].shutdown();
                            }
                        }
                    })
                    .build();
            try {
                server[0].start();
            } catch (IOException e) {
                server[0].shutdownNow();
                throw SampleException.failed("cannot listen on port " + options.port() + " (" + e.getMessage() + ")");
            }
            System.out.println(NAME + ": listening on " + options.host() + ":" + server[0].getPort());
            server[0].awaitTermination();
            System.out.println(NAME + ": served " + gone.get() + " connection" + (gone.get() == 1 ? "" : "s"));
            System.out.println(NettyTransport.counters());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw SampleException.failed("interrupted");
        } finally {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    private static void greet(SampleOptions options) {
        EventLoopGroup group = NettyTransport.group(options, 1, NAME + "-client");
        ManagedChannel channel = UcxGrpc.channelBuilder(options.serverAddress(), group).usePlaintext().build();
        try {
            LatencyReport report = new LatencyReport();
            long total = options.warmup() + options.iterations();
            String first = null;
            for (long i = 0; i < total; i++) {
                if (i == options.warmup()) {
                    report.start();
                }
                String name = "ucx-ffm " + i;
                long t0 = System.nanoTime();
                String answer = ClientCalls.blockingUnaryCall(channel, SAY_HELLO, CallOptions.DEFAULT
                        .withDeadlineAfter(SampleConfig.STEP_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS), name);
                if (i >= options.warmup()) {
                    report.record(System.nanoTime() - t0);
                }
                if (!answer.equals("hello, " + name)) {
                    throw SampleException.failed("call " + i + ": the server answered '" + answer + "'");
                }
                if (first == null) {
                    first = answer;
                    System.out.println(NAME + ": server says '" + answer + "'");
                }
            }
            report.stop();
            report.print(NAME, "ucx-ffm 0".length(), NettyTransport.transports(options));
            System.out.println(NettyTransport.counters());
        } catch (StatusRuntimeException e) {
            Status status = e.getStatus();
            throw SampleException.failed((status.getCode() == Status.Code.UNAVAILABLE ? "cannot reach " : "failed on ")
                    + options.host() + ":" + options.port() + " (" + status.getCode() + ": " + status.getDescription()
                    + (status.getCause() == null ? "" : ": " + status.getCause().getMessage()) + ")");
        } finally {
            channel.shutdownNow();
            try {
                channel.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }
}
