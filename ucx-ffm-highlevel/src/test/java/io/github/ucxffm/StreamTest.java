package io.github.ucxffm;

import io.github.ucxffm.testsupport.Await;
import io.github.ucxffm.testsupport.BytePattern;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.TestSupport.assertBytes;
import static io.github.ucxffm.TestSupport.awaitBoth;
import static io.github.ucxffm.TestSupport.progressFor;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ordered byte streams between two workers of one context. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StreamTest extends TwoWorkerTest {

    StreamTest() {
        super(true, UcpContext.Feature.STREAM);
    }

    /** Sends on a→b, collecting every byte b receives without waitAll until {@code expected} bytes arrived. */
    private byte[] receiveAllPiecewise(long expected, long capacity, long sendToken) {
        MemorySegment dst = arena.allocate(capacity);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        boolean[] sent = {false};
        long start = System.nanoTime();
        while (got.size() < expected) {
            long recv = ba.receiveStream(dst, 0, capacity, false);
            // 30 s for the whole stream, not for each receive
            Await.until(() -> "stream receive complete (" + got.size() + " bytes so far)",
                    Duration.ofSeconds(30).minusNanos(System.nanoTime() - start), () -> {
                        TestSupport.progress(a, b);
                        sent[0] = sent[0] || a.poll(sendToken);
                    }, () -> b.poll(recv));
            long n = b.receivedLength();
            assertTrue(n > 0 && n <= capacity, "received length " + n);
            got.write(dst.asSlice(0, n).toArray(JAVA_BYTE), 0, (int) n);
        }
        TestSupport.progressUntil(() -> sent[0] || a.poll(sendToken), 30_000, a, b);
        return got.toByteArray();
    }

    @Test
    void shouldCompleteAReceiveWithoutWaitAllWithWhateverArrived() {
        MemorySegment src = BytePattern.allocate(arena, 100, 1);
        MemorySegment dst = arena.allocate(1000);
        long recv = ba.receiveStream(dst, 0, 1000, false);
        long send = ab.sendStream(src, 0, 100);
        awaitBoth(a, send, b, recv);
        long n = b.receivedLength();
        assertTrue(n > 0 && n <= 100, "received " + n);
        byte[] rest = n < 100 ? receiveAllPiecewise(100 - n, 1000, UcpWorker.COMPLETED) : new byte[0];
        byte[] all = new byte[100];
        MemorySegment.copy(dst, JAVA_BYTE, 0, all, 0, (int) n);
        System.arraycopy(rest, 0, all, (int) n, rest.length);
        assertArrayEquals(src.toArray(JAVA_BYTE), all);
    }

    @Test
    void shouldCompleteAWaitAllReceiveOnlyWhenFull() {
        MemorySegment first = BytePattern.allocate(arena, 100, 2);
        MemorySegment second = BytePattern.allocate(arena, 200, 3);
        MemorySegment dst = arena.allocate(300);
        long recv = ba.receiveStream(dst, 0, 300, true);
        long send1 = ab.sendStream(first, 0, 100);
        awaitBothOrIncomplete(send1);
        progressFor(200, a, b);
        assertFalse(b.poll(recv), "a waitAll receive of 300 bytes completed with 100 sent");
        long send2 = ab.sendStream(second, 0, 200);
        awaitBoth(a, send2, b, recv);
        assertEquals(300, b.receivedLength());
        assertBytes(TestSupport.concat(first, second), dst, "both sends, in order");
    }

    private void awaitBothOrIncomplete(long send) {
        Await.until("send complete", Duration.ofSeconds(10), () -> TestSupport.progress(a, b), () -> a.poll(send));
    }

    @Test
    void shouldKeepTheOrderOfSeveralSends() {
        int count = 20;
        MemorySegment[] parts = new MemorySegment[count];
        long[] tokens = new long[count];
        long total = 0;
        for (int i = 0; i < count; i++) {
            parts[i] = BytePattern.allocate(arena, 1 + i * 997L, i);
            total += parts[i].byteSize();
        }
        for (int i = 0; i < count; i++) {
            tokens[i] = ab.sendStream(parts[i], 0, parts[i].byteSize());
        }
        MemorySegment dst = arena.allocate(total);
        long recv = ba.receiveStream(dst, 0, total, true);
        boolean[] done = new boolean[count];
        int[] remaining = {count};
        Await.until(() -> remaining[0] + " sends and the receive complete", Duration.ofSeconds(20), () -> {
            TestSupport.progress(a, b);
            for (int i = 0; i < count; i++) {
                if (!done[i] && a.poll(tokens[i])) {
                    done[i] = true;
                    remaining[0]--;
                }
            }
        }, () -> remaining[0] == 0 && b.poll(recv));
        assertEquals(total, b.receivedLength());
        assertBytes(TestSupport.concat(parts), dst, "sends in order");
    }

    @Test
    void shouldMoveFourMebibytesWithWaitAll() {
        int n = 4 << 20;
        MemorySegment src = BytePattern.allocate(arena, n, 5);
        MemorySegment dst = arena.allocate(n);
        long recv = ba.receiveStream(dst, 0, n, true);
        long send = ab.sendStream(src, 0, n);
        awaitBoth(a, send, b, recv);
        assertEquals(n, b.receivedLength());
        assertBytes(src.toArray(JAVA_BYTE), dst, "4 MiB");
    }

    @Test
    void shouldMoveFourMebibytesInPiecesWithoutWaitAll() {
        int n = 4 << 20;
        MemorySegment src = BytePattern.allocate(arena, n, 6);
        long send = ab.sendStream(src, 0, n);
        byte[] got = receiveAllPiecewise(n, 256 * 1024, send);
        assertArrayEquals(src.toArray(JAVA_BYTE), got);
    }

    @Test
    void shouldStreamInBothDirectionsAtOnce() {
        MemorySegment toB = BytePattern.allocate(arena, 70_000, 7);
        MemorySegment toA = BytePattern.allocate(arena, 50_000, 8);
        MemorySegment atB = arena.allocate(70_000);
        MemorySegment atA = arena.allocate(50_000);
        long rb = ba.receiveStream(atB, 0, 70_000, true);
        long ra = ab.receiveStream(atA, 0, 50_000, true);
        long sa = ab.sendStream(toB, 0, 70_000);
        long sb = ba.sendStream(toA, 0, 50_000);
        awaitBoth(a, sa, b, sb);
        awaitBoth(a, ra, b, rb);
        assertBytes(toB.toArray(JAVA_BYTE), atB, "a to b");
        assertBytes(toA.toArray(JAVA_BYTE), atA, "b to a");
    }
}
