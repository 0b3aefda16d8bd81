package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import static io.github.ucxffm.TestSupport.assertBytes;
import static io.github.ucxffm.TestSupport.progressFor;
import static io.github.ucxffm.TestSupport.progressUntil;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The callback and future forms the endpoint's overload rule asks for, of the operations that had only a polled form:
 * synchronous tag sends, stream sends and receives, and flushes. Each checks the data moved, what the completion
 * reports (a send's callback 0, its future the length; a receive's callback and future the received length), and
 * when it arrives.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CompletionFormsTest extends TwoWorkerTest {

    CompletionFormsTest() {
        super(true, UcpContext.Feature.TAG, UcpContext.Feature.STREAM);
    }

    /** Records one completion; fails on a second. */
    private static final class Seen implements UcpCallback {
        int calls;
        int status = 1;
        long length = -1;

        @Override
        public void onComplete(int s, long l, long tag) {
            calls++;
            status = s;
            length = l;
        }

        boolean done() {
            assertTrue(calls <= 1, "called " + calls + " times");
            return calls == 1;
        }
    }

    @Test
    void shouldCallBackASyncTagSendOnlyOnceTheReceiverMatchedIt() {
        MemorySegment src = BytePattern.allocate(arena, 100, 1);
        MemorySegment dst = arena.allocate(100);
        Seen seen = new Seen();
        ab.sendTagSync(src, 0, 100, 5, seen);
        progressFor(200, a, b);
        assertFalse(seen.done(), "a sync send completes only once the peer matched it");
        long recv = b.receiveTag(dst, 0, 100, 5, -1L);
        progressUntil(() -> seen.done() && b.poll(recv), 10_000, a, b);
        assertEquals(0, seen.status);
        assertEquals(0, seen.length, "a send's callback reports length 0");
        assertBytes(src.toArray(JAVA_BYTE), dst, "synchronous tag send");
    }

    @Test
    void shouldCompleteASyncTagSendFutureWithItsLengthOnceMatched() throws Exception {
        MemorySegment src = BytePattern.allocate(arena, 100, 2);
        MemorySegment dst = arena.allocate(100);
        CompletableFuture<Long> sent = ab.sendTagSyncAsync(src, 0, 100, 6);
        progressFor(200, a, b);
        assertFalse(sent.isDone(), "a sync send completes only once the peer matched it");
        long recv = b.receiveTag(dst, 0, 100, 6, -1L);
        progressUntil(() -> sent.isDone() && b.poll(recv), 10_000, a, b);
        assertEquals(100L, sent.get());
        assertBytes(src.toArray(JAVA_BYTE), dst, "synchronous tag send");
    }

    @Test
    void shouldMoveStreamBytesWithCallbacksAndReportTheReceivedLength() {
        MemorySegment src = BytePattern.allocate(arena, 1000, 3);
        MemorySegment dst = arena.allocate(1000);
        Seen received = new Seen();
        Seen sent = new Seen();
        ba.receiveStream(dst, 0, 1000, true, received);
        ab.sendStream(src, 0, 1000, sent);
        progressUntil(() -> received.done() && sent.done(), 10_000, a, b);
        assertEquals(0, sent.status);
        assertEquals(0, sent.length);
        assertEquals(0, received.status);
        assertEquals(1000, received.length);
        assertBytes(src.toArray(JAVA_BYTE), dst, "stream with callbacks");
    }

    @Test
    void shouldCallBackAStreamReceiveOfBytesThatHadArrived() {
        MemorySegment src = BytePattern.allocate(arena, 100, 4);
        MemorySegment dst = arena.allocate(1000);
        long send = ab.sendStream(src, 0, 100);
        UcpEndpoint[] ready = new UcpEndpoint[1];
        progressUntil(() -> a.poll(send), 10_000, a, b);
        progressUntil(() -> b.pollStreams(ready) > 0, 10_000, a, b);
        assertEquals(ba, ready[0]);
        Seen received = new Seen();
        ba.receiveStream(dst, 0, 1000, false, received);
        progressUntil(received::done, 10_000, a, b);
        assertEquals(0, received.status);
        assertEquals(100, received.length, "the callback reports the bytes taken, not the capacity");
        assertBytes(src.toArray(JAVA_BYTE), dst.asSlice(0, 100), "stream received at once");
    }

    @Test
    void shouldCompleteStreamFuturesWithTheLengths() throws Exception {
        MemorySegment src = BytePattern.allocate(arena, 4096, 5);
        MemorySegment dst = arena.allocate(4096);
        CompletableFuture<Long> received = ba.receiveStreamAsync(dst, 0, 4096, true);
        CompletableFuture<Long> sent = ab.sendStreamAsync(src, 0, 4096);
        progressUntil(() -> received.isDone() && sent.isDone(), 10_000, a, b);
        assertEquals(4096L, sent.get());
        assertEquals(4096L, received.get());
        assertBytes(src.toArray(JAVA_BYTE), dst, "stream with futures");
    }

    @Test
    void shouldCompleteEndpointFlushCallbackAndFutureAfterASend() throws Exception {
        flushAfterASend(ab::flush, ab::flushAsync, 6);
    }

    @Test
    void shouldCompleteWorkerFlushCallbackAndFutureAfterASend() throws Exception {
        flushAfterASend(a::flush, a::flushAsync, 8);
    }

    /** Sends, then flushes with a callback and with a future; both complete with 0 and the data arrives. */
    private void flushAfterASend(Consumer<UcpCallback> flush, Supplier<CompletableFuture<Long>> flushAsync,
                                 int tag) throws Exception {
        MemorySegment src = BytePattern.allocate(arena, 64, tag);
        MemorySegment dst = arena.allocate(64);
        long recv = b.receiveTag(dst, 0, 64, tag, -1L);
        long send = ab.sendTag(src, 0, 64, tag);
        Seen flushed = new Seen();
        flush.accept(flushed);
        CompletableFuture<Long> future = flushAsync.get();
        progressUntil(() -> flushed.done() && future.isDone(), 10_000, a, b);
        assertEquals(0, flushed.status);
        assertEquals(0L, future.get());
        progressUntil(() -> a.poll(send) && b.poll(recv), 10_000, a, b);
        assertBytes(src.toArray(JAVA_BYTE), dst, "flushed send");
    }

    @Test
    void shouldRefuseTheNewFormsWithoutACallbackOrOnAClosedEndpoint() {
        MemorySegment src = BytePattern.allocate(arena, 8, 7);
        assertThrows(NullPointerException.class, () -> ab.sendTagSync(src, 0, 8, 1, null));
        assertThrows(NullPointerException.class, () -> ab.sendStream(src, 0, 8, null));
        assertThrows(NullPointerException.class, () -> ab.receiveStream(src, 0, 8, false, null));
        assertThrows(NullPointerException.class, () -> ab.flush((UcpCallback) null));
        assertThrows(NullPointerException.class, () -> a.flush((UcpCallback) null));
        assertThrows(IndexOutOfBoundsException.class, () -> ab.sendStreamAsync(src, 0, 9));
        ab.close();
        assertThrows(IllegalStateException.class, () -> ab.sendTagSyncAsync(src, 0, 8, 1));
        assertThrows(IllegalStateException.class, () -> ab.receiveStreamAsync(src, 0, 8, false));
        assertThrows(IllegalStateException.class, ab::flushAsync);
    }
}
