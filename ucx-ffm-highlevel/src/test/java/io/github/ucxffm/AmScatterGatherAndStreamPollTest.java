package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
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

    @Test
    void shouldCompleteGatheredAmSendsByCallbackInOrderAndFreeTheirDescriptors() {
        int messages = 3;
        for (int size : new int[] {100, 5000, 2 << 20}) {
            List<UcpAmData> kept = new ArrayList<>();
            List<Long> headers = new ArrayList<>();
            b.setAmHandler(7, message -> {
                headers.add(message.header().get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
                kept.add(message.keep());
            }, UcpAmHandler.WHOLE_MESSAGE | UcpAmHandler.PERSISTENT_DATA);
            MemorySegment[] data = new MemorySegment[messages];
            int[] calls = new int[messages];
            int[] statuses = new int[messages];
            List<IovList> descriptors = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                data[i] = BytePattern.allocate(arena, size, size + i);
                MemorySegment header = arena.allocate(8);
                header.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, i);
                int n = i;
                ab.sendAm(7, header, split(data[i], 1, size / 3), 0, (status, length, tag) -> {
                    calls[n]++;
                    statuses[n] = status;
                });
                for (OperationResource r : a.requests.ownedResources()) {
                    if (r instanceof IovList l && !descriptors.contains(l)) {
                        descriptors.add(l);
                    }
                }
            }
            if (size == 2 << 20) {
                assertEquals(messages, descriptors.size(), "rendezvous sends wait for the receiver, owning their list");
                assertTrue(descriptors.stream().noneMatch(IovList::isClosed), "freed before completion");
            }
            TestSupport.progressUntil(() -> kept.size() == messages, 10_000, a, b);
            MemorySegment[] targets = new MemorySegment[messages];
            long[] received = new long[messages];
            for (int i = 0; i < messages; i++) {
                targets[i] = arena.allocate(size);
                int n = i;
                kept.get(i).receive(targets[i], 0, (status, length, tag) -> received[n] = status == 0 ? length : -1);
            }
            TestSupport.progressUntil(() -> Arrays.stream(calls).sum() == messages
                    && Arrays.stream(received).allMatch(r -> r != 0), 10_000, a, b);
            TestSupport.progressFor(20, a, b);
            assertEquals(List.of(0L, 1L, 2L), headers, "size " + size + ": messages in the order sent");
            for (int i = 0; i < messages; i++) {
                assertEquals(1, calls[i], "size " + size + ": callback " + i + " runs once");
                assertEquals(0, statuses[i], "size " + size + ": status of send " + i);
                assertEquals(size, received[i], "size " + size + ": length of message " + i);
                assertArrayEquals(data[i].toArray(JAVA_BYTE), targets[i].toArray(JAVA_BYTE),
                        "size " + size + ": message " + i);
            }
            assertTrue(descriptors.stream().allMatch(IovList::isClosed), "size " + size + ": descriptors freed");
            assertTrue(a.requests.ownedResources().isEmpty(), "size " + size + ": nothing left in the table");
        }
    }

    @Test
    void shouldRefuseAGatheredCallbackSendOnAClosedEndpointWithoutCallingBack() {
        MemorySegment[] iov = split(BytePattern.allocate(arena, 64, 9), 10);
        int[] calls = new int[1];
        UcpCallback callback = (status, length, tag) -> calls[0]++;
        assertThrows(NullPointerException.class, () -> ab.sendAm(7, null, iov, 0, null));
        assertThrows(IllegalArgumentException.class,
                () -> ab.sendAm(7, null, new MemorySegment[] {MemorySegment.ofArray(new byte[8])}, 0, callback));
        ab.closeForce();
        assertThrows(IllegalStateException.class, () -> ab.sendAm(7, null, iov, 0, callback));
        TestSupport.progressFor(50, a, b);
        assertEquals(0, calls[0]);
        assertTrue(a.requests.ownedResources().isEmpty());
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
