package io.github.ucxffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_DATA;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_RNDV;
import static io.github.ucxffm.bindings.ucx_h.UCS_OK;

/**
 * One incoming active message, as a {@link UcpAmHandler} sees it: the user header, the data (or, for a rendezvous
 * message, its length and a descriptor to fetch it with), and the endpoint to reply on.
 * <p>
 * <b>Ownership and validity.</b> The worker owns this object and reuses it for the next message: it is valid only
 * during the {@link UcpAmHandler#onMessage} call it was passed to. The segments it returns are closed when that call
 * returns (a later access throws {@link IllegalStateException}); a reference kept beyond the call may show a later
 * message. To own the data beyond the call, {@link #keep()} it.
 * <p>
 * <b>Allocation.</b> {@link #header()} and {@link #data()} make segments of UCX's memory that are closed when the call
 * returns, which takes a confined {@link Arena} per message (made on the first of them). A handler on a hot path reads
 * with {@link #copyHeader} and {@link #copyData} instead, which check the same bounds and allocate nothing.
 * <p>
 * <b>Thread.</b> The progressing thread that runs the handler, during the call.
 */
public final class UcpAmMessage {

    private final UcpWorker worker;
    private boolean active;
    private int id;
    private long header;
    private long headerLength;
    private long data;
    private long length;
    private long attributes;
    private long replyEp;
    /** Closed when the handler returns; made on first use, so a handler that reads nothing allocates nothing. */
    private Arena scope;
    private UcpEndpoint reply;
    /** A wrapper of an endpoint UCX made for the peer; valid during the call only (see {@link #replyEndpoint()}). */
    private UcpEndpoint borrowedReply;
    private UcpAmData kept;

    UcpAmMessage(UcpWorker worker) {
        this.worker = worker;
    }

    boolean isActive() {
        return active;
    }

    void begin(int amId, long headerAddress, long headerBytes, long dataAddress, long dataBytes, long attr,
               long replyEndpoint) {
        this.id = amId;
        this.header = headerAddress;
        this.headerLength = headerBytes;
        this.data = dataAddress;
        this.length = dataBytes;
        this.attributes = attr;
        this.replyEp = replyEndpoint;
        this.active = true;
    }

    /**
     * Ends the handler call; never throws (it runs inside the upcall).
     *
     * @return the status for UCX: {@code UCS_INPROGRESS} when the handler kept the data
     */
    byte end(boolean handlerFailed) {
        active = false;
        byte status = (byte) UCS_OK();
        UcpAmData d = kept;
        kept = null;
        if (d != null) {
            status = d.callbackEnded(handlerFailed);
        }
        if (scope != null) {
            Arena s = scope;
            scope = null;
            try {
                s.close();
            } catch (Throwable t) {
                worker.upcalls.failed(t);
            }
        }
        if (borrowedReply != null) {
            UcpEndpoint b = borrowedReply;
            borrowedReply = null;
            try {
                b.close();
            } catch (Throwable t) {
                worker.upcalls.failed(t);
            }
        }
        reply = null;
        return status;
    }

    private void check() {
        if (!active) {
            throw new IllegalStateException("a UcpAmMessage is valid only during the UcpAmHandler call it was "
                    + "passed to; keep() the data to use it later");
        }
    }

    private Arena scope() {
        if (scope == null) {
            scope = Arena.ofConfined();
        }
        return scope;
    }

    /**
     * The worker that received the message.
     *
     * @return the worker
     */
    public UcpWorker worker() {
        return worker;
    }

    /**
     * The active-message id the sender used, which selected the handler.
     *
     * @return the id, 0 to 65535
     */
    public int id() {
        check();
        return id;
    }

    /**
     * The user header ({@code header}, {@code header_length} of the callback).
     *
     * @return the header bytes, read-only in spirit (UCX's memory); {@link MemorySegment#NULL} when the sender sent
     *         none. Closed when the handler returns.
     */
    public MemorySegment header() {
        check();
        if (headerLength == 0) {
            return MemorySegment.NULL;
        }
        return MemorySegment.ofAddress(header).reinterpret(headerLength, scope(), null);
    }

    /**
     * Copies {@code length} bytes of the user header, from {@code offset}, into {@code dst} at {@code dstOffset}:
     * what {@code MemorySegment.copy(header(), offset, dst, dstOffset, length)} does, without making a segment of
     * UCX's memory (so without allocating).
     *
     * @param offset    where in the header to start
     * @param dst       where to copy to; native or heap, not read-only
     * @param dstOffset where in {@code dst}
     * @param length    bytes to copy
     * @throws IndexOutOfBoundsException if the range is not within the header, or not within {@code dst}
     * @throws IllegalStateException     outside the handler call, or if {@code dst}'s arena is closed
     * @throws IllegalArgumentException  if {@code dst} is read-only
     */
    public void copyHeader(long offset, MemorySegment dst, long dstOffset, long length) {
        check();
        copyOut(header, headerLength, "header", offset, dst, dstOffset, length);
    }

    /**
     * Copies {@code length} bytes of the eager data, from {@code offset}, into {@code dst} at {@code dstOffset}: what
     * {@code MemorySegment.copy(data(), offset, dst, dstOffset, length)} does, without making a segment of UCX's
     * memory (so without allocating).
     *
     * @param offset    where in the data to start
     * @param dst       where to copy to; native or heap, not read-only
     * @param dstOffset where in {@code dst}
     * @param length    bytes to copy
     * @throws IndexOutOfBoundsException if the range is not within the data, or not within {@code dst}
     * @throws IllegalStateException     outside the handler call, for a rendezvous message (whose data is not here
     *                                   yet), or if {@code dst}'s arena is closed
     * @throws IllegalArgumentException  if {@code dst} is read-only
     */
    public void copyData(long offset, MemorySegment dst, long dstOffset, long length) {
        requireEagerData();
        copyOut(data, this.length, "data", offset, dst, dstOffset, length);
    }

