package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucp_tag_recv_info;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_CALLBACK;
import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_USER_DATA;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_CANCELED;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_LAST;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_TIMED_OUT;
import static io.github.ucxffm.bindings.ucx_h.UCS_INPROGRESS;
import static io.github.ucxffm.bindings.ucx_h.ucp_request_cancel;
import static io.github.ucxffm.bindings.ucx_h.ucp_request_free;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One worker's operations in flight: a pool of {@link Pending} slots, the tokens the application polls, the
 * completion of callback and future operations, and the mapping of failures to exceptions. Endpoints and the worker
 * start operations through it and never see a slot: they get a slot number ({@code int}) for an operation that needs
 * one before its native call, and a token ({@code long}) back.
 * <p>
 * <b>Tokens.</b> {@link UcpWorker#COMPLETED} (0) for an operation done at once. Otherwise the slot index shifted
 * left by one, a sequence number in the upper 32 bits (never 0), and the low bit: 0 for a UCX request in flight, 1
 * for a receive that completed when posted and whose tag and length wait in the slot. {@link #poll} finds the slot by
 * indexing and compares the whole token, so a token polled twice, after its slot was reused, or from another worker
 * is refused rather than taken for another operation.
 * <p>
 * <b>Threads.</b> Guarded by the worker's {@link Guard} (a lock only for MULTI workers). Upcalls complete slots on
 * the progressing thread.
 */
final class RequestTable {

    /** Operation kinds, for the receive information {@link #poll} collects and for error messages. */
    static final byte SEND = Pending.SEND;
    static final byte TAG_RECV = Pending.TAG_RECV;
    static final byte STREAM_RECV = Pending.STREAM_RECV;
    static final byte AM_RECV = Pending.AM_RECV;
    static final byte OTHER = Pending.OTHER;

    private static final int INITIAL_SLOTS = 64;

    private final Guard guard;
    private final Scratch.Source scratch;
    /** Whether the request test and free calls may skip the thread-state transition ({@link RawCalls}). */
    private final boolean critical;

    /**
     * What could call into Java from a UCX call on this worker now: slots whose operation carries an upcall stub,
     * plus the sources the other parts count ({@link #addUpcallSource}). While it is 0 the operations and progress
     * use critical downcalls ({@link #quiet}).
     */
    private int upcallSources;
    /** Polled operations in flight (their slots hold an even token and a UCX request). */
    private int polledInFlight;
    /** Receives completed when posted whose results wait for poll() (their slots hold an odd token). */
    private int immediateCount;
    /** The sequence number in the upper half of the next token. */
    private int tokenSequence;
    private Pending[] slots = new Pending[INITIAL_SLOTS];
    private int[] free = new int[INITIAL_SLOTS];
    private int freeCount;

    RequestTable(Guard guard, Scratch.Source scratch, boolean critical) {
        this.guard = guard;
        this.scratch = scratch;
        this.critical = critical;
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Pending(i);
            free[freeCount++] = slots.length - 1 - i;
        }
    }

    // ---- what may call back ---------------------------------------------------------------------------------------

    /**
     * Whether no Java upcall can run during a UCX call on this worker started now, so that the call may skip the
     * thread-state transition ({@link RawCalls}): the worker allows critical calls at all (not MULTI), and nothing
     * that UCX calls back is registered: no endpoint with an error callback, no listener, no active-message handler,
     * no operation with a completion callback or future in flight, no deferred endpoint close. Only Java code adds a
     * source, and only on the thread that makes the calls (or under the worker's rules for SERIALIZED), so the answer
     * holds for the whole of a call started after it.
     */
    boolean quiet() {
        return critical && upcallSources == 0;
    }

    /** Counts one more thing UCX may call back on this worker (an endpoint's error callback, a listener, ...). */
    void addUpcallSource() {
        guard.lock();
        try {
            upcallSources++;
        } finally {
            guard.unlock();
        }
    }

    /** Counts one less; the thing's callback can no longer run. */
    void removeUpcallSource() {
        guard.lock();
        try {
            upcallSources--;
        } finally {
            guard.unlock();
        }
    }

    /** Starts an operation in its callback-or-future form; see {@link #future}. */
    @FunctionalInterface
    interface Start {
        void start(UcpCallback callback, CompletableFuture<Long> future);
    }

    /**
     * The one way every {@code *Async} method builds its future: a new future handed to the operation's
     * callback-or-future form (which hands it to {@link #reserveCompletion}), completed by {@link #deliver} with the
     * operation's value or the {@link UcxException} its status maps to. Derived values (an atomic's old value, a
     * 32-bit narrowing) are stages on this future.
     */
    static CompletableFuture<Long> future(Start start) {
        CompletableFuture<Long> future = new CompletableFuture<>();
        start.start(null, future);
        return future;
    }

    // ---- starting operations -----------------------------------------------------------------------------------

    /**
     * Takes a slot for an operation that needs one before its native call (an IOV descriptor to free, a callback
     * to call). {@code keep1} and {@code keep2} stay strongly reachable until completion; an {@link OperationResource}
     * in {@code keep2} is closed then.
     *
     * @return the slot number, for {@link #started}, {@link #startedWithCallback} or {@link #release}
     */
    int reserve(byte kind, String op, UcpEndpoint endpoint, Object keep1, Object keep2) {
        guard.lock();
        try {
            Pending p = takeFreeSlot();
            p.kind = kind;
            p.op = op;
            p.endpoint = endpoint;
            p.keep1 = keep1;
            p.keep2 = keep2;
            return p.id;
        } finally {
            guard.unlock();
        }
    }

    /**
     * {@link #reserve} for an operation that completes through {@code callback} or {@code future} (exactly one is
     * non-null). The future is the one way every {@code *Async} method gets its result: it completes with
     * {@code value} (the operation's length) or with the {@link UcxException} its status maps to. {@code memory},
     * whose use began before this call, ends its use at completion.
     */
    int reserveCompletion(byte kind, String op, UcpEndpoint endpoint, Object keep1, Object keep2, UcpMemory memory,
                          UcpCallback callback, CompletableFuture<Long> future, long value) {
        int slot = reserve(kind, op, endpoint, keep1, keep2);
        Pending p = slots[slot];
        p.memory = memory;
        p.callback = callback;
        p.future = future;
        p.length = value;
        return slot;
    }

    /** The announced length of an active message's data, reported when its polled receive completes. */
    void expectLength(int slot, long length) {
        slots[slot].length = length;
    }

    /** Gives back a slot whose operation never reached UCX. */
    void release(int slot) {
        recycle(slots[slot]);
    }

    /**
     * Fills the callback fields of {@code param}: the stub, and the slot number as the user data the upcall
     * passes back to {@link #complete}.
     */
    void callbackParams(MemorySegment param, int attrMask, MemorySegment stub, int slot) {
        Pending p = slots[slot];
        if (!p.upcall) {
            p.upcall = true; // UCX gets the stub: the worker is not quiet until the slot is recycled
            addUpcallSource();
        }
        ucp_request_param_t.op_attr_mask(param, attrMask | UCP_OP_ATTR_FIELD_CALLBACK()
                | UCP_OP_ATTR_FIELD_USER_DATA());
        param.set(ADDRESS, ucp_request_param_t.cb$offset(), stub);
        ucp_request_param_t.user_data(param, MemorySegment.ofAddress(slot + 1L));
    }

    /**
     * Handles the {@code ucs_status_ptr_t} of a polled operation started without a slot: nothing to do when it
     * completed at once (the common case of a small message); a slot is taken only for a request in flight.
     * {@code memory}, whose use began before the call, ends its use now if the operation completed or failed at once,
     * else when it completes.
     *
     * @return the token: {@link UcpWorker#COMPLETED}, or one to {@link #poll(long)}
     * @throws UcxException if the operation failed at once
     */
    long startedPolled(long address, byte kind, String op, UcpEndpoint endpoint, Object keep1, Object keep2,
                       UcpMemory memory) {
        if (address == 0) {
            if (memory != null) {
                memory.endUse();
            }
            return UcpWorker.COMPLETED;
        }
        if (isError(address)) {
            if (memory != null) {
                memory.endUse();
            }
            throw UcxException.of(op, (byte) address);
        }
        int slot = reserve(kind, op, endpoint, keep1, keep2); // may grow the table: index it afterwards
        Pending p = slots[slot];
        p.memory = memory;
        return track(p, address);
    }

    /** {@link #startedPolled} without registered memory. */
    long startedPolled(long address, byte kind, String op, UcpEndpoint endpoint, Object keep1, Object keep2) {
        return startedPolled(address, kind, op, endpoint, keep1, keep2, null);
    }

    /**
     * Handles the {@code ucs_status_ptr_t} of a polled operation whose slot was {@linkplain #reserve reserved}.
     *
     * @return the token: {@link UcpWorker#COMPLETED}, or one to {@link #poll(long)}
     * @throws UcxException if the operation failed at once (the slot is released)
     */
    long started(MemorySegment result, int slot) {
        // Tiny on purpose: it inlines into every operation, so the segment the downcall returned does not escape.
        return started(result.address(), slot);
    }

    long started(long address, int slot) {
        Pending p = slots[slot];
        if (address == 0) {
            recycle(p);
            return UcpWorker.COMPLETED;
        }
        if (isError(address)) {
            String op = p.op;
            recycle(p);
            throw UcxException.of(op, (byte) address);
        }
        return track(p, address);
    }

    /**
     * Handles the result of an operation started with a callback or future: on immediate completion (or failure)
     * it is delivered now, with {@code length} and {@code tag}; a request in flight is left to the upcall, which may
     * already have run.
     */
    void startedWithCallback(MemorySegment result, int slot, long length, long tag) {
        startedWithCallback(result.address(), slot, length, tag);
    }

    void startedWithCallback(long address, int slot, long length, long tag) {
        if (address != 0 && !isError(address)) {
            return;
        }
        int status = address == 0 ? 0 : (byte) address; // UCS_PTR_RAW_STATUS
        deliver(slots[slot], status, length, tag);
    }

    /**
     * A token for a receive that completed when it was posted: its tag and length wait in a slot until
     * {@link #poll(long)} hands them over, so that the worker's {@code receivedTag()} and {@code receivedLength()}
     * describe the receive just polled, as they do for one that completed later. Odd, unlike the tokens of
     * operations in flight; a token polled twice is refused rather than mistaken for a newer one.
     *
     * @param status 0, or the error the receive failed with, which {@link #poll} throws
     */
    long completedReceive(String op, long length, long tag, int status) {
        guard.lock();
        try {
            Pending p = takeFreeSlot();
            p.kind = Pending.DONE;
            p.op = op;
            p.length = length;
            p.tag = tag;
            p.status = status;
            immediateCount++;
            return newToken(p, 1L);
        } finally {
            guard.unlock();
        }
    }

    private static boolean isError(long address) {
        return Long.compareUnsigned(address, UCS_ERR_LAST()) >= 0; // UCS_PTR_IS_ERR
    }

    // ---- tokens ----------------------------------------------------------------------------------------------------

    private long track(Pending p, long address) {
        p.request = address;
        guard.lock();
        try {
            polledInFlight++;
            return newToken(p, 0L);
        } finally {
            guard.unlock();
        }
    }

    /** A token for slot {@code p}: the sequence number above, the slot's index and {@code low} (0 or 1) below. */
    private long newToken(Pending p, long low) {
        int sequence = ++tokenSequence & 0x7fffffff;
        if (sequence == 0) {
            sequence = tokenSequence = 1; // never 0: a token of slot 0 would read as COMPLETED
        }
        long token = ((long) sequence << 32) | ((long) p.id << 1) | low;
        p.token = token;
        return token;
    }

    private Pending slotOf(long token) {
        int id = (int) ((token & 0xffffffffL) >>> 1);
        guard.lock();
        try {
            return id < slots.length ? slots[id] : null;
        } finally {
            guard.unlock();
        }
    }

    /** The slot of a polled operation's token, or {@code null} when the token does not name one in flight. */
    private Pending inFlightSlot(long token) {
        Pending p = slotOf(token);
        return p != null && p.token == token && p.request != 0 ? p : null;
    }

    /** The UCX request behind a token of a polled operation in flight, or 0 (completed, odd, unknown). */
    long requestOf(long token) {
        if (token == UcpWorker.COMPLETED || (token & 1L) != 0) {
            return 0;
        }
        Pending p = inFlightSlot(token);
        return p == null ? 0 : p.request;
    }

    private static IllegalStateException unknownToken(long token) {
        return new IllegalStateException("unknown request token " + Long.toHexString(token)
                + " (already completed, or not from a polled operation of this worker)");
    }

    // ---- polling ---------------------------------------------------------------------------------------------------

    /**
     * Checks a token; when its operation has completed, collects its receive information into the thread's scratch,
     * releases it and returns {@code true}. After that the token is invalid.
     *
     * @throws UcxException          if it completed with an error (released all the same)
     * @throws IllegalStateException if the token is unknown (already released, or foreign)
     */
    boolean poll(long token) {
        if (token == UcpWorker.COMPLETED) {
            return true;
        }
        if ((token & 1L) != 0) {
            return pollCompletedReceive(token);
        }
        Pending p = inFlightSlot(token);
        if (p == null) {
            throw unknownToken(token);
        }
        long address = p.request;
        // Raw-address downcalls: polling runs in every wait loop, and a MemorySegment made per call here is not
        // reliably scalar-replaced by the JIT (measured: up to ~1 KB per ping-pong round).
        byte status;
        Scratch s = scratch.get();
        if (p.kind == Pending.TAG_RECV) {
            status = RawCalls.tagRecvTest(critical, address, s.tagInfoAddress);
            if (status != UCS_INPROGRESS()) {
                s.received(ucp_tag_recv_info.sender_tag(s.tagInfo), ucp_tag_recv_info.length(s.tagInfo));
            }
        } else if (p.kind == Pending.STREAM_RECV) {
            status = RawCalls.streamRecvTest(critical, address, s.lengthAddress);
            if (status != UCS_INPROGRESS()) {
                s.receivedLength = s.length.get(JAVA_LONG, 0);
            }
        } else if (p.kind == Pending.AM_RECV) {
            status = RawCalls.checkStatus(critical, address);
            if (status != UCS_INPROGRESS()) {
                s.receivedLength = p.length; // an active message's data arrives whole: its announced length
            }
        } else {
            status = RawCalls.checkStatus(critical, address);
        }
        if (status == UCS_INPROGRESS()) {
            return false;
        }
        guard.lock();
        try {
            polledInFlight--;
        } finally {
            guard.unlock();
        }
        RawCalls.free(critical, address);
        String op = p.op;
        UcpEndpoint ep = p.endpoint;
        recycle(p);
        if (status < 0) {
            throw failure(op, status, ep);
        }
        return true;
    }

    private boolean pollCompletedReceive(long token) {
        Pending p;
        guard.lock();
        try {
            p = slotOf(token);
            if (p == null || p.token != token || p.kind != Pending.DONE) {
                throw unknownToken(token);
            }
            immediateCount--;
        } finally {
            guard.unlock();
        }
        int status = p.status;
        String op = p.op;
        long tag = p.tag;
        long length = p.length;
        recycle(p);
        if (status < 0) {
            throw UcxException.of(op, status);
        }
        scratch.get().received(tag, length);
        return true;
    }

    /** Operations started but not yet completed and released: polled ones in flight and receives waiting for poll. */
    int inFlightCount() {
        guard.lock();
        try {
            return polledInFlight + immediateCount;
        } finally {
            guard.unlock();
        }
    }

    /** How many slots the table has (grown, never shrunk). */
    int capacity() {
        guard.lock();
        try {
            return slots.length;
        } finally {
            guard.unlock();
        }
    }

    // ---- completion ------------------------------------------------------------------------------------------------

    /**
     * Completes a callback or future operation from its upcall: frees the UCX request and delivers the status.
     * {@code length < 0}: the length recorded when the operation started (sends carry none in their upcall).
     */
    void complete(long request, byte status, long userData, long length, long tag) {
        Pending p;
        guard.lock();
        try {
            p = slots[(int) (userData - 1)];
        } finally {
            guard.unlock();
        }
        RawCalls.free(critical, request);
        deliver(p, status, length < 0 ? p.length : length, tag);
    }

    private void deliver(Pending p, int status, long length, long tag) {
        UcpCallback cb = p.callback;
        CompletableFuture<Long> future = p.future;
        String op = p.op;
        UcpEndpoint ep = p.endpoint;
        recycle(p);
        status = failedEndpointStatus(status, ep);
        if (status < 0 && ep != null && UcxException.isPeerFailure(status)) {
            ep.markFailed(status);
        }
        if (future != null) {
            if (status < 0) {
                future.completeExceptionally(UcxException.of(op, status));
            } else {
                future.complete(length);
            }
        } else if (cb != null) {
            cb.onComplete(status, length, tag);
        }
    }

    private static UcxException failure(String op, int status, UcpEndpoint ep) {
        status = failedEndpointStatus(status, ep);
        UcxException e = UcxException.of(op, status);
        if (ep != null && UcxException.isPeerFailure(status)) {
            ep.markFailed(status);
        }
        return e;
    }

    /**
     * What UCX ends an endpoint's operations with when the endpoint fails is not always the failure: a flush ends with
     * {@code UCS_ERR_TIMED_OUT}, which would read as the caller's own deadline, and a send that waited in a
     * transport's queue (a full tcp socket) with {@code UCS_ERR_CANCELED} when UCX discards the failed transport
     * endpoint, which would read as the caller's own cancel. On an endpoint known to have failed (its error upcall
     * runs in the same progress call, before the operation's status can be polled) either is reported as that
     * failure.
     */
    private static int failedEndpointStatus(int status, UcpEndpoint ep) {
        if ((status == UCS_ERR_TIMED_OUT() || status == UCS_ERR_CANCELED()) && ep != null) {
            int f = ep.failureCode();
            if (f < 0) {
                return f;
            }
        }
        return status;
    }

    // ---- the pool --------------------------------------------------------------------------------------------------

    /** The next free slot, the pool grown if none is left; the caller holds the guard. */
    private Pending takeFreeSlot() {
        if (freeCount == 0) {
            int old = slots.length;
            slots = Arrays.copyOf(slots, old * 2);
            free = Arrays.copyOf(free, old * 2);
            for (int i = old; i < slots.length; i++) {
                slots[i] = new Pending(i);
                free[freeCount++] = i;
            }
        }
        return slots[free[--freeCount]];
    }

    private void recycle(Pending p) {
        OperationResource owned = p.keep2 instanceof OperationResource r ? r : null;
        guard.lock();
        try {
            if (p.memory != null) {
                p.memory.endUse();
            }
            if (p.upcall) {
                upcallSources--;
            }
            p.clear();
            free[freeCount++] = p.id;
        } finally {
            guard.unlock();
            if (owned != null) {
                owned.close(); // UCX is done with it: the operation completed, failed to start or was released
            }
        }
    }

    // ---- the worker closing ----------------------------------------------------------------------------------------

    private static boolean isPolledInFlight(Pending p) {
        return p.token != 0 && (p.token & 1L) == 0;
    }

    /** Cancels the polled receives still posted, so that closing endpoints (which progresses) matches none. */
    void cancelPostedReceives(MemorySegment worker) {
        for (Pending p : slots) {
            if (isPolledInFlight(p) && (p.kind == Pending.TAG_RECV || p.kind == Pending.STREAM_RECV)) {
                ucp_request_cancel(worker, MemorySegment.ofAddress(p.request));
            }
        }
    }

    /** Before {@code ucp_worker_destroy}: cancels and frees every polled request; UCX frees each when it ends. */
    void freeRequestsInFlight(MemorySegment worker) {
        for (Pending p : slots) {
            if (isPolledInFlight(p)) {
                MemorySegment r = MemorySegment.ofAddress(p.request);
                ucp_request_cancel(worker, r);
                ucp_request_free(r);
            }
        }
    }

    /**
     * After {@code ucp_worker_destroy}: ends what the operations still in flight held (registered memory, IOV
     * arrays), and reports callback and future operations whose completion never came as canceled, so that no
     * future waits forever. A callback's exception goes to {@code failures}.
     */
    void abandonAll(Upcalls failures) {
        for (Pending p : slots) {
            if (isPolledInFlight(p)) {
                polledInFlight--;
                recycle(p);
            }
        }
        for (Pending p : slots) {
            if (p.op != null) {
                try {
                    deliver(p, UCS_ERR_CANCELED(), 0, 0);
                } catch (Throwable t) {
                    failures.failed(t);
                }
            }
        }
    }

    @Override
    public String toString() {
        return "RequestTable[" + inFlightCount() + " in flight, " + capacity() + " slots]";
    }
}
