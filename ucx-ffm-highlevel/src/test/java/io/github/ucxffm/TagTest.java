package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TagTest extends TwoWorkerTest {

    TagTest() {
        super(false, UcpContext.Feature.TAG);
    }

    private MemorySegment bytes(int n, int seed) {
        return BytePattern.allocate(arena, n, seed);
    }

    private void awaitBoth(long send, long recv) {
        TestSupport.awaitBoth(a, send, b, recv);
    }

    @Test
    void shouldDeliverTagMessagesOfEverySizeBytesForBytes() {
        for (int size : new int[] {0, 1, 8, 4096, 65536, 1 << 20, 4 << 20}) {
            MemorySegment src = bytes(size, size);
            MemorySegment dst = arena.allocate(Math.max(1, size));
            long tag = 0xABCD_0000L + size;
            long recv = b.receiveTag(dst, 0, size, tag, -1L);
            long send = ab.sendTag(src, 0, size, tag);
            awaitBoth(send, recv);
            assertEquals(tag, b.receivedTag());
            assertEquals(size, b.receivedLength());
            assertArrayEquals(src.toArray(JAVA_BYTE), dst.asSlice(0, size).toArray(JAVA_BYTE), "size " + size);
        }
    }

    @Test
    void shouldMatchOnMaskedTagBits() {
        MemorySegment src = bytes(16, 1);
        MemorySegment dst = arena.allocate(16);
        long recv = b.receiveTag(dst, 0, 16, 0x1200, 0xFF00);
        long send = ab.sendTag(src, 0, 16, 0x12AB);
        awaitBoth(send, recv);
        assertEquals(0x12AB, b.receivedTag());
    }

    @Test
    void shouldFailTruncatedReceive() {
        MemorySegment src = bytes(64, 2);
        MemorySegment dst = arena.allocate(16);
        long recv = b.receiveTag(dst, 0, 16, 7, -1L);
        long send = ab.sendTag(src, 0, 64, 7);
        assertThrows(UcxTruncatedException.class, () -> awaitBoth(send, recv));
    }

    @Test
    void shouldCompleteCallbacksAndFutures() {
        MemorySegment src = bytes(100, 3);
        MemorySegment dst = arena.allocate(100);
        AtomicLong gotLength = new AtomicLong(-1);
        AtomicLong gotTag = new AtomicLong();
        b.receiveTag(dst, 0, 100, 9, -1L, (status, length, tag) -> {
            assertEquals(0, status);
            gotLength.set(length);
            gotTag.set(tag);
        });
        CompletableFuture<Long> sent = ab.sendTagAsync(src, 0, 100, 9);
        TestSupport.progressUntil(() -> gotLength.get() >= 0 && sent.isDone(), 10_000, a, b);
        assertEquals(100, gotLength.get());
        assertEquals(9, gotTag.get());
        assertArrayEquals(src.toArray(JAVA_BYTE), dst.toArray(JAVA_BYTE));
    }

    @Test
    void shouldRethrowACallbackExceptionFromProgressAndKeepWorking() {
        MemorySegment src = bytes(8, 4);
        MemorySegment dst = arena.allocate(8);
        b.receiveTag(dst, 0, 8, 11, -1L, (status, length, tag) -> {
            throw new IllegalStateException("boom from callback");
        });
        long send = ab.sendTag(src, 0, 8, 11);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> TestSupport.progressFor(10_000, a, b));
        assertEquals("boom from callback", e.getMessage());
        a.await(send, Duration.ofSeconds(5), UcpWorker.Idle.SPIN);
        // still usable
        long recv = b.receiveTag(dst, 0, 8, 12, -1L);
        long send2 = ab.sendTag(src, 0, 8, 12);
        awaitBoth(send2, recv);
    }

    @Test
    void shouldRefuseUseFromAnotherThreadAndAfterClose() throws Exception {
        MemorySegment src = bytes(8, 5);
        CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(() -> {
            try {
                ab.sendTag(src, 0, 8, 1);
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertTrue(other.get() instanceof IllegalStateException, String.valueOf(other.get()));
        ab.close();
        ab.close();
        assertThrows(IllegalStateException.class, () -> ab.sendTag(src, 0, 8, 1));
        b.close();
        assertThrows(IllegalStateException.class, () -> b.progress());
        context.close();
        assertThrows(IllegalStateException.class, () -> a.progress());
        assertEquals(0, UcxHandle.liveHandles());
    }
}
