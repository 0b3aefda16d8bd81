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
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.TestSupport.assertBytes;
import static io.github.ucxffm.TestSupport.progressFor;
import static io.github.ucxffm.TestSupport.progressUntil;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The thread rules of workers: SINGLE confinement, SERIALIZED hand-over, MULTI concurrency, signal from anywhere. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThreadModeTest {

    private UcpContext context;
    private Arena arena;
    private ExecutorService other;

    @BeforeEach
    void setUp() {
        context = UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.STREAM,
                UcpContext.Feature.WAKEUP).build();
        arena = Arena.ofShared();
        other = Executors.newFixedThreadPool(2);
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        other.shutdownNow();
        assertTrue(other.awaitTermination(10, TimeUnit.SECONDS));
        context.close();
        arena.close();
    }

    /** Runs each call on another thread; returns what it threw (or null), by name. */
    private Map<String, Throwable> onOtherThread(Map<String, Executable> calls) throws Exception {
        Map<String, Throwable> thrown = new LinkedHashMap<>();
        other.submit(() -> {
            for (Map.Entry<String, Executable> c : calls.entrySet()) {
                try {
                    c.getValue().execute();
                    thrown.put(c.getKey(), null);
                } catch (Throwable t) {
                    thrown.put(c.getKey(), t);
                }
            }
        }).get(20, TimeUnit.SECONDS);
        return thrown;
    }

    @Test
    void shouldRefuseASingleWorkerOnAnotherThreadBeforeAnyNativeCall() throws Exception {
        UcpWorker a = context.newWorker();
        UcpWorker b = context.newWorker();
        UcpEndpoint ab = a.connect(b.address());
        UcpEndpoint ba = b.connect(a.address());
        MemorySegment buf = BytePattern.allocate(arena, 64, 1);
        int live = UcxHandle.liveHandles();
        Map<String, Executable> calls = new LinkedHashMap<>();
        calls.put("progress", a::progress);
        calls.put("address", a::address);
        calls.put("connect", () -> a.connect(b.address()));
        calls.put("listen", () -> a.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        calls.put("receiveTag", () -> b.receiveTag(buf, 0, 64, 0x22, -1L));
        calls.put("receiveTag iov", () -> b.receiveTag(new MemorySegment[] {buf}, 0x22, -1L));
        calls.put("probeTag", () -> b.probeTag(0, 0, true));
        calls.put("worker flush", a::flush);
        calls.put("arm", a::arm);
        calls.put("eventFd", a::eventFd);
        calls.put("sendTag", () -> ab.sendTag(buf, 0, 64, 0x11));
        calls.put("sendTag iov", () -> ab.sendTag(new MemorySegment[] {buf}, 0x11));
        calls.put("sendTagSync", () -> ab.sendTagSync(buf, 0, 64, 0x11));
        calls.put("sendStream", () -> ab.sendStream(buf, 0, 64));
        calls.put("receiveStream", () -> ab.receiveStream(buf, 0, 64, false));
        calls.put("endpoint flush", ab::flush);
        calls.put("endpoint close", ab::close);
        calls.put("worker close", a::close);
        Map<String, Throwable> thrown = onOtherThread(calls);
        for (Map.Entry<String, Throwable> e : thrown.entrySet()) {
            assertInstanceOf(IllegalStateException.class, e.getValue(), e.getKey());
            assertTrue(e.getValue().getMessage().contains("confined"), e.getKey() + ": " + e.getValue().getMessage());
        }
        assertEquals(calls.size(), thrown.size());
        // nothing happened natively: no handle made, no operation started, nothing closed
        assertEquals(live, UcxHandle.liveHandles());
        assertEquals(0, a.inFlightCount());
        assertEquals(0, b.inFlightCount());
        assertFalse(a.isClosed());
        assertFalse(ab.isClosed());
        progressFor(200, a, b);
        assertEquals(0, b.probeTag(0x11, -1L, false), "a refused send reached the peer");
        MemorySegment probe = arena.allocate(64);
        long streamRecv = ba.receiveStream(probe, 0, 64, false);
        progressFor(100, a, b);
        assertFalse(b.poll(streamRecv), "a refused stream send reached the peer");
        // UCX 1.13 cannot cancel a stream receive: it stays in flight until the worker closes and releases it
        // a refused receive was not posted: the message stays unexpected
        long send = ab.sendTag(buf, 0, 64, 0x22);
        progressUntil(() -> b.probeTag(0x22, -1L, false) != 0, 10_000, a, b);
        progressUntil(() -> a.poll(send), 10_000, a, b);
        // the owner still uses everything
        MemorySegment dst = arena.allocate(64);
        long recv = b.receiveTag(dst, 0, 64, 0x22, -1L);
        progressUntil(() -> b.poll(recv), 10_000, a, b);
        assertBytes(buf.toArray(JAVA_BYTE), dst, "owner thread");
    }

    @Test
    void shouldLetASerializedWorkerMoveBetweenThreads() throws Exception {
        UcpWorker s = context.newWorker(UcsThreadMode.SERIALIZED);
        UcpWorker p = context.newWorker();
        byte[] peer = p.address();
        MemorySegment src = BytePattern.allocate(arena, 300_000, 2);
        MemorySegment dst = arena.allocate(300_000);
        long recv = p.receiveTag(dst, 0, 300_000, 0x5E, -1L);
        // another thread connects and starts a gathered send (its IOV array is allocated there) ...
        long send = other.submit(() -> {
            UcpEndpoint ep = s.connect(peer);
            return ep.sendTag(new MemorySegment[] {src.asSlice(0, 2000), src.asSlice(2000)}, 0x5E);
        }).get(20, TimeUnit.SECONDS);
        // ... and this thread, next in turn, completes it (and frees the array)
        boolean[] done = new boolean[2];
        progressUntil(() -> {
            done[0] = done[0] || s.poll(send);
            done[1] = done[1] || p.poll(recv);
            return done[0] && done[1];
        }, 20_000, s, p);
        assertBytes(src.toArray(JAVA_BYTE), dst, "serialized sender");
        assertEquals(0, s.inFlightCount());
        s.close();
    }

    @Test
    void shouldRunAMultiWorkerFromTwoThreadsAtOnce() throws Exception {
        UcpWorker m = context.newWorker(UcsThreadMode.MULTI);
        UcpWorker p = context.newWorker();
        UcpEndpoint mp = m.connect(p.address());
        UcpEndpoint pm = p.connect(m.address());
        int n = 200;
        long upTag = 1L << 32;
        long downTag = 2L << 32;
        List<MemorySegment> up = new ArrayList<>();
        List<MemorySegment> down = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long size = i % 20 == 0 ? 100_000 : 1 + i * 37L; // a few rendezvous transfers among eager ones
            up.add(BytePattern.allocate(arena, size, i));
            down.add(BytePattern.allocate(arena, size, 1000 + i));
        }
        CyclicBarrier start = new CyclicBarrier(2);
        Future<?> sender = other.submit(() -> {
            start.await();
            long[] tokens = new long[n];
            for (int i = 0; i < n; i++) {
                tokens[i] = mp.sendTag(up.get(i), 0, up.get(i).byteSize(), upTag | i);
                m.progress();
            }
            for (int i = 0; i < n; i++) {
                m.await(tokens[i], Duration.ofSeconds(30), UcpWorker.Idle.YIELD);
            }
            return null;
        });
        List<MemorySegment> received = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            received.add(arena.allocate(down.get(i).byteSize()));
        }
        Future<?> receiver = other.submit(() -> {
            start.await();
            long[] tokens = new long[n];
            long[] tags = new long[n];
            long[] lengths = new long[n];
            for (int i = 0; i < n; i++) {
                tokens[i] = m.receiveTag(received.get(i), 0, received.get(i).byteSize(), downTag | i, -1L);
                if (tokens[i] == UcpWorker.COMPLETED) { // matched a message already there: the info is set now
                    tags[i] = m.receivedTag();
                    lengths[i] = m.receivedLength();
                }
                m.progress();
            }
            for (int i = 0; i < n; i++) {
                if (tokens[i] != UcpWorker.COMPLETED) {
                    m.await(tokens[i], Duration.ofSeconds(30), UcpWorker.Idle.YIELD);
                    tags[i] = m.receivedTag();
                    lengths[i] = m.receivedLength();
                }
            }
            // receive information is kept per thread: the sender's activity on the same worker does not disturb it
            for (int i = 0; i < n; i++) {
                assertEquals(downTag | i, tags[i], "tag of receive " + i);
                assertEquals(down.get(i).byteSize(), lengths[i], "length of receive " + i);
            }
            return null;
        });
        // the peer, on this thread: receive what the sender sends, send what the receiver expects
        MemorySegment[] atPeer = new MemorySegment[n];
        long[] recvs = new long[n];
        long[] sends = new long[n];
        for (int i = 0; i < n; i++) {
            atPeer[i] = arena.allocate(up.get(i).byteSize());
            recvs[i] = p.receiveTag(atPeer[i], 0, atPeer[i].byteSize(), upTag | i, -1L);
            sends[i] = pm.sendTag(down.get(i), 0, down.get(i).byteSize(), downTag | i);
        }
        boolean[] done = new boolean[2 * n];
        int[] remaining = {2 * n};
        progressUntil(() -> {
            for (int i = 0; i < n; i++) {
                if (!done[i] && p.poll(recvs[i])) {
                    done[i] = true;
                    remaining[0]--;
                }
                if (!done[n + i] && p.poll(sends[i])) {
                    done[n + i] = true;
                    remaining[0]--;
                }
            }
            return remaining[0] == 0 && sender.isDone() && receiver.isDone();
        }, 40_000, p);
        sender.get();
        receiver.get();
        for (int i = 0; i < n; i++) {
            assertBytes(up.get(i).toArray(JAVA_BYTE), atPeer[i], "up " + i);
            assertBytes(down.get(i).toArray(JAVA_BYTE), received.get(i), "down " + i);
        }
        assertEquals(0, m.inFlightCount());
    }

    @Test
    void shouldAllowSignalFromAnyThread() throws Exception {
        UcpWorker w = context.newWorker();
        Await.until("the worker armed", Duration.ofSeconds(10), w::progress, w::arm);
        Map<String, Executable> calls = new LinkedHashMap<>();
        calls.put("signal", w::signal);
        calls.put("progress", w::progress);
        Map<String, Throwable> thrown = onOtherThread(calls);
        assertEquals(null, thrown.get("signal"), "signal() must be allowed on any thread");
        assertInstanceOf(IllegalStateException.class, thrown.get("progress"));
        // the signal took effect: the worker sees an event, and a wait returns at once
        assertFalse(w.arm(), "the other thread's signal is not pending");
        w.signal();
        long t0 = System.nanoTime();
        w.waitForEvents();
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5));
        // a virtual thread may signal too
        CompletableFuture<Void> v = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                w.signal();
                v.complete(null);
            } catch (Throwable t) {
                v.completeExceptionally(t);
            }
        });
        v.get(10, TimeUnit.SECONDS);
        assertFalse(w.arm(), "the virtual thread's signal is not pending");
    }
}
