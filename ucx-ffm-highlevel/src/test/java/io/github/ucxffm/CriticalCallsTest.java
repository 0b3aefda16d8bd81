package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import static io.github.ucxffm.UcpContext.Feature.AM;
import static io.github.ucxffm.UcpContext.Feature.AMO64;
import static io.github.ucxffm.UcpContext.Feature.RMA;
import static io.github.ucxffm.UcpContext.Feature.STREAM;
import static io.github.ucxffm.UcpContext.Feature.TAG;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Critical calls: a worker makes its operations and progress without the thread-state transition only while nothing
 * UCX could call back into Java is registered with it ({@code RequestTable.quiet()}). An upcall from a critical call
 * aborts the JVM, so the count of such things must be exact: each kind is added and removed here and the answer
 * checked after each step; the data paths are then run with the calls critical, and a peer that goes away under a
 * worker making critical calls must not take the JVM with it.
 */
class CriticalCallsTest {

    private static final long TAG_1 = 0x51;
    private static final Duration SHORT = Duration.ofMillis(200);

    @Test
    void shouldBeQuietOnlyWhileNothingCanCallBack() {
        try (UcpContext context = UcpContext.builder().features(TAG, AM, STREAM).build();
             Arena arena = Arena.ofConfined()) {
            UcpWorker a = context.newWorker();
            UcpWorker b = context.newWorker();
            assertTrue(a.requests.quiet(), "a new worker");

            UcpEndpoint withCallback = a.connect(b.address());
            assertFalse(a.requests.quiet(), "an endpoint with an error callback");
            UcpEndpoint without = a.connect(UcpEndpoint.Params.worker(b.address()).errorCallback(false));
            assertFalse(a.requests.quiet(), "the error callback of the first endpoint is still there");
            withCallback.closeTimeout(SHORT); // b does not progress: the close's flush would wait its whole timeout
            withCallback.close();
            assertTrue(a.requests.quiet(), "only an endpoint without an error callback");

            UcpListener listener = a.listen(new InetSocketAddress("127.0.0.1", 0));
            assertFalse(a.requests.quiet(), "a listener");
            listener.close();
            assertTrue(a.requests.quiet(), "the listener closed");

            a.setAmHandler(3, message -> { });
            assertFalse(a.requests.quiet(), "an active-message handler");
            a.setAmHandler(3, message -> { });
            a.setAmHandler(3, null);
            assertTrue(a.requests.quiet(), "the handler replaced, then removed");

            // completion receives on b, sent to by a's endpoint without a callback
            MemorySegment buffer = arena.allocate(64);
            AtomicReference<Integer> status = new AtomicReference<>();
            assertTrue(b.requests.quiet(), "b: nothing registered");
            b.receiveTag(buffer, 0, 64, TAG_1, -1L, (s, length, tag) -> status.set(s));
            assertFalse(b.requests.quiet(), "a receive with a callback posted");
            CompletableFuture<Long> future = b.receiveTagAsync(buffer, 0, 64, TAG_1 + 1, -1L);
            long send = without.sendTag(arena.allocate(8), 0, 8, TAG_1);
            while (status.get() == null || !a.poll(send)) {
                a.progress();
                b.progress();
            }
            assertEquals(0, status.get());
            assertFalse(b.requests.quiet(), "the future's receive still posted");
            long second = without.sendTag(arena.allocate(8), 0, 8, TAG_1 + 1);
            while (!future.isDone() || !a.poll(second)) {
                a.progress();
                b.progress();
            }
            assertEquals(8L, future.join());
            assertTrue(b.requests.quiet(), "both completion receives delivered");

            long polled = b.receiveTag(buffer, 0, 64, TAG_1 + 2, -1L);
            assertTrue(b.requests.quiet(), "a polled receive gives UCX no callback");
            b.cancel(polled);
            assertThrows(UcxCanceledException.class, () -> {
                while (!b.poll(polled)) {
                    b.progress();
                }
            });
            assertTrue(b.requests.quiet());
            without.closeTimeout(SHORT);
            without.close();
            assertTrue(a.requests.quiet());
            b.close();
            a.close();
        }
    }

    @Test
    void shouldNeverBeQuietForAMultiThreadedWorker() {
        try (UcpContext context = UcpContext.builder().features(TAG).build()) {
            UcpWorker w = context.newWorker(UcsThreadMode.MULTI);
            assertFalse(w.requests.quiet(), "UCX takes the worker's lock inside every call: no critical call");
        }
    }

    @Test
    void shouldRefuseAnErrorHandlerWithoutTheErrorCallback() {
        UcpEndpoint.Params p = UcpEndpoint.Params.socket(new InetSocketAddress("127.0.0.1", 1));
        assertThrows(IllegalArgumentException.class, () -> p.errorCallback(false).onError(e -> { }));
        UcpEndpoint.Params q = UcpEndpoint.Params.socket(new InetSocketAddress("127.0.0.1", 1)).onError(e -> { });
        assertThrows(IllegalArgumentException.class, () -> q.errorCallback(false));
    }

