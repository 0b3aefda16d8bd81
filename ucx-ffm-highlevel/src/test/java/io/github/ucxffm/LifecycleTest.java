package io.github.ucxffm;

import io.github.ucxffm.testsupport.Await;
import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.TestSupport.progressUntil;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Closing in every order, use after close, and leak reporting. Every test ends with as many live handles as it
 * started with.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LifecycleTest {

    private static final InetSocketAddress ANY_LOOPBACK_PORT =
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private int liveBefore;
    private Arena arena;

    @BeforeEach
    void setUp() {
        liveBefore = UcxHandle.liveHandles();
        arena = Arena.ofConfined();
    }

    @AfterEach
    void tearDown() {
        arena.close();
        assertEquals(liveBefore, UcxHandle.liveHandles(), "handles left open");
    }

    private static UcpContext newContext() {
        return UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.STREAM,
                UcpContext.Feature.RMA, UcpContext.Feature.WAKEUP).build();
    }

    /** Everything a context can own, wired together, with a message exchanged so the endpoints are in use. */
    private final class World {
        final UcpContext context = newContext();
        final UcpWorker a = context.newWorker();
        final UcpWorker b = context.newWorker();
        final UcpEndpoint ab = a.connect(b.address());
        final UcpEndpoint ba = b.connect(a.address());
        final UcpListener listener = b.listen(ANY_LOOPBACK_PORT);
        final UcpMemory allocated = context.allocate(4096);
        final MemorySegment userBuffer = arena.allocate(4096);
        final UcpMemory registered = context.register(userBuffer);
        final UcpRemoteKey rkey = ab.unpackRemoteKey(allocated.packRemoteKey());
        final MemorySegment allocatedView = allocated.segment();

        World() {
            MemorySegment src = BytePattern.allocate(arena, 32, 1);
            MemorySegment dst = arena.allocate(32);
            long recv = b.receiveTag(dst, 0, 32, 1, -1L);
            long send = ab.sendTag(src, 0, 32, 1);
            TestSupport.awaitBoth(a, send, b, recv);
            allocatedView.set(JAVA_BYTE, 0, (byte) 1);
        }

        UcxHandle[] all() {
            return new UcxHandle[] {context, a, b, ab, ba, listener, allocated, registered, rkey};
        }

        void assertAllClosed() {
            for (UcxHandle h : all()) {
                assertTrue(h.isClosed(), h + " still open");
            }
        }
    }

    @Test
    void shouldCloseChildrenBeforeParents() {
        World w = new World();
        assertEquals(liveBefore + w.all().length, UcxHandle.liveHandles());
        w.rkey.close();
        assertFalse(w.ab.isClosed(), "closing a key closed its endpoint");
        // a graceful close flushes, which needs the peer's progress; the peer is on this thread, blocked in the
        // close: the timeout bounds the wait, then the close is forced
        long t0 = System.nanoTime();
        w.ab.closeTimeout(Duration.ofMillis(200)).close();
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "close ignored its timeout");
        w.ba.closeForce();
        w.listener.close();
        assertFalse(w.a.isClosed());
        w.a.close();
        w.b.close();
        w.allocated.close();
        w.registered.close();
        assertFalse(w.context.isClosed());
        w.context.close();
        w.assertAllClosed();
    }

    @Test
    void shouldCloseEverythingWhenTheContextClosesFirst() {
        World w = new World();
        w.context.close();
        w.assertAllClosed();
        assertEquals(liveBefore, UcxHandle.liveHandles());
    }

    @Test
    void shouldCloseAWorkersEndpointsListenersAndKeysWithIt() {
        World w = new World();
        w.a.close();
        assertTrue(w.ab.isClosed());
        assertTrue(w.rkey.isClosed());
        assertFalse(w.b.isClosed());
        assertFalse(w.ba.isClosed());
        assertFalse(w.allocated.isClosed(), "memory belongs to the context, not the worker");
        w.b.close();
        assertTrue(w.listener.isClosed());
        assertTrue(w.ba.isClosed());
        // the context lives on: new workers and registrations work
        UcpWorker c = w.context.newWorker();
        c.progress();
        assertEquals((byte) 1, w.allocated.segment().get(JAVA_BYTE, 0));
        w.context.close();
        w.assertAllClosed();
        assertTrue(c.isClosed());
    }

    @Test
    void shouldIgnoreASecondClose() {
        World w = new World();
        w.rkey.close();
        w.rkey.close();
        w.ab.closeForce();
        w.ab.close();
        w.a.close();
        w.a.close();
        w.ab.close(); // its worker is gone: still nothing to do, no crash
        w.listener.close();
        w.b.close();
        w.listener.close();
        w.allocated.close();
        w.allocated.close();
        w.context.close();
        w.context.close();
        for (UcxHandle h : w.all()) {
            h.close();
        }
        w.assertAllClosed();
    }

    @Test
    void shouldThrowIllegalStateOnEveryUseAfterClose() {
        World w = new World();
        MemorySegment buf = arena.allocate(64);
        byte[] packed = w.allocated.packRemoteKey();
        w.context.close();
        Map<String, Executable> calls = new LinkedHashMap<>();
        calls.put("context.newWorker", () -> w.context.newWorker());
        calls.put("context.register", () -> w.context.register(buf));
        calls.put("context.allocate", () -> w.context.allocate(64));
        calls.put("context.requestSize", w.context::requestSize);
        calls.put("context.nativeHandle", w.context::nativeHandle);
        calls.put("worker.progress", w.a::progress);
        calls.put("worker.connect", () -> w.a.connect(w.b.address()));
        calls.put("worker.connect socket", () -> w.a.connect(ANY_LOOPBACK_PORT));
        calls.put("worker.listen", () -> w.a.listen(ANY_LOOPBACK_PORT));
        calls.put("worker.receiveTag", () -> w.a.receiveTag(buf, 0, 64, 1, -1L));
        calls.put("worker.receiveTag iov", () -> w.a.receiveTag(new MemorySegment[] {buf}, 1, -1L));
        calls.put("worker.probeTag", () -> w.a.probeTag(0, 0, false));
        calls.put("worker.address", w.a::address);
        calls.put("worker.flush", w.a::flush);
        calls.put("worker.poll", () -> w.a.poll(0x1234));
        calls.put("worker.cancel", () -> w.a.cancel(0x1234));
        calls.put("worker.await", () -> w.a.await(0x1234, Duration.ofSeconds(1), UcpWorker.Idle.BLOCK));
        calls.put("worker.arm", w.a::arm);
        calls.put("worker.signal", w.a::signal);
        calls.put("endpoint.sendTag", () -> w.ab.sendTag(buf, 0, 64, 1));
        calls.put("endpoint.sendTag iov", () -> w.ab.sendTag(new MemorySegment[] {buf}, 1));
        calls.put("endpoint.sendTagAsync", () -> w.ab.sendTagAsync(buf, 0, 64, 1));
        calls.put("endpoint.sendStream", () -> w.ab.sendStream(buf, 0, 64));
        calls.put("endpoint.receiveStream iov", () -> w.ab.receiveStream(new MemorySegment[] {buf}, true));
        calls.put("endpoint.flush", w.ab::flush);
        calls.put("endpoint.localAddress", w.ab::localAddress);
        calls.put("endpoint.unpackRemoteKey", () -> w.ab.unpackRemoteKey(packed));
        calls.put("endpoint.nativeHandle", w.ab::nativeHandle);
        calls.put("listener.poll", w.listener::poll);
        calls.put("memory.segment", w.allocated::segment);
        calls.put("memory.packRemoteKey", w.allocated::packRemoteKey);
        calls.put("memory.memoryType", w.allocated::memoryType);
        calls.put("allocated memory, read through an old segment", () -> w.allocatedView.get(JAVA_BYTE, 0));
        calls.put("remote key.pointer", () -> w.rkey.pointer(w.rkey.base(), 8));
        for (Map.Entry<String, Executable> c : calls.entrySet()) {
            assertThrows(IllegalStateException.class, c.getValue(), c.getKey());
        }
        // the application's own memory is the application's: registration ending does not close it
        buf.set(JAVA_BYTE, 0, (byte) 7);
        w.userBuffer.set(JAVA_BYTE, 0, (byte) 7);
    }

    @Test
    void shouldRefuseToCloseAContextWhoseWorkerBelongsToAnotherThread() throws Exception {
        UcpContext context = newContext();
        UcpWorker mine = context.newWorker();
        UcpEndpoint self = mine.connect(mine.address());
        Throwable t = CompletableFuture.supplyAsync(() -> {
            try {
                context.close();
                return null;
            } catch (Throwable e) {
                return e;
            }
        }).get(20, TimeUnit.SECONDS);
        assertInstanceOf(IllegalStateException.class, t);
        // nothing was closed: the worker still runs on its context
        assertFalse(context.isClosed());
        assertFalse(context.isClosing());
        assertFalse(mine.isClosed());
        MemorySegment src = BytePattern.allocate(arena, 16, 3);
        MemorySegment dst = arena.allocate(16);
        long recv = mine.receiveTag(dst, 0, 16, 5, -1L);
        long send = self.sendTag(src, 0, 16, 5);
        progressUntil(() -> mine.poll(recv), 10_000, mine);
        progressUntil(() -> mine.poll(send), 10_000, mine);
        TestSupport.assertBytes(src.toArray(JAVA_BYTE), dst, "after the refused close");
        context.close();
        assertTrue(mine.isClosed());
    }

    @Test
    void shouldLeaveNoHandleBehindWhenCreationFails() {
        try (UcpContext context = newContext()) {
            UcpWorker w = context.newWorker();
            int live = UcxHandle.liveHandles();
            assertThrows(IllegalArgumentException.class,
                    () -> w.connect(InetSocketAddress.createUnresolved("nowhere.invalid", 1)));
            assertThrows(IllegalArgumentException.class, () -> w.connect(new byte[0]));
            UcpListener first = w.listen(ANY_LOOPBACK_PORT);
            assertThrows(UcxException.class, () -> w.listen(first.address()));
            first.close();
            assertEquals(live, UcxHandle.liveHandles());
            w.close(); // would trip over a half-built endpoint or listener
            assertTrue(w.isClosed());
        }
    }

    @Test
    void shouldReleaseOperationsInFlightWhenTheWorkerCloses() {
        try (UcpContext context = newContext()) {
            UcpWorker w = context.newWorker();
            MemorySegment dst = arena.allocate(64);
            long tagRecv = w.receiveTag(dst, 0, 64, 1, -1L);
            long iovRecv = w.receiveTag(new MemorySegment[] {arena.allocate(8), arena.allocate(8)}, 2, -1L);
            assertFalse(w.poll(tagRecv));
            assertFalse(w.poll(iovRecv));
            assertEquals(2, w.inFlightCount());
            w.close();
            assertThrows(IllegalStateException.class, () -> w.poll(tagRecv));
        }
    }

    @Test
    void shouldReportAContextThatBecameUnreachableWithoutClose() throws InterruptedException {
        // A child cannot leak on its own: its parent's list of children keeps it reachable until the parent closes.
        // So the leak is a top-level context dropped unclosed. Its native UCX context really leaks (the reporter
        // never frees, as UCX objects must be destroyed in order and on the right thread); acceptable in a test JVM.
        int leaks = UcxHandle.leaksReported();
        WeakReference<UcpContext> dropped = dropAContext();
        assertEquals(liveBefore + 1, UcxHandle.liveHandles());
        Await.until(() -> "the dropped context reported (collected: " + (dropped.get() == null) + ")",
                Duration.ofSeconds(20), LifecycleTest::collect,
                () -> dropped.get() == null && UcxHandle.liveHandles() == liveBefore);
        assertTrue(UcxHandle.leaksReported() >= leaks + 1, "collected, counted as no longer live, not reported");
    }

    @Test
    void shouldReportAContextWithAWorkerAndEndpointDroppedWithoutClose() throws InterruptedException {
        // The worker's upcall stubs are GC roots until its arena closes; they must not keep the worker alive, or a
        // forgotten worker (the common leak) could never be reported.
        int leaks = UcxHandle.leaksReported();
        WeakReference<UcpWorker> dropped = dropAContextWithAWorker();
        assertEquals(liveBefore + 3, UcxHandle.liveHandles());
        Await.until(() -> "the dropped worker reported (collected: " + (dropped.get() == null) + ")",
                Duration.ofSeconds(20), LifecycleTest::collect,
                () -> dropped.get() == null && UcxHandle.liveHandles() == liveBefore);
        assertTrue(UcxHandle.leaksReported() >= leaks + 3, "context, worker and endpoint each reported");
    }

    private static WeakReference<UcpWorker> dropAContextWithAWorker() {
        UcpContext leaked = newContext();
        UcpWorker worker = leaked.newWorker();
        UcpEndpoint ep = worker.connect(worker.address());
        assertNotNull(ep.toString());
        return new WeakReference<>(worker);
    }

    private static WeakReference<UcpContext> dropAContext() {
        UcpContext leaked = newContext();
        assertNotNull(leaked.features());
        return new WeakReference<>(leaked);
    }

    /** A garbage collection, then a pause for the cleaner thread to run. */
    private static void collect() {
        System.gc();
        for (int i = 0; i < 50; i++) {
            Await.pause();
        }
    }
}
