package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.github.ucxffm.TestSupport.assertBytes;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A connection request that arrives on the listener's worker, accepted by another worker of the same context on
 * another thread: the spreading of connections over threads that event-loop servers (Netty) do.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CrossWorkerAcceptTest {

    private static final long SIZE = 300_000; // rendezvous on tcp as well as eager

    @Test
    void shouldAcceptOnAnotherWorkerOfTheSameContext() throws Exception {
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "tcp,self")
                .build()) {
            // Not a SynchronousQueue: its add() fails unless the other thread waits at that very moment.
            LinkedBlockingQueue<UcpEndpoint.Params> handOver = new LinkedBlockingQueue<>();
            CompletableFuture<InetSocketAddress> bound = new CompletableFuture<>();
            AtomicBoolean stop = new AtomicBoolean();
            // Thread A: the listener's worker, which only hands requests on.
            Thread listenerThread = Thread.ofPlatform().name("listener").start(() -> {
                try (UcpWorker a = context.newWorker();
                     UcpListener l = a.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null,
                             r -> handOver.add(r.endpointParams()))) {
                    bound.complete(l.address());
                    while (!stop.get()) {
                        a.progress();
                    }
                } catch (Throwable t) {
                    bound.completeExceptionally(t);
                }
            });
            // Thread B: accepts on its own worker and receives a message there, then answers.
            CompletableFuture<byte[]> received = new CompletableFuture<>();
            Thread acceptThread = Thread.ofPlatform().name("acceptor").start(() -> {
                try (UcpWorker b = context.newWorker(); Arena arena = Arena.ofConfined()) {
                    UcpEndpoint.Params params = handOver.poll(30, TimeUnit.SECONDS);
                    UcpEndpoint ep = b.connect(params);
                    assertSame(b, ep.worker());
                    MemorySegment in = arena.allocate(SIZE);
                    long recv = b.receiveTag(in, 0, SIZE, 7, -1L);
                    b.awaitCondition(() -> b.poll(recv), java.time.Duration.ofSeconds(20), UcpWorker.Idle.SPIN);
                    long send = ep.sendTag(in, 0, SIZE, 8);
                    b.await(send, java.time.Duration.ofSeconds(20), UcpWorker.Idle.SPIN);
                    received.complete(in.toArray(JAVA_BYTE));
                    ep.close();
                } catch (Throwable t) {
                    received.completeExceptionally(t);
                }
            });
            try (UcpWorker client = context.newWorker(); Arena arena = Arena.ofConfined()) {
                UcpEndpoint ep = client.connect(bound.get(20, TimeUnit.SECONDS));
                MemorySegment out = BytePattern.allocate(arena, SIZE, 5);
                MemorySegment back = arena.allocate(SIZE);
                long recv = client.receiveTag(back, 0, SIZE, 8, -1L);
                long send = ep.sendTag(out, 0, SIZE, 7);
                boolean[] sent = {false};
                TestSupport.progressUntil(() -> (sent[0] || (sent[0] = client.poll(send))) && received.isDone(),
                        20_000, client);
                assertBytes(out.toArray(JAVA_BYTE), MemorySegment.ofArray(received.get()), "at the accepting worker");
                client.awaitCondition(() -> client.poll(recv), java.time.Duration.ofSeconds(20),
                        UcpWorker.Idle.SPIN);
                assertBytes(out.toArray(JAVA_BYTE), back, "answered from the accepting worker");
                ep.close();
            } finally {
                stop.set(true);
                listenerThread.join();
                acceptThread.join();
            }
        }
    }

    @Test
    void shouldRefuseAWorkerOfAnotherContext() {
        try (UcpContext c1 = UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "tcp,self").build();
             UcpContext c2 = UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "tcp,self").build()) {
            UcpWorker server = c1.newWorker();
            UcpWorker other = c2.newWorker();
            UcpWorker client = c1.newWorker();
            CompletableFuture<UcpConnectionRequest> request = new CompletableFuture<>();
            UcpListener l = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null,
                    request::complete);
            UcpEndpoint ep = client.connect(l.address());
            TestSupport.progressUntil(request::isDone, 20_000, server, client);
            UcpConnectionRequest r = request.join();
            assertThrows(IllegalArgumentException.class, () -> other.connect(r.endpointParams()));
            assertEquals(true, r.isPending(), "a refused hand-over leaves the request to answer");
            r.reject();
            assertFalse(r.isPending());
            ep.closeForce();
        }
    }
}