    /** The check of {@link #data()} and {@link #copyData}: within the call, and the data here (not rendezvous). */
    private void requireEagerData() {
        check();
        if (isRendezvous()) {
            throw new IllegalStateException("the data of a rendezvous active message is still at the sender: "
                    + "keep() the message and receive it with UcpAmData.receive");
        }
    }

    private static void copyOut(long from, long size, String what, long offset, MemorySegment dst, long dstOffset,
                                long length) {
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", " + offset + " + " + length + ") is outside "
                    + "the message's " + what + " of " + size + " bytes");
        }
        // checks dst (bounds, liveness, read-only); the source, UCX's memory of the call, is checked above
        MemorySegment.copy(RawCalls.NATIVE, from + offset, dst, dstOffset, length);
    }

    /**
     * The length of the user header.
     *
     * @return bytes
     */
    public long headerLength() {
        check();
        return headerLength;
    }

    /**
     * The length of the data: of the bytes in {@link #data()}, or for a rendezvous message, of the bytes
     * {@link UcpAmData#receive} will fetch.
     *
     * @return bytes
     */
    public long dataLength() {
        check();
        return length;
    }

    /**
     * Whether the data came by rendezvous ({@code UCP_AM_RECV_ATTR_FLAG_RNDV}): it is still at the sender, and must
     * be fetched with {@link #keep()} and {@link UcpAmData#receive}. A rendezvous message that is not kept is
     * dropped, and the sender's operation completes all the same.
     *
     * @return {@code true} for a rendezvous message
     */
    public boolean isRendezvous() {
        check();
        return (attributes & UCP_AM_RECV_ATTR_FLAG_RNDV()) != 0;
    }

    /**
     * Whether the eager data is in a descriptor that may outlive the call ({@code UCP_AM_RECV_ATTR_FLAG_DATA}), so
     * that {@link #keep()} can hold it. Always so with {@link UcpAmHandler#PERSISTENT_DATA}; otherwise UCX decides
     * (large or fragmented messages usually are), but never for a message small enough for the worker's queue (up to
     * 216 bytes of header and data on Linux x86-64, see {@link UcpAmHandler}), which the handler gets as a copy.
     *
     * @return {@code true} if {@link #keep()} may be called on an eager message
     */
    public boolean hasPersistentData() {
        check();
        return (attributes & UCP_AM_RECV_ATTR_FLAG_DATA()) != 0;
    }

    /**
     * The eager data, in place.
     *
     * @return the data bytes; closed when the handler returns (keep the message to read it later)
     * @throws IllegalStateException for a rendezvous message, whose data is not here yet
     */
    public MemorySegment data() {
        requireEagerData();
        if (length == 0) {
            return MemorySegment.NULL;
        }
        return MemorySegment.ofAddress(data).reinterpret(length, scope(), null);
    }

    /**
     * The endpoint to answer the sender on, when it sent with {@link UcpAmSendFlags#REPLY}.
     * <p>
     * When this worker owns an endpoint for that connection (one it created, or accepted from a listener), that
     * endpoint is returned. Otherwise UCX made the endpoint itself when the peer connected, and owns it (it destroys
     * it when the peer fails): the object returned then wraps it for the duration of the call only, and is closed,
     * without closing UCX's endpoint, when the handler returns. Operations started on it in the handler run to
     * completion.
     *
     * @return the reply endpoint, or {@code null} if the sender did not ask for one
     */
    public UcpEndpoint replyEndpoint() {
        check();
        if (replyEp == 0) {
            return null;
        }
        if (reply == null) {
            UcpEndpoint known = worker.endpoints.get(replyEp);
            if (known != null) {
                reply = known;
            } else {
                borrowedReply = new UcpEndpoint(worker, MemorySegment.ofAddress(replyEp));
                reply = borrowedReply;
            }
        }
        return reply;
    }

    /**
     * Takes ownership of the message's data beyond the call: the handler returns {@code UCS_INPROGRESS} to UCX,
     * which leaves the data (eager) or the rendezvous descriptor to the returned object. Calling it again during the
     * same call returns the same object.
     *
     * @return the data, owned by the caller until {@link UcpAmData#release()} or {@link UcpAmData#receive}
     * @throws IllegalStateException if the eager data is not persistent ({@link #hasPersistentData()} is
     *                               {@code false}): copy it from {@link #data()} instead, or register the handler
     *                               with {@link UcpAmHandler#PERSISTENT_DATA}
     */
    public UcpAmData keep() {
        check();
        if (kept == null) {
            boolean rndv = isRendezvous();
            if (!rndv && !hasPersistentData()) {
                throw new IllegalStateException("the eager data of this active message is not persistent (UCX "
                        + "passed it without UCP_AM_RECV_ATTR_FLAG_DATA): copy it from data(), or register the "
                        + "handler with UcpAmHandler.PERSISTENT_DATA");
            }
            kept = worker.am.keep(data, length, rndv);
        }
        return kept;
    }

    @Override
    public String toString() {
        if (!active) {
            return "UcpAmMessage[not in a handler call]";
        }
        return "UcpAmMessage[id " + id + ", header " + headerLength + " B, data " + length + " B"
                + ((attributes & UCP_AM_RECV_ATTR_FLAG_RNDV()) != 0 ? ", rendezvous" : "")
                + ((attributes & UCP_AM_RECV_ATTR_FLAG_DATA()) != 0 ? ", persistent" : "")
                + (replyEp != 0 ? ", reply endpoint" : "") + "]";
    }
}
