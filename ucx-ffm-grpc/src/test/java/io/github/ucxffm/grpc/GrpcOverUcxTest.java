package io.github.ucxffm.grpc;

import io.github.ucxffm.netty.UcxIoHandler;
import io.github.ucxffm.netty.UcxTransportStats;
import io.github.ucxffm.testsupport.Await;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gRPC calls over UCX in one JVM, server and channel built with {@link UcxGrpc} on two UCX event loop groups the test
 * owns: a 64 MiB server stream checked by CRC-32 against the server's and an independent computation, a call the
 * client cancels and one whose deadline passes, both seen by the server as cancelled.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GrpcOverUcxTest {

    private static final long STREAM_BYTES = 64L << 20;

    private static EventLoopGroup serverGroup;
    private static EventLoopGroup clientGroup;
    private static Server server;
    private static ManagedChannel channel;
    private static final AtomicInteger WAIT_CANCELLED = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        serverGroup = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("grpc-test-server", true),
                UcxIoHandler.newFactory());
        clientGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("grpc-test-client", true),
                UcxIoHandler.newFactory());
        server = UcxGrpc.serverBuilder(new InetSocketAddress("127.0.0.1", 0), serverGroup)
                .addService(Greeter.service(WAIT_CANCELLED::incrementAndGet)).build().start();
        channel = UcxGrpc.channelBuilder(new InetSocketAddress("127.0.0.1", server.getPort()), clientGroup)
                .usePlaintext().build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
            assertTrue(channel.awaitTermination(10, TimeUnit.SECONDS), "channel terminated");
        }
        if (server != null) {
            server.shutdownNow();
            assertTrue(server.awaitTermination(10, TimeUnit.SECONDS), "server terminated");
        }
        for (EventLoopGroup g : new EventLoopGroup[] {clientGroup, serverGroup}) {
            if (g != null) {
                assertTrue(g.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS), "group ended");
            }
        }
    }

    @Test
    void shouldGreetOverUcx() {
        long before = UcxTransportStats.bytesReceived();
        assertEquals("hello, unary", ClientCalls.blockingUnaryCall(channel, Greeter.SAY_HELLO,
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS), "unary"));
        assertTrue(UcxTransportStats.bytesReceived() - before >= "unary".length() + "hello, unary".length(),
                "the call's bytes were received through UCX");
    }

    @Test
    void shouldStream64MiBIntactWithTheServersChecksum() throws Exception {
        long receivedBefore = UcxTransportStats.bytesReceived();
        ClientCall<String, byte[]> call = channel.newCall(Greeter.DOWNLOAD,
                CallOptions.DEFAULT.withDeadlineAfter(50, TimeUnit.SECONDS));
        CRC32 crc = new CRC32();
        long[] bytes = {0};
        CompletableFuture<Metadata> done = new CompletableFuture<>();
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] chunk) {
                crc.update(chunk);
                bytes[0] += chunk.length;
                call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                if (status.isOk()) {
                    done.complete(trailers);
                } else {
                    done.completeExceptionally(status.asRuntimeException(trailers));
                }
            }
        }, new Metadata());
        call.sendMessage(Long.toString(STREAM_BYTES));
        call.halfClose();
        call.request(1);
        Metadata trailers = done.get(55, TimeUnit.SECONDS);

        assertEquals(STREAM_BYTES, bytes[0]);
        assertEquals(trailers.get(Greeter.CRC_TRAILER), Long.toString(crc.getValue()), "CRC-32 the server computed");
        assertEquals(expectedCrc(), crc.getValue(), "CRC-32 of the pattern computed here");
        // both ends are in this JVM: the stream's bytes crossed UCX once (received by the client)
        assertTrue(UcxTransportStats.bytesReceived() - receivedBefore >= STREAM_BYTES,
                "64 MiB received through UCX, not " + (UcxTransportStats.bytesReceived() - receivedBefore));
    }

    private static long expectedCrc() {
        Greeter.Pattern pattern = new Greeter.Pattern();
        CRC32 crc = new CRC32();
        for (long left = STREAM_BYTES; left > 0; left -= Greeter.CHUNK) {
            crc.update(pattern.next((int) Math.min(Greeter.CHUNK, left)));
        }
        return crc.getValue();
    }

    @Test
    void shouldCancelACallOnBothSides() throws Exception {
        int cancelledBefore = WAIT_CANCELLED.get();
        Context.CancellableContext context = Context.current().withCancellation();
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        context.run(() -> ClientCalls.asyncUnaryCall(channel.newCall(Greeter.WAIT, CallOptions.DEFAULT), "cancel me",
                new StreamObserver<String>() {
                    @Override
                    public void onNext(String value) {
                        failure.completeExceptionally(new AssertionError("answered: " + value));
                    }

                    @Override
                    public void onError(Throwable t) {
                        failure.complete(t);
                    }

                    @Override
                    public void onCompleted() {
                        failure.completeExceptionally(new AssertionError("completed"));
                    }
                }));
        Thread.sleep(200); // let the call reach the server before it is cancelled
        context.cancel(null);
        Throwable t = failure.get(20, TimeUnit.SECONDS);
        assertEquals(Status.Code.CANCELLED, Status.fromThrowable(t).getCode(), String.valueOf(t));
        awaitServerCancellation(cancelledBefore);
    }

    @Test
    void shouldEndACallWhoseDeadlinePassesOnBothSides() throws Exception {
        int cancelledBefore = WAIT_CANCELLED.get();
        long start = System.nanoTime();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(
                channel, Greeter.WAIT, CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), "late"));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode(), e.toString());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250), "not before the deadline");
        awaitServerCancellation(cancelledBefore);
    }

    /** The server's handler saw its call cancelled: the cancellation crossed UCX (or the deadline was sent along). */
    private static void awaitServerCancellation(int before) {
        Await.until("the server's handler sees its call cancelled", Duration.ofSeconds(20),
                () -> WAIT_CANCELLED.get() > before);
        assertEquals(before + 1, WAIT_CANCELLED.get(), "cancelled once");
    }
}
