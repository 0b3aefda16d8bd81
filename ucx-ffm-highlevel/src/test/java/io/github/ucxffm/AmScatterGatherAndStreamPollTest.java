package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Active messages sent and received with scatter-gather lists, and stream polling. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AmScatterGatherAndStreamPollTest extends TwoWorkerTest {

    AmScatterGatherAndStreamPollTest() {
        super(true, UcpContext.Feature.AM, UcpContext.Feature.STREAM, UcpContext.Feature.RMA);
    }

    /** Runs before the workers close (JUnit runs a subclass's {@code @AfterEach} first). */
    @AfterEach
    void closeEndpoints() {
        ab.closeForce();
        ba.closeForce();
    }

    private MemorySegment[] split(MemorySegment whole, long... cuts) {
        MemorySegment[] parts = new MemorySegment[cuts.length + 1];
        long from = 0;
        for (int i = 0; i < cuts.length; i++) {
            parts[i] = whole.asSlice(from, cuts[i] - from);
            from = cuts[i];
        }
        parts[cuts.length] = whole.asSlice(from);
        return parts;
    }

    @Test
    void shouldGatherAmDataOnSendAndScatterItOnReceiveEagerAndRendezvous() {
        for (int size : new int[] {100, 5000, 2 << 20}) {
            MemorySegment data = BytePattern.allocate(arena, size, size);
            MemorySegment header = BytePattern.allocate(arena, 16, 7);
            MemorySegment target = arena.allocate(size + 10);
            MemorySegment[] scattered = split(target, 3, size / 2, size - 1);
            AtomicReference<UcpAmData> kept = new AtomicReference<>();
            byte[][] headerSeen = new byte[1][];
            b.setAmHandler(5, message -> {
                headerSeen[0] = message.header().toArray(JAVA_BYTE);
                kept.set(message.keep());
            }, UcpAmHandler.WHOLE_MESSAGE | UcpAmHandler.PERSISTENT_DATA);
            long send = ab.sendAm(5, header, split(data, 1, size / 3), 0);
            TestSupport.progressUntil(() -> kept.get() != null, 10_000, a, b);
            assertArrayEquals(header.toArray(JAVA_BYTE), headerSeen[0]);
            assertEquals(size, kept.get().length());
            long recv = kept.get().receive(scattered);
            TestSupport.awaitBoth(a, send, b, recv);
            assertEquals(size, b.receivedLength());
            assertArrayEquals(data.toArray(JAVA_BYTE), target.asSlice(0, size).toArray(JAVA_BYTE), "size " + size);
            assertEquals(0, target.get(JAVA_BYTE, size), "byte after the message untouched");
        }
    }

    /**
     * The callback form of a gathered send: the callback runs once, with success, when the send is over; a rendezvous
     * send's only once the receiver has fetched the data; a list refused up front calls nothing back.
     */
    @Test
    void shouldCompleteAGatheredSendThroughItsCallback() {
        for (int size : new int[] {100, 5000, 2 << 20}) {
            MemorySegment data = BytePattern.allocate(arena, size, size + 1);
            MemorySegment header = BytePattern.allocate(arena, 16, 9);
            MemorySegment target = arena.allocate(size);
            AtomicReference<UcpAmData> kept = new AtomicReference<>();
            b.setAmHandler(7, message -> kept.set(message.keep()), UcpAmHandler.PERSISTENT_DATA);
            List<String> calls = new ArrayList<>();
            ab.sendAm(7, header, split(data, 1, size / 3), 0,
                    (status, length, tag) -> calls.add(status + "/" + length + "/" + tag));
            TestSupport.progressUntil(() -> kept.get() != null, 10_000, a, b);
            if (size == 2 << 20) {
                TestSupport.progressFor(50, a, b);
                assertEquals(List.of(), calls, "a rendezvous send is over only once the receiver fetched the data");
            }
            long recv = kept.get().receive(target, 0);
            TestSupport.progressUntil(() -> !calls.isEmpty() && b.poll(recv), 10_000, a, b);
            TestSupport.progressFor(50, a, b);
            assertEquals(List.of("0/0/0"), calls, "called back once, with success, size " + size);
            assertArrayEquals(data.toArray(JAVA_BYTE), target.toArray(JAVA_BYTE), "size " + size);
            assertEquals(0, a.inFlightCount(), "nothing left in flight, size " + size);
        }
        List<String> none = new ArrayList<>();
        assertThrows(IllegalArgumentException.class,
                () -> ab.sendAm(7, null, new MemorySegment[0], 0, (s, l, t) -> none.add("called")));
        assertThrows(IllegalArgumentException.class, () -> ab.sendAm(7, null,
                new MemorySegment[] {MemorySegment.ofArray(new byte[8])}, 0, (s, l, t) -> none.add("called")));
        assertThrows(NullPointerException.class,
                () -> ab.sendAm(7, null, new MemorySegment[] {arena.allocate(8)}, 0, null));
        TestSupport.progressFor(50, a, b);
        assertEquals(List.of(), none);
        assertEquals(0, a.inFlightCount());
    }

    @Test
    void shouldRefuseScatterListsTooSmallForTheMessage() {
        MemorySegment data = BytePattern.allocate(arena, 4096, 1);
        AtomicReference<UcpAmData> kept = new AtomicReference<>();
        b.setAmHandler(6, message -> kept.set(message.keep()), UcpAmHandler.PERSISTENT_DATA);
        long send = ab.sendAm(6, null, data, 0, 4096, 0);
        TestSupport.progressUntil(() -> kept.get() != null, 10_000, a, b);
        MemorySegment small = arena.allocate(1000);
        assertThrows(IndexOutOfBoundsException.class, () -> kept.get().receive(new MemorySegment[] {small, small}));
        MemorySegment big = arena.allocate(4096);
        long recv = kept.get().receive(new MemorySegment[] {big});
        TestSupport.awaitBoth(a, send, b, recv);
        assertArrayEquals(data.toArray(JAVA_BYTE), big.toArray(JAVA_BYTE));
    }

    @Test
    void shouldReportEndpointsWithStreamDataWhenPolled() {
        UcpEndpoint[] ready = new UcpEndpoint[4];
        TestSupport.progressFor(50, a, b);
        assertEquals(0, b.pollStreams(ready));
        MemorySegment data = BytePattern.allocate(arena, 64, 3);
        long send = ab.sendStream(data, 0, 64);
        int[] found = new int[1];
        TestSupport.progressUntil(() -> (found[0] = b.pollStreams(ready)) > 0, 10_000, a, b);
        assertEquals(1, found[0]);
        assertSame(ba, ready[0]);
        MemorySegment in = arena.allocate(64);
        long recv = ba.receiveStream(in, 0, 64, true);
        TestSupport.awaitBoth(a, send, b, recv);
        assertArrayEquals(data.toArray(JAVA_BYTE), in.toArray(JAVA_BYTE));
    }

    @Test
    void shouldPackTheCheckedKeyIntoNativeMemory() {
        try (UcpMemory memory = context.allocate(4096)) {
            MemorySegment packed = memory.packRemoteKey(arena);
            byte[] bytes = packed.toArray(JAVA_BYTE);
            assertTrue(bytes.length > UcpRemoteKey.HEADER);
            try (UcpRemoteKey key = ab.unpackRemoteKey(bytes)) {
                assertEquals(memory.address(), key.base());
                assertEquals(4096, key.length());
            }
        }
    }
}
