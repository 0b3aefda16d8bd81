package io.github.ucxffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.support.UcpInline;

import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_DATATYPE;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_CANCELED;
import static io.github.ucxffm.bindings.ucx_h.UCS_INPROGRESS;
import static io.github.ucxffm.bindings.ucx_h.UCS_OK;
import static io.github.ucxffm.bindings.ucx_h.ucp_am_data_release;
import static io.github.ucxffm.bindings.ucx_h.ucp_am_recv_data_nbx;

/**
 * The data of an active message that a handler {@link UcpAmMessage#keep() kept}: a UCX data descriptor, owned by
 * the application until it is used once, by {@link #release()} or by one of the {@code receive} methods.
 * <p>
 * Eager data is already here: read it with {@link #data()}, then {@link #release()} it ({@code ucp_am_data_release}),
 * or copy it out with {@link #receive}. Rendezvous data is still at the sender: {@link #receive} fetches it
 * ({@code ucp_am_recv_data_nbx}), which takes progress on both workers, and completes the sender's operation;
 * {@link #release()} drops it, and the sender's operation completes all the same.
 * <p>
 * <b>Ownership.</b> The descriptor holds UCX memory (and, for rendezvous, a sender waiting): use it once, soon. A
 * second use throws {@link IllegalStateException}. What is still held when the worker closes is released by the
 * worker; the object is then unusable.
 * <p>
 * <b>Threads.</b> Those of the worker that received the message: for a SINGLE worker, its owner thread only.
 */
public final class UcpAmData {

    private static final byte OWNED = 0;
    private static final byte RECEIVING = 1;
    private static final byte RELEASED = 2;
    private static final byte CLOSED_WITH_WORKER = 3;
    private static final String OP = "ucp_am_recv_data_nbx";

    private final UcpWorker worker;
    private final long descriptor;
    private final long length;
    private final boolean rendezvous;
    private byte state = OWNED;
    /** Set while the handler that kept it runs: UCX then still holds the descriptor and frees it on our status. */
    private boolean inCallback = true;
    /** A rendezvous receive started during the handler call: UCX must keep the descriptor. */
    private boolean receiveStartedInCallback;
    /** Scope of {@link #data()}, closed with the descriptor so that a stale segment throws instead of crashing. */
    private Arena scope;
    private MemorySegment segment;

    UcpAmData(UcpWorker worker, long descriptor, long length, boolean rendezvous) {
        this.worker = worker;
        this.descriptor = descriptor;
        this.length = length;
        this.rendezvous = rendezvous;
    }

    long descriptor() {
        return descriptor;
    }

    /**
     * The length of the data.
     *
     * @return bytes
     */
    public long length() {
        return length;
    }

    /**
     * Whether the data is still at the sender, to be fetched with {@link #receive}.
     *
     * @return {@code true} for rendezvous data
     */
    public boolean isRendezvous() {
        return rendezvous;
    }

    /**
     * Whether this object still owns the descriptor: not yet released, received or dropped with the worker.
     *
     * @return {@code true} until the descriptor has been used
     */
    public boolean isHeld() {
        return state == OWNED;
    }

    private void checkHeld() {
        worker.check();
        if (state != OWNED) {
            throw new IllegalStateException(switch (state) {
                case RECEIVING -> "this active-message data was already received; a descriptor is used once";
                case RELEASED -> "this active-message data was already released; a descriptor is used once";
                default -> "this active-message data was released when its worker closed";
            });
        }
    }

    /**
     * The eager data, in UCX's memory.
     *
     * @return the bytes; valid until {@link #release()} or {@link #receive} (then an access throws
     *         {@link IllegalStateException})
     * @throws IllegalStateException for rendezvous data, or after the descriptor was used
     */
    public MemorySegment data() {
        checkHeld();
        if (rendezvous) {
            throw new IllegalStateException("rendezvous active-message data is still at the sender: receive it");
        }
        if (segment == null) {
            // A confined scope for a single-thread worker (cheap to close); a shared one when threads take turns.
            scope = worker.threadMode() == UcsThreadMode.SINGLE ? Arena.ofConfined() : Arena.ofShared();
            segment = MemorySegment.ofAddress(descriptor).reinterpret(length, scope, null);
        }
        return segment;
    }

