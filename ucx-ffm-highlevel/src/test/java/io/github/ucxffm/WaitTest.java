package io.github.ucxffm;

import io.github.ucxffm.testsupport.Await;
import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.github.ucxffm.TestSupport.assertBytes;
import static io.github.ucxffm.TestSupport.threadCpuNanos;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Event-driven waiting ({@link UcpContext.Feature#WAKEUP}): a worker asleep in {@code BLOCK} mode is woken by traffic
 * and by {@link UcpWorker#signal()}, times out when nothing comes, and uses no CPU while it sleeps.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WaitTest {

    private static final long TAG = 0x3A17;

    private UcpContext context;
    private UcpWorker b;
    private Arena arena;

    @BeforeEach
    void setUp() {
        context = UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.WAKEUP).build();
        b = context.newWorker();
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() {
        context.close();
        arena.close();
    }

    /**
     * A sender on its own platform thread, with its own SINGLE worker (created there, so confined there): connects
     * to b, waits, sends one message, and keeps its worker open until told to close it.
     */
    private final class Sender implements AutoCloseable {
        final CountDownLatch release = new CountDownLatch(1);
        final CompletableFuture<Long> sentAt = new CompletableFuture<>();
        final CompletableFuture<Void> closed = new CompletableFuture<>();
        final MemorySegment payload;

        Sender(byte[] peer, long delayMillis, MemorySegment payload) {
            this.payload = payload;
            Thread t = new Thread(() -> {
                try {
                    UcpWorker a = context.newWorker();
                    try {
                        UcpEndpoint ep = a.connect(peer);
                        Thread.sleep(delayMillis);
                        long send = ep.sendTag(payload, 0, payload.byteSize(), TAG);
                        sentAt.complete(System.nanoTime());
                        a.await(send, Duration.ofSeconds(20), UcpWorker.Idle.YIELD);
                        while (!release.await(1, TimeUnit.MILLISECONDS)) {
                            a.progress(); // the peer may still need our side for its part of the protocol
                        }
                    } finally {
                        a.close();
                    }
                    closed.complete(null);
                } catch (Throwable e) {
                    sentAt.completeExceptionally(e);
                    closed.completeExceptionally(e);
                }
            }, "sender");
            t.setDaemon(true);
            t.start();
        }

        /** Lets the sender close its worker; b is progressed meanwhile, since closing an endpoint flushes. */
        @Override
        public void close() {
            release.countDown();
            try {
                TestSupport.progressUntil(closed::isDone, 20_000, b);
            } finally {
                closed.join();
            }
        }
    }

    @Test
    void shouldWakeABlockedAwaitWhenAMessageArrivesFromAnotherThread() {
        MemorySegment src = BytePattern.allocate(arena, 200, 1);
        MemorySegment dst = arena.allocate(200);
        long recv = b.receiveTag(dst, 0, 200, TAG, -1L);
        long start = System.nanoTime();
        try (Sender sender = new Sender(b.address(), 300, src)) {
            b.await(recv, Duration.ofSeconds(20), UcpWorker.Idle.BLOCK);
            long done = System.nanoTime();
            assertTrue(done - start >= TimeUnit.MILLISECONDS.toNanos(250), "await returned before the send");
            assertTrue(done >= sender.sentAt.join(), "await returned before the send");
            assertEquals(200, b.receivedLength());
            assertBytes(src.toArray(JAVA_BYTE), dst, "message");
        }
    }

    @Test
    void shouldNotBurnACoreWhileBlocked() {
        // the measurement itself: spinning shows up as CPU time (100 ms of it within 10 s, however loaded the
        // machine; a clock that does not count would time out here)
        long cpu0 = threadCpuNanos();
        try {
            b.awaitCondition(() -> threadCpuNanos() - cpu0 >= TimeUnit.MILLISECONDS.toNanos(100),
                    Duration.ofSeconds(10), UcpWorker.Idle.SPIN);
        } catch (UcxTimeoutException e) {
            fail("spinning for 10 s used only " + (threadCpuNanos() - cpu0) / 1_000_000
                    + " ms of CPU time: CPU time is not measured");
        }

        MemorySegment src = BytePattern.allocate(arena, 64, 2);
        MemorySegment dst = arena.allocate(64);
        long recv = b.receiveTag(dst, 0, 64, TAG, -1L);
        try (Sender sender = new Sender(b.address(), 1000, src)) {
            long cpu1 = threadCpuNanos();
            long wall1 = System.nanoTime();
            b.await(recv, Duration.ofSeconds(20), UcpWorker.Idle.BLOCK);
            long woke = System.nanoTime();
            long wall = woke - wall1;
            long cpu = threadCpuNanos() - cpu1;
            assertTrue(woke >= sender.sentAt.join(), "await returned before the send");
            assertTrue(wall >= TimeUnit.MILLISECONDS.toNanos(900), "woke after only " + wall / 1_000_000 + " ms");
            assertTrue(cpu < wall * 0.3, "blocked waiting used " + cpu / 1_000_000 + " ms of CPU in "
                    + wall / 1_000_000 + " ms");
            assertBytes(src.toArray(JAVA_BYTE), dst, "message");
        }
    }

    @Test
    void shouldWakeWaitForEventsWhenAnotherThreadSignals() throws Exception {
        AtomicBoolean signalled = new AtomicBoolean();
        long start = System.nanoTime();
        CompletableFuture<Void> signaller = CompletableFuture.runAsync(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            signalled.set(true);
            b.signal(); // the one method another thread may call on a SINGLE worker
        });
        // an event other than the signal would only make another round; the signal must end the loop
        while (!signalled.get()) {
            if (b.arm()) {
                b.waitForEvents();
            } else {
                b.progress();
            }
        }
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250));
        signaller.get(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldReportPendingEventsWhenArming() {
        // a signal is an event: arm() reports it (and consumes it), the next arm() succeeds
        armWhenIdle();
        b.signal();
        assertFalse(b.arm(), "arm() succeeded with a signal pending");
        armWhenIdle();

        // a message that arrived and was not progressed is work too
        UcpWorker a = context.newWorker();
        UcpEndpoint ab = a.connect(b.address());
        MemorySegment src = BytePattern.allocate(arena, 32, 3);
        MemorySegment dst = arena.allocate(32);
        long recv = b.receiveTag(dst, 0, 32, TAG, -1L);
        long send = ab.sendTag(src, 0, 32, TAG);
        TestSupport.awaitBoth(a, send, b, recv); // wire-up done, both sides quiet
        TestSupport.progressFor(100, a, b);
        long recv2 = b.receiveTag(dst, 0, 32, TAG + 1, -1L);
        long send2 = ab.sendTag(src, 0, 32, TAG + 1);
        a.await(send2, Duration.ofSeconds(10), UcpWorker.Idle.SPIN); // b has not progressed since arming
        boolean armed = b.arm();
        assertFalse(armed, "arm() succeeded with a message waiting");
        b.await(recv2, Duration.ofSeconds(10), UcpWorker.Idle.BLOCK);
        assertBytes(src.toArray(JAVA_BYTE), dst, "second message");
    }

    private void armWhenIdle() {
        Await.until("b armed", Duration.ofSeconds(10), b::progress, b::arm);
    }

    @ParameterizedTest
    @EnumSource(UcpWorker.Idle.class)
    void shouldTimeOutAnAwaitThatCannotComplete(UcpWorker.Idle idle) {
        MemorySegment dst = arena.allocate(8);
        long recv = b.receiveTag(dst, 0, 8, TAG, -1L);
        long start = System.nanoTime();
        UcxTimeoutException e = assertThrows(UcxTimeoutException.class,
                () -> b.await(recv, Duration.ofMillis(300), idle));
        long waited = System.nanoTime() - start;
        assertEquals(UcsStatus.ERR_TIMED_OUT, e.status());
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(290), "gave up after " + waited / 1_000_000 + " ms");
        assertTrue(waited < TimeUnit.SECONDS.toNanos(5), "gave up only after " + waited / 1_000_000 + " ms");
        // the request is still valid: cancel it, and the next poll reports the cancellation
        b.cancel(recv);
        assertThrows(UcxCanceledException.class, () -> b.await(recv, Duration.ofSeconds(5), idle));
        assertEquals(0, b.inFlightCount());
    }

    @Test
    void shouldRefuseEventWaitingWithoutTheWakeupFeature() {
        try (UcpContext plain = UcpContext.builder().features(UcpContext.Feature.TAG).build()) {
            UcpWorker w = plain.newWorker();
            assertThrows(IllegalStateException.class, w::arm);
            assertThrows(IllegalStateException.class, w::eventFd);
            assertThrows(IllegalStateException.class, w::signal);
            assertThrows(IllegalStateException.class, w::waitForEvents);
        }
    }

    /** Progresses until arm() finds nothing, then sleeps once; returns the nanoseconds slept. */
    private long armAndWaitOnce(int timeoutMillis) {
        for (int i = 0; i < 1000; i++) {
            while (b.progress() != 0) {
                Thread.onSpinWait();
            }
            long start = System.nanoTime();
            if (b.armAndWait(timeoutMillis)) {
                return System.nanoTime() - start;
            }
        }
        throw new AssertionError("arm() never found the worker idle");
    }

    @Test
    void shouldSleepInArmAndWaitUntilTheTimeout() {
        long slept = armAndWaitOnce(200);
        assertTrue(slept >= TimeUnit.MILLISECONDS.toNanos(150), "slept only " + slept / 1_000_000 + " ms");
        assertThrows(IllegalArgumentException.class, () -> b.armAndWait(-1));
    }

    @Test
    void shouldWakeArmAndWaitOnSignalFromAnotherThread() throws Exception {
        AtomicBoolean awake = new AtomicBoolean();
        Thread signaller = Thread.ofPlatform().start(() -> {
            // Again and again: a signal that comes before the sleep is taken by arm(), which then says busy.
            while (!awake.get()) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
                b.signal();
            }
        });
        long slept = armAndWaitOnce(20_000);
        awake.set(true);
        signaller.join();
        assertTrue(slept < TimeUnit.SECONDS.toNanos(10), "a signal must end the sleep; slept " + slept / 1_000_000
                + " ms");
    }
}
