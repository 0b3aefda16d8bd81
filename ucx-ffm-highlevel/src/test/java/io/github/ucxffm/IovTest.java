package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.TestSupport.assertBytes;
import static io.github.ucxffm.TestSupport.awaitBoth;
import static io.github.ucxffm.TestSupport.concat;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Scatter-gather (IOV) tag and stream operations between two workers of one context. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IovTest extends TwoWorkerTest {

    IovTest() {
        super(true, UcpContext.Feature.TAG, UcpContext.Feature.STREAM);
    }

    /** Segment sizes of the lists used: small eager, with an empty entry, and over 1 MiB in total (rendezvous). */
    private static final long[][] SHAPES = {
        {1},
        {3, 0, 5, 8},
        {4096, 1, 65536, 17},
        {700_000, 3, 600_000},
        {1 << 20, 1 << 20, 12345},
    };

    private MemorySegment[] segments(long[] sizes, int seed) {
        MemorySegment[] iov = new MemorySegment[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            iov[i] = BytePattern.allocate(arena, sizes[i], seed + i * 13);
        }
        return iov;
    }

    private MemorySegment[] empty(long[] sizes) {
        MemorySegment[] iov = new MemorySegment[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            iov[i] = arena.allocate(Math.max(1, sizes[i])).asSlice(0, sizes[i]);
            iov[i].fill((byte) 0x5A);
        }
        return iov;
    }

    private static long total(long[] sizes) {
        long t = 0;
        for (long s : sizes) {
            t += s;
        }
        return t;
    }

    @Test
    void shouldGatherAnIovTagSendIntoOneContiguousReceive() {
        int shape = 0;
        for (long[] sizes : SHAPES) {
            MemorySegment[] iov = segments(sizes, shape);
            long n = total(sizes);
            MemorySegment dst = arena.allocate(n + 64);
            dst.fill((byte) 0x5A);
            long tag = 0x10_0000L + shape;
            long recv = b.receiveTag(dst, 0, n + 64, tag, -1L);
            long send = ab.sendTag(iov, tag);
            awaitBoth(a, send, b, recv);
            assertEquals(tag, b.receivedTag());
            assertEquals(n, b.receivedLength(), "length, shape " + shape);
            assertBytes(concat(iov), dst.asSlice(0, n), "shape " + shape);
            for (long i = n; i < n + 64; i++) {
                assertEquals((byte) 0x5A, dst.get(JAVA_BYTE, i), "written past the message at " + i);
            }
            shape++;
        }
    }

    @Test
    void shouldScatterAContiguousTagSendOverAnIovReceive() {
        int shape = 0;
        for (long[] sizes : SHAPES) {
            long n = total(sizes);
            MemorySegment src = BytePattern.allocate(arena, n, 100 + shape);
            MemorySegment[] iov = empty(sizes);
            long tag = 0x20_0000L + shape;
            long recv = b.receiveTag(iov, tag, -1L);
            long send = ab.sendTag(src, 0, n, tag);
            awaitBoth(a, send, b, recv);
            assertEquals(tag, b.receivedTag());
            assertEquals(n, b.receivedLength());
            long at = 0;
            for (int i = 0; i < iov.length; i++) {
                assertBytes(src.asSlice(at, sizes[i]).toArray(JAVA_BYTE), iov[i], "shape " + shape + " segment " + i);
                at += sizes[i];
            }
            shape++;
        }
    }

    @Test
    void shouldMoveIovToIovWithDifferentSplits() {
        long[] sendSizes = {5, 300_000, 1, 900_000};
        long[] recvSizes = {600_000, 600_000, 6};
        MemorySegment[] src = segments(sendSizes, 7);
        MemorySegment[] dst = empty(recvSizes);
        long recv = b.receiveTag(dst, 77, -1L);
        long send = ab.sendTag(src, 77);
        awaitBoth(a, send, b, recv);
        assertEquals(total(sendSizes), b.receivedLength());
        assertBytes(concat(src), MemorySegment.ofArray(concat(dst)), "iov to iov");
    }

    @Test
    void shouldReceiveAPartlyFilledIovAndReportTheLength() {
        MemorySegment src = BytePattern.allocate(arena, 10, 9);
        MemorySegment[] dst = empty(new long[] {4, 4, 4, 4});
        long recv = b.receiveTag(dst, 5, -1L);
        long send = ab.sendTag(src, 0, 10, 5);
        awaitBoth(a, send, b, recv);
        assertEquals(10, b.receivedLength());
        assertBytes(src.asSlice(0, 4).toArray(JAVA_BYTE), dst[0], "first");
        assertBytes(src.asSlice(4, 4).toArray(JAVA_BYTE), dst[1], "second");
        assertBytes(new byte[] {src.get(JAVA_BYTE, 8), src.get(JAVA_BYTE, 9), 0x5A, 0x5A}, dst[2], "third");
        assertBytes(new byte[] {0x5A, 0x5A, 0x5A, 0x5A}, dst[3], "untouched");
    }

    @Test
    void shouldFailAnIovReceiveShorterThanTheMessage() {
        MemorySegment src = BytePattern.allocate(arena, 64, 1);
        MemorySegment[] dst = empty(new long[] {16, 16});
        long recv = b.receiveTag(dst, 3, -1L);
        long send = ab.sendTag(src, 0, 64, 3);
        assertThrows(UcxTruncatedException.class, () -> awaitBoth(a, send, b, recv));
    }

    @Test
    void shouldMoveIovStreamsBothWays() {
        int shape = 0;
        for (long[] sizes : SHAPES) {
            long n = total(sizes);
            // gathered send, contiguous receive
            MemorySegment[] iov = segments(sizes, 40 + shape);
            MemorySegment dst = arena.allocate(n);
            long recv = ba.receiveStream(dst, 0, n, true);
            long send = ab.sendStream(iov);
            awaitBoth(a, send, b, recv);
            assertEquals(n, b.receivedLength());
            assertBytes(concat(iov), dst, "stream gather, shape " + shape);
            // contiguous send, scattered receive, the other direction
            MemorySegment src = BytePattern.allocate(arena, n, 80 + shape);
            MemorySegment[] scattered = empty(sizes);
            long recv2 = ab.receiveStream(scattered, true);
            long send2 = ba.sendStream(src, 0, n);
            awaitBoth(b, send2, a, recv2);
            assertEquals(n, a.receivedLength());
            assertBytes(src.toArray(JAVA_BYTE), MemorySegment.ofArray(concat(scattered)),
                    "stream scatter, shape " + shape);
            shape++;
        }
    }

    @Test
    void shouldUseTheSegmentsGivenAtPostTimeEvenIfTheArrayChangesLater() {
        MemorySegment first = arena.allocate(8);
        MemorySegment second = arena.allocate(8);
        MemorySegment[] iov = {first, second};
        long recv = b.receiveTag(iov, 9, -1L);
        MemorySegment decoy = arena.allocate(16);
        iov[0] = decoy;
        iov[1] = decoy;
        System.gc();
        MemorySegment src = BytePattern.allocate(arena, 16, 3);
        long send = ab.sendTag(src, 0, 16, 9);
        awaitBoth(a, send, b, recv);
        assertBytes(src.asSlice(0, 8).toArray(JAVA_BYTE), first, "first");
        assertBytes(src.asSlice(8, 8).toArray(JAVA_BYTE), second, "second");
        assertBytes(new byte[16], decoy, "decoy untouched");
    }

    @Test
    void shouldRecycleOperationSlotsAcrossManyIovOperations() {
        MemorySegment[] src = segments(new long[] {3, 5, 7}, 2);
        MemorySegment[] dst = empty(new long[] {7, 5, 3});
        for (int i = 0; i < 2000; i++) {
            long recv = b.receiveTag(dst, i, -1L);
            long send = ab.sendTag(src, i);
            awaitBoth(a, send, b, recv);
        }
        assertBytes(concat(src), MemorySegment.ofArray(concat(dst)), "last round");
        assertEquals(0, a.inFlightCount());
        assertEquals(0, b.inFlightCount());
    }

    @Test
    void shouldRefuseBadScatterGatherLists() {
        MemorySegment ok = arena.allocate(8);
        assertThrows(IllegalArgumentException.class, () -> ab.sendTag(new MemorySegment[0], 1));
        assertThrows(IllegalArgumentException.class,
                () -> ab.sendTag(new MemorySegment[] {ok, MemorySegment.ofArray(new byte[8])}, 1));
        assertThrows(NullPointerException.class, () -> ab.sendTag(new MemorySegment[] {ok, null}, 1));
        assertThrows(NullPointerException.class, () -> b.receiveTag((MemorySegment[]) null, 1, -1L));
        assertThrows(IllegalArgumentException.class, () -> ba.receiveStream(new MemorySegment[0], false));
        assertThrows(IllegalArgumentException.class,
                () -> ab.sendStream(new MemorySegment[] {MemorySegment.ofArray(new byte[1])}));
        assertEquals(0, a.inFlightCount());
        assertEquals(0, b.inFlightCount());
        // nothing was sent by the refused calls
        MemorySegment dst = arena.allocate(8);
        TestSupport.progressFor(100, a, b);
        assertEquals(0, b.probeTag(1, -1L, false));
        long recv = b.receiveTag(dst, 0, 8, 2, -1L);
        long send = ab.sendTag(new MemorySegment[] {ok}, 2);
        awaitBoth(a, send, b, recv);
    }

    @Test
    void shouldReleaseAnIovReceiveStillInFlightWhenTheWorkerCloses() {
        MemorySegment[] dst = empty(new long[] {8, 8});
        long recv = b.receiveTag(dst, 99, -1L);
        assertFalse(b.poll(recv));
        assertEquals(1, b.inFlightCount());
        b.close();
        assertTrue(b.isClosed());
        assertThrows(IllegalStateException.class, () -> b.poll(recv));
    }
}