    /**
     * Gives the descriptor back to UCX ({@code ucp_am_data_release}). For rendezvous data this drops the data,
     * and the sender's operation completes successfully.
     *
     * @throws IllegalStateException if the descriptor was already used
     */
    public void release() {
        checkHeld();
        consume(RELEASED);
        if (!inCallback) {
            // During the handler call UCX still owns it and frees it on the handler's status instead.
            ucp_am_data_release(worker.nativeHandleUnchecked(), MemorySegment.ofAddress(descriptor));
        }
    }

    /** Checks the destination, then takes the descriptor out of this object's hands. */
    private MemorySegment claim(MemorySegment dst, long offset) {
        checkHeld();
        Objects.requireNonNull(dst, "dst");
        Buffers.checkRange(dst, offset, length);
        consume(RECEIVING);
        return Buffers.at(dst, offset);
    }

    /** Eager data is here: copied in Java; UCX then frees the descriptor (now, or on the handler's status). */
    private void copyEager(MemorySegment at) {
        MemorySegment.copy(MemorySegment.ofAddress(descriptor).reinterpret(length), 0, at, 0, length);
        if (!inCallback) {
            ucp_am_data_release(worker.nativeHandleUnchecked(), MemorySegment.ofAddress(descriptor));
        }
    }

    private MemorySegment startRendezvous(MemorySegment at, MemorySegment param) {
        if (inCallback) {
            receiveStartedInCallback = true;
        }
        // From here on UCX owns the descriptor, whatever the call returns.
        return ucp_am_recv_data_nbx(worker.handle(), MemorySegment.ofAddress(descriptor), at, length, param);
    }

    /**
     * Receives the data into {@code dst} at {@code offset}: for rendezvous data, starts fetching it
     * ({@code ucp_am_recv_data_nbx}), which needs progress on both workers; eager data is copied at once. After
     * completion {@link UcpWorker#receivedLength()} is {@link #length()}. May be called in the handler.
     *
     * @param dst    native memory with room for {@link #length()} bytes from {@code offset}; belongs to the operation
     *               until it completes
     * @param offset start in {@code dst}
     * @return a request token for {@link UcpWorker#poll(long)} ({@link UcpWorker#COMPLETED} for eager data)
     * @throws IllegalStateException if the descriptor was already used
     */
    public long receive(MemorySegment dst, long offset) {
        MemorySegment at = claim(dst, offset);
        if (!rendezvous) {
            copyEager(at);
            worker.scratch.get().receivedLength = length;
            return UcpWorker.COMPLETED;
        }
        MemorySegment param = worker.param();
        int slot = worker.requests.reserve(RequestTable.AM_RECV, OP, null, dst, this);
        worker.requests.expectLength(slot, length);
        long token = worker.requests.started(startRendezvous(at, param), slot);
        if (token == UcpWorker.COMPLETED) {
            worker.scratch.get().receivedLength = length;
        }
        return token;
    }

