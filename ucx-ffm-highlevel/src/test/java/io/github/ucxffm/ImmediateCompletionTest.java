package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.TestSupport.assertBytes;
import static io.github.ucxffm.TestSupport.progressFor;
import static io.github.ucxffm.TestSupport.progressUntil;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Operations that complete when they are started. A receive of a message that had already arrived completes at once too,
 * but its token still carries the message's tag and length to {@link UcpWorker#poll(long)}, so that what
 * {@code receivedTag()}/{@code receivedLength()} report always belongs to the receive just polled.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ImmediateCompletionTest extends TwoWorkerTest {

    ImmediateCompletionTest() {
        super(false, UcpContext.Feature.TAG, UcpContext.Feature.STREAM);
    }

    /** Sends a tag message and progresses until it waits at b, unexpected. */
    private MemorySegment arrive(long size, long tag, int seed) {
        MemorySegment src = BytePattern.allocate(arena, size, seed);
        long send = ab.sendTag(src, 0, size, tag); // COMPLETED once the endpoint is wired up; not the first time
        progressUntil(() -> b.probeTag(tag, -1L, false) != 0, 10_000, a, b);
        progressUntil(() -> a.poll(send), 10_000, a, b);
        return src;
    }

    @Test
    void shouldHandEachArrivedMessagesTagAndLengthToItsOwnPoll() {
        MemorySegment first = arrive(10, 0x51, 1);
        MemorySegment second = arrive(20, 0x52, 2);
        MemorySegment d1 = arena.allocate(64);
        MemorySegment d2 = arena.allocate(64);
        // both complete when posted; polled afterwards, in order, each poll reports its own message
        long r1 = b.receiveTag(d1, 0, 64, 0, 0);
        long r2 = b.receiveTag(d2, 0, 64, 0, 0);
        assertNotEquals(UcpWorker.COMPLETED, r1);
        assertNotEquals(UcpWorker.COMPLETED, r2);
        assertNotEquals(r1, r2);
        assertEquals(2, b.inFlightCount(), "results waiting for poll count as in flight");
        assertTrue(b.poll(r1));
        assertEquals(0x51, b.receivedTag());
        assertEquals(10, b.receivedLength());
        assertTrue(b.poll(r2));
        assertEquals(0x52, b.receivedTag());
        assertEquals(20, b.receivedLength());
        assertBytes(first.toArray(JAVA_BYTE), d1.asSlice(0, 10), "first");
        assertBytes(second.toArray(JAVA_BYTE), d2.asSlice(0, 20), "second");
        assertEquals(0, b.inFlightCount());
    }

    @Test
    void shouldRefuseATokenPolledTwiceEvenAfterItsSlotWasReused() {
        arrive(8, 7, 3);
        long r1 = b.receiveTag(arena.allocate(8), 0, 8, 7, -1L);
        assertTrue(b.poll(r1));
        assertThrows(IllegalStateException.class, () -> b.poll(r1));
        arrive(8, 7, 4);
        long r2 = b.receiveTag(arena.allocate(8), 0, 8, 7, -1L); // likely the same pending slot as r1
        assertNotEquals(r1, r2);
        assertThrows(IllegalStateException.class, () -> b.poll(r1), "a stale token must not read r2's result");
        assertTrue(b.poll(r2));
        assertThrows(IllegalStateException.class, () -> b.poll(r2 ^ 0x100L), "a made-up token");
    }

    @Test
    void shouldRefuseAStaleTokenOfAnOperationThatWasInFlight() {
        // posted before the message arrives: a UCX request in flight, polled through its pending slot
        MemorySegment d1 = arena.allocate(8);
        long r1 = b.receiveTag(d1, 0, 8, 9, -1L);
        assertNotEquals(UcpWorker.COMPLETED, r1);
        assertEquals(0, r1 & 1L, "a receive in flight has an even token");
        assertEquals(1, b.inFlightCount());
        assertTrue(!b.poll(r1), "nothing sent yet");
        MemorySegment src = BytePattern.allocate(arena, 8, 5);
        long send = ab.sendTag(src, 0, 8, 9);
        progressUntil(() -> b.poll(r1), 10_000, a, b);
        progressUntil(() -> a.poll(send), 10_000, a, b);
        assertEquals(9, b.receivedTag());
        assertBytes(src.toArray(JAVA_BYTE), d1, "received");
        assertEquals(0, b.inFlightCount());
        assertThrows(IllegalStateException.class, () -> b.poll(r1));
        b.cancel(r1); // a token polled to completion: ignored
        // the next receive in flight most likely takes the same slot: the old token must not reach it
        long r2 = b.receiveTag(arena.allocate(8), 0, 8, 10, -1L);
        assertNotEquals(r1, r2);
        assertThrows(IllegalStateException.class, () -> b.poll(r1), "a stale token must not poll r2");
        b.cancel(r1);
        assertTrue(!b.poll(r2), "cancelling the stale token left r2 alone");
        b.cancel(r2);
        assertThrows(UcxCanceledException.class, () -> progressUntil(() -> b.poll(r2), 10_000, a, b));
        assertEquals(0, b.inFlightCount());
    }

    @Test
    void shouldReportTruncationOfAnArrivedMessageOnPoll() {
        arrive(100, 9, 5);
        long r = b.receiveTag(arena.allocate(10), 0, 10, 9, -1L);
        b.cancel(r); // already complete: nothing to cancel, and no crash on a token that is not a request
        UcxException e = assertThrows(UcxException.class, () -> b.poll(r));
        assertTrue(e instanceof UcxTruncatedException, "got " + e);
        assertEquals(0, b.inFlightCount());
        assertEquals(0, b.probeTag(9, -1L, false), "the truncated message was consumed");
    }

    @Test
    void shouldPostAReceiveWhenNothingHasArrivedAndCompleteItLater() {
        MemorySegment dst = arena.allocate(32);
        long r = b.receiveTag(dst, 0, 32, 0x77, -1L);
        assertEquals(0, r & 1L, "nothing had arrived: the token is a UCX request");
        MemorySegment src = BytePattern.allocate(arena, 32, 6);
        ab.sendTag(src, 0, 32, 0x77);
        progressUntil(() -> b.poll(r), 10_000, a, b);
        assertEquals(0x77, b.receivedTag());
        assertEquals(32, b.receivedLength());
        assertBytes(src.toArray(JAVA_BYTE), dst, "posted receive");
    }

    @Test
    void shouldHandTheLengthOfArrivedStreamBytesToItsOwnPoll() {
        ba = b.connect(a.address());
        MemorySegment first = BytePattern.allocate(arena, 12, 7);
        MemorySegment second = BytePattern.allocate(arena, 5, 8);
        MemorySegment d1 = arena.allocate(64);
        MemorySegment d2 = arena.allocate(64);
        long s1 = ab.sendStream(first, 0, 12);
        progressFor(200, a, b);
        assertTrue(a.poll(s1));
        long r1 = ba.receiveStream(d1, 0, 64, false);
        assertEquals(1, r1 & 1L, "12 bytes had arrived: the receive should complete at once");
        long s2 = ab.sendStream(second, 0, 5);
        progressFor(200, a, b);
        assertTrue(a.poll(s2));
        long r2 = ba.receiveStream(d2, 0, 64, false);
        assertEquals(1, r2 & 1L, "5 bytes had arrived: the receive should complete at once");
        assertTrue(b.poll(r1));
        assertEquals(12, b.receivedLength(), "the first receive's length, not the later one's");
        assertTrue(b.poll(r2));
        assertEquals(5, b.receivedLength());
        assertBytes(first.toArray(JAVA_BYTE), d1.asSlice(0, 12), "first");
        assertBytes(second.toArray(JAVA_BYTE), d2.asSlice(0, 5), "second");
    }

    @Test
    void shouldRefuseABufferWhoseArenaIsClosedBeforeUcxSeesIt() {
        Arena gone = Arena.ofConfined();
        MemorySegment buffer = gone.allocate(64);
        gone.close();
        assertThrows(IllegalStateException.class, () -> ab.sendTag(buffer, 0, 64, 1));
        assertThrows(IllegalStateException.class, () -> b.receiveTag(buffer, 0, 64, 1, -1L));
        assertEquals(0, a.inFlightCount());
        assertEquals(0, b.inFlightCount());
    }
}