    /** Tag, stream, put, get and atomics between quiet workers, checked byte for byte. */
    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void shouldCarryDataWithCriticalCalls(String tls) {
        try (TwoWorkers p = TwoWorkers.builder(TAG, STREAM, RMA, AMO64).tls(tls + ",self").peerErrorHandling(false)
                .withoutErrorCallbacks().bothWays().build();
             Arena arena = Arena.ofConfined()) {
            assertTrue(p.a.requests.quiet(), "a makes critical calls");
            assertTrue(p.b.requests.quiet(), "b makes critical calls");
            for (int size : new int[] {8, 4096, 300_000}) {
                MemorySegment out = arena.allocate(size);
                MemorySegment in = arena.allocate(size);
                BytePattern.fill(out, size);
                long recv = p.b.receiveTag(in, 0, size, TAG_1, -1L);
                long send = p.ab.sendTag(out, 0, size, TAG_1);
                awaitBoth(p, recv, send, "tag " + size);
                BytePattern.verify(in, size, tls + " tag " + size);
                assertEquals(size, p.b.receivedLength());

                MemorySegment streamed = arena.allocate(size);
                long sr = p.ba.receiveStream(streamed, 0, size, true);
                long ss = p.ab.sendStream(out, 0, size);
                awaitBoth(p, sr, ss, "stream " + size);
                BytePattern.verify(streamed, size, tls + " stream " + size);
            }
            UcpMemory target = p.context.allocate(4096);
            UcpRemoteKey key = p.ab.unpackRemoteKey(target.packRemoteKey());
            MemorySegment src = arena.allocate(4096);
            BytePattern.fill(src, 77);
            p.await(p.ab.put(src, 0, 4096, target.address(), key));
            p.flush();
            BytePattern.verify(target.segment(), 77, tls + " put");
            MemorySegment back = arena.allocate(4096);
            p.await(p.ab.get(back, 0, 4096, target.address(), key));
            BytePattern.verify(back, 77, tls + " get");
            target.segment().set(JAVA_LONG, 0, 40);
            MemorySegment operand = arena.allocate(JAVA_LONG);
            operand.set(JAVA_LONG, 0, 2);
            MemorySegment old = arena.allocate(JAVA_LONG);
            p.await(p.ab.atomic(UcpAtomicOp.ADD, operand, old, target.address(), key));
            assertEquals(40, old.get(JAVA_LONG, 0), tls + " fetched value");
            assertEquals(42, target.segment().get(JAVA_LONG, 0), tls + " added value");
            assertTrue(p.a.requests.quiet() && p.b.requests.quiet(), "still quiet after the operations");
        }
    }

    /** Progresses both workers until b's token {@code atB} and a's token {@code atA} completed; each polled once. */
    private static void awaitBoth(TwoWorkers p, long atB, long atA, String what) {
        boolean[] done = new boolean[2];
        p.awaitCondition(() -> (done[0] || (done[0] = p.b.poll(atB))) & (done[1] || (done[1] = p.a.poll(atA))), what);
    }

    /**
     * A tcp peer whose worker closes under a worker making critical calls: UCX fails the endpoint inside progress,
     * and with no error callback nothing calls back, so the JVM lives on; the same scenario with the callback
     * reaches the error handler, which shows the failure path really ran.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldSurviveAPeerGoingAwayDuringCriticalCalls(boolean errorCallback) {
        try (UcpContext context = UcpContext.builder().features(TAG).config("TLS", "tcp").build();
             Arena arena = Arena.ofConfined()) {
            UcpWorker a = context.newWorker();
            UcpWorker b = context.newWorker();
            AtomicReference<UcxException> failed = new AtomicReference<>();
            UcpEndpoint.Params params = UcpEndpoint.Params.worker(b.address()).errorCallback(errorCallback);
            UcpEndpoint ab = a.connect(errorCallback ? params.onError(failed::set) : params);
            assertEquals(!errorCallback, a.requests.quiet());
            MemorySegment in = arena.allocate(8);
            long recv = b.receiveTag(in, 0, 8, TAG_1, -1L);
            long send = ab.sendTag(arena.allocate(8), 0, 8, TAG_1);
            while (!b.poll(recv) | !a.poll(send)) {
                a.progress();
                b.progress();
            }
            b.close(); // its tcp connections close: a's endpoint fails during a's progress
            long deadline = System.nanoTime() + 10_000_000_000L;
            UcxException seen = null;
            while (System.nanoTime() - deadline < 0 && seen == null && failed.get() == null) {
                try {
                    long s = ab.sendTag(arena.allocate(8), 0, 8, TAG_1);
                    while (!a.poll(s) && System.nanoTime() - deadline < 0) {
                        a.progress();
                    }
                } catch (UcxException e) {
                    seen = e;
                }
                a.progress();
            }
            if (errorCallback) {
                assertNotNull(failed.get(), "the error callback ran: the failure path of this scenario is real");
            } else {
                assertNotNull(seen, "without a callback the failure reaches the application as an operation's error");
                assertTrue(a.requests.quiet(), "still quiet: the calls that saw the failure were critical");
            }
            a.close();
        }
    }
}