    /**
     * Receives the data scattered over several segments: the bytes fill {@code iov[0]}, then {@code iov[1]}, and so
     * on. For rendezvous data this is {@code ucp_am_recv_data_nbx} with the {@code ucp_dt_make_iov()} datatype;
     * eager data is copied at once. After completion {@link UcpWorker#receivedLength()} is {@link #length()}.
     *
     * @param iov native segments with room for {@link #length()} bytes together; they belong to the operation until
     *            it completes
     * @return a request token ({@link UcpWorker#COMPLETED} for eager data)
     * @throws IndexOutOfBoundsException if the segments are too small (the descriptor stays held)
     * @throws IllegalStateException     if the descriptor was already used
     */
    public long receive(MemorySegment[] iov) {
        checkHeld();
        IovList list = worker.iovList(iov);
        if (list.totalLength() < length) {
            list.close();
            throw new IndexOutOfBoundsException("the segments hold " + list.totalLength() + " bytes, the message has "
                    + length);
        }
        consume(RECEIVING);
        if (!rendezvous) {
            MemorySegment src = MemorySegment.ofAddress(descriptor).reinterpret(length);
            long done = 0;
            for (int i = 0; i < iov.length && done < length; i++) {
                long n = Math.min(iov[i].byteSize(), length - done);
                MemorySegment.copy(src, done, iov[i], 0, n);
                done += n;
            }
            if (!inCallback) {
                ucp_am_data_release(worker.nativeHandleUnchecked(), MemorySegment.ofAddress(descriptor));
            }
            list.close();
            worker.scratch.get().receivedLength = length;
            return UcpWorker.COMPLETED;
        }
        MemorySegment param = worker.param();
        ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_DATATYPE());
        ucp_request_param_t.datatype(param, UcpInline.ucp_dt_make_iov());
        int slot = worker.requests.reserve(RequestTable.AM_RECV, OP, null, this, list);
        worker.requests.expectLength(slot, length);
        if (inCallback) {
            receiveStartedInCallback = true;
        }
        long token = worker.requests.started(ucp_am_recv_data_nbx(worker.handle(),
                MemorySegment.ofAddress(descriptor), list.array(), list.count(), param), slot);
        if (token == UcpWorker.COMPLETED) {
            worker.scratch.get().receivedLength = length;
        }
        return token;
    }

    /**
     * Receives the data into {@code dst}; {@code callback} runs once with the received length.
     *
     * @param dst      native memory with room for {@link #length()} bytes from {@code offset}; belongs to the
     *                 operation until the callback runs
     * @param offset   start in {@code dst}
     * @param callback called on the progressing thread, or before this method returns (always so for eager data)
     * @throws IllegalStateException if the descriptor was already used
     */
    public void receive(MemorySegment dst, long offset, UcpCallback callback) {
        Objects.requireNonNull(callback, "callback");
        MemorySegment at = claim(dst, offset);
        start(at, worker.requests.reserveCompletion(RequestTable.AM_RECV, OP, null, dst, this, null, callback, null,
                length));
    }

    /**
     * Receives the data into {@code dst}, completing a future (allocates; for control paths and simple code).
     *
     * @param dst    native memory with room for {@link #length()} bytes from {@code offset}; belongs to the operation
     *               until the future completes
     * @param offset start in {@code dst}
     * @return a future of the received length, completed on the progressing thread
     * @throws IllegalStateException if the descriptor was already used
     */
    public CompletableFuture<Long> receiveAsync(MemorySegment dst, long offset) {
        MemorySegment at = claim(dst, offset);
        CompletableFuture<Long> future = new CompletableFuture<>();
        start(at, worker.requests.reserveCompletion(RequestTable.AM_RECV, OP, null, dst, this, null, null, future,
                length));
        return future;
    }

    private void start(MemorySegment at, int slot) {
        if (!rendezvous) {
            copyEager(at);
            worker.requests.startedWithCallback(MemorySegment.NULL, slot, length, 0);
            return;
        }
        MemorySegment param = worker.param();
        worker.requests.callbackParams(param, 0, worker.upcalls.amRecvDataStub, slot);
        worker.requests.startedWithCallback(startRendezvous(at, param), slot, length, 0);
    }

    private void consume(byte newState) {
        state = newState;
        worker.am.forget(descriptor);
        closeScope();
    }

    private void closeScope() {
        if (scope != null) {
            Arena s = scope;
            scope = null;
            segment = null;
            s.close();
        }
    }

    /**
     * The handler that kept this data returned or threw; never throws (it runs inside the upcall).
     *
     * @return the status the handler gives UCX
     */
    byte callbackEnded(boolean handlerFailed) {
        inCallback = false;
        if (state == OWNED) {
            if (!handlerFailed) {
                return (byte) UCS_INPROGRESS();
            }
            // The application may still hold this object: make it unusable, and let UCX free the descriptor.
            state = RELEASED;
            worker.am.forget(descriptor);
            try {
                closeScope();
            } catch (Throwable t) {
                worker.upcalls.failed(t);
            }
            // An error status is allowed for rendezvous only: UCX drops the data, and the sender's operation
            // completes with it.
            return (byte) (rendezvous ? UCS_ERR_CANCELED() : UCS_OK());
        }
        return (byte) (receiveStartedInCallback ? UCS_INPROGRESS() : UCS_OK());
    }

    /** The worker is closing: give the descriptor back to UCX. */
    void releaseWithWorker() {
        if (state != OWNED) {
            return;
        }
        state = CLOSED_WITH_WORKER;
        try {
            closeScope();
        } finally {
            ucp_am_data_release(worker.nativeHandleUnchecked(), MemorySegment.ofAddress(descriptor));
        }
    }

    @Override
    public String toString() {
        return "UcpAmData[" + length + " B" + (rendezvous ? ", rendezvous" : "") + (state == OWNED ? ", held]"
                : ", used]");
    }
}
