package io.github.ucxffm;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_MESSAGE_TRUNCATED;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_NO_MEMORY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The request table on its own, without a worker: token encoding, reuse and staleness, growth, unknown tokens, and
 * completion of operations that finish when started. Nothing here reaches UCX (no request is ever polled in flight).
 */
class RequestTableTest {

    private final Arena arena = Arena.ofConfined();
    private final Scratch.Source scratch = new Scratch.Source(arena, false);
    private final RequestTable table = new RequestTable(new Guard(false), scratch, true);

    @AfterEach
    void closeArena() {
        arena.close();
    }

    private static int slotOf(long token) {
        return (int) ((token & 0xffffffffL) >>> 1);
    }

    @Test
    void shouldHandOverTheTagAndLengthOfAReceiveCompletedWhenPosted() {
        long token = table.completedReceive("op", 5, 7, 0);
        assertEquals(1L, token & 1L, "a receive completed when posted has an odd token");
        assertNotEquals(UcpWorker.COMPLETED, token);
        assertEquals(1, table.inFlightCount());
        assertTrue(table.poll(token));
        assertEquals(7, scratch.get().receivedTag);
        assertEquals(5, scratch.get().receivedLength);
        assertEquals(0, table.inFlightCount());
    }

    @Test
    void shouldRefuseATokenPolledTwice() {
        long token = table.completedReceive("op", 1, 2, 0);
        assertTrue(table.poll(token));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> table.poll(token));
        assertTrue(e.getMessage().contains(Long.toHexString(token)), e.getMessage());
    }

    @Test
    void shouldRefuseAStaleTokenAfterItsSlotIsReused() {
        long first = table.completedReceive("op", 1, 1, 0);
        assertTrue(table.poll(first));
        long second = table.completedReceive("op", 2, 2, 0);
        assertEquals(slotOf(first), slotOf(second), "the freed slot is taken again");
        assertNotEquals(first, second, "but under a new sequence number");
        assertThrows(IllegalStateException.class, () -> table.poll(first));
        assertEquals(1, table.inFlightCount(), "refusing the stale token leaves the new operation alone");
        assertTrue(table.poll(second));
        assertEquals(2, scratch.get().receivedTag);
    }

    @Test
    void shouldGrowWhenEverySlotIsTakenAndKeepEveryTokenValid() {
        int initial = table.capacity();
        int n = initial * 3 + 1;
        long[] tokens = new long[n];
        Set<Long> distinct = new HashSet<>();
        for (int i = 0; i < n; i++) {
            tokens[i] = table.completedReceive("op", i, 1000 + i, 0);
            assertTrue(distinct.add(tokens[i]), "token " + i + " repeats");
        }
        assertTrue(table.capacity() >= n, "grew to " + table.capacity());
        assertEquals(n, table.inFlightCount());
        for (int i = n - 1; i >= 0; i--) {
            assertTrue(table.poll(tokens[i]));
            assertEquals(1000 + i, scratch.get().receivedTag);
            assertEquals(i, scratch.get().receivedLength);
        }
        assertEquals(0, table.inFlightCount());
        int grown = table.capacity();
        for (int i = 0; i < n; i++) {
            assertTrue(table.poll(table.completedReceive("op", 0, 0, 0)));
        }
        assertEquals(grown, table.capacity(), "freed slots are reused, not added");
    }

    @Test
    void shouldGrowWhenARequestInFlightNeedsTheFirstSlotBeyondTheTable() {
        int initial = table.capacity();
        for (int i = 0; i < initial; i++) {
            table.completedReceive("op", 0, 0, 0);
        }
        long fakeRequest = 0x2000;
        long token = table.startedPolled(fakeRequest, RequestTable.TAG_RECV, "op", null, null, null);
        assertTrue(slotOf(token) >= initial, "a slot of the grown table: " + slotOf(token));
        assertEquals(fakeRequest, table.requestOf(token));
        assertEquals(initial + 1, table.inFlightCount());
    }

    @Test
    void shouldRefuseUnknownTokens() {
        assertThrows(IllegalStateException.class, () -> table.poll(0x7fff_ffff_ffff_ffffL), "odd, slot out of range");
        assertThrows(IllegalStateException.class, () -> table.poll(0x7fff_ffff_ffff_fffeL), "even, slot out of range");
        assertThrows(IllegalStateException.class, () -> table.poll((5L << 32) | (3 << 1)), "even, free slot");
        assertThrows(IllegalStateException.class, () -> table.poll((5L << 32) | (3 << 1) | 1), "odd, free slot");
        assertEquals(0, table.requestOf((5L << 32) | (3 << 1)));
        assertEquals(0, table.requestOf(UcpWorker.COMPLETED));
        assertTrue(table.poll(UcpWorker.COMPLETED));
    }

    @Test
    void shouldReportAReceiveThatFailedWhenPostedOnPollAndReleaseIt() {
        long token = table.completedReceive("ucp_tag_recv_nbx", 64, 9, UCS_ERR_MESSAGE_TRUNCATED());
        UcxException e = assertThrows(UcxException.class, () -> table.poll(token));
        assertInstanceOf(UcxTruncatedException.class, e);
        assertTrue(e.getMessage().contains("ucp_tag_recv_nbx"), e.getMessage());
        assertEquals(0, table.inFlightCount());
        assertThrows(IllegalStateException.class, () -> table.poll(token), "released with the failure");
    }

    @Test
    void shouldTakeASlotOnlyForARequestInFlight() {
        assertEquals(UcpWorker.COMPLETED, table.startedPolled(0, RequestTable.SEND, "op", null, null, null));
        assertEquals(0, table.inFlightCount());
        long error = UCS_ERR_NO_MEMORY(); // a ucs_status_ptr_t holding an error, sign-extended as UCX returns it
        UcxException e = assertThrows(UcxException.class,
                () -> table.startedPolled(error, RequestTable.SEND, "ucp_tag_send_nbx", null, null, null));
        assertTrue(e.getMessage().contains("ucp_tag_send_nbx"), e.getMessage());
        assertEquals(0, table.inFlightCount());
        long fakeRequest = 0x1000;
        long token = table.startedPolled(fakeRequest, RequestTable.SEND, "op", null, null, null);
        assertEquals(0, token & 1L, "a request in flight has an even token");
        assertNotEquals(UcpWorker.COMPLETED, token);
        assertEquals(fakeRequest, table.requestOf(token));
        assertEquals(1, table.inFlightCount());
    }

    @Test
    void shouldReleaseAReservedSlotThatFailedToStart() {
        int slot = table.reserve(RequestTable.SEND, "ucp_tag_send_nbx", null, null, null);
        assertThrows(UcxException.class, () -> table.started((long) UCS_ERR_NO_MEMORY(), slot));
        // the slot is free again: the next reservation gets it
        assertEquals(slot, table.reserve(RequestTable.SEND, "op", null, null, null));
    }

    @Test
    void shouldCloseAnOperationResourceWhenItsSlotIsReleased() {
        boolean[] closed = {false};
        OperationResource resource = () -> closed[0] = true;
        int slot = table.reserve(RequestTable.SEND, "op", null, null, resource);
        assertFalse(closed[0]);
        assertEquals(UcpWorker.COMPLETED, table.started(0, slot));
        assertTrue(closed[0], "released with the slot");
    }

    @Test
    void shouldDeliverACallbackOperationCompletedWhenStarted() {
        long[] seen = new long[3];
        int slot = table.reserveCompletion(RequestTable.TAG_RECV, "op", null, null, null, null,
                (status, length, tag) -> {
                    seen[0] = status;
                    seen[1] = length;
                    seen[2] = tag;
                }, null, 0);
        table.startedWithCallback(0, slot, 5, 9);
        assertEquals(0, seen[0]);
        assertEquals(5, seen[1]);
        assertEquals(9, seen[2]);
        assertEquals(slot, table.reserve(RequestTable.SEND, "op", null, null, null), "the slot was released");
    }

    @Test
    void shouldFailAFutureWhoseOperationFailedWhenStarted() {
        CompletableFuture<Long> future = RequestTable.future((cb, f) -> {
            int slot = table.reserveCompletion(RequestTable.SEND, "ucp_am_send_nbx", null, null, null, null, cb, f, 8);
            table.startedWithCallback((long) UCS_ERR_NO_MEMORY(), slot, 8, 0);
        });
        ExecutionException e = assertThrows(ExecutionException.class, future::get);
        assertInstanceOf(UcxException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("ucp_am_send_nbx"), e.getCause().getMessage());
    }

    @Test
    void shouldCompleteAFutureWithTheOperationsValue() throws Exception {
        CompletableFuture<Long> future = RequestTable.future((cb, f) -> {
            int slot = table.reserveCompletion(RequestTable.SEND, "op", null, null, null, null, cb, f, 8);
            table.startedWithCallback(0, slot, 8, 0);
        });
        assertEquals(8L, future.get());
    }
}
