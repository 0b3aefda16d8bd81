package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_am_handler_param;
import io.github.ucxffm.bindings.ucp_am_recv_param;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static io.github.ucxffm.bindings.ucx_h.UCP_AM_HANDLER_PARAM_FIELD_ARG;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_HANDLER_PARAM_FIELD_CB;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_HANDLER_PARAM_FIELD_ID;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FIELD_REPLY_EP;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_DATA;
import static io.github.ucxffm.bindings.ucx_h.UCS_OK;
import static io.github.ucxffm.bindings.ucx_h.ucp_worker_set_am_recv_handler;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A worker's active-message receive side: the handlers by id, the dispatch of UCX's one
 * {@code ucp_am_recv_callback_t} stub (its {@code arg} is the id) and of the worker's {@link AmQueue} to them, and the
 * descriptors handlers {@linkplain UcpAmMessage#keep() kept} and the application has not used yet, released when the
 * worker closes.
 * <p>
 * Handlers are an array copied on write and read without locking by the upcall; the handler is published before UCX
 * can call it and withdrawn only after UCX stopped. The {@link UcpAmMessage} view passed to handlers is reused; a
 * nested delivery (a handler's own send delivered at once) gets a fresh one.
 */
final class AmDispatcher {

    private final UcpWorker worker;
    private final MemorySegment stub;
    /** The worker's memory, for the queue. */
    private final Arena arena;
    /** Whether the worker may use a queue ({@link AmQueue#usable}). */
    private final boolean queueUsable;
    /**
     * Where small messages wait for {@link #deliverQueued()}, made with the first handler (a worker without one pays
     * neither its memory nor a look at it per progress call); {@code null}: every message comes by upcall. Written
     * and read by the thread that uses the worker (never a MULTI one).
     */
    private AmQueue queue;
    /** Messages handed to handlers from the queue and by upcall: the tests' and the bench's proof of the path. */
    long deliveredQueued;
    long deliveredByUpcall;

    private volatile UcpAmHandler[] handlers = new UcpAmHandler[0];
    private final UcpAmMessage view;
    /** Descriptors kept by handlers and not yet used, by address. */
    private final Registry<UcpAmData> kept;

    AmDispatcher(UcpWorker worker, Guard guard, MemorySegment stub, Arena arena, boolean queueUsable) {
        this.worker = worker;
        this.kept = new Registry<>(guard);
        this.stub = stub;
        this.arena = arena;
        this.queueUsable = queueUsable;
        this.view = new UcpAmMessage(worker);
    }

    static void checkId(int id) {
        if (id < 0 || id > 0xFFFF) {
            throw new IllegalArgumentException("active-message id must be in [0, 65535]: " + id);
        }
    }

    /** Registers ({@code handler != null}) or unregisters the handler of {@code id} with UCX and here. */
    void set(MemorySegment workerHandle, int id, UcpAmHandler handler, int flags) {
        checkId(id);
        int known = UcpAmHandler.WHOLE_MESSAGE | UcpAmHandler.PERSISTENT_DATA;
        if ((flags & ~known) != 0) {
            throw new IllegalArgumentException("unknown active-message handler flags 0x"
                    + Integer.toHexString(flags & ~known) + " (use UcpAmHandler.WHOLE_MESSAGE, PERSISTENT_DATA)");
        }
        if (handler != null) {
            publish(id, handler); // before UCX can call it
        }
        try (Arena call = Arena.ofConfined()) {
            MemorySegment p = ucp_am_handler_param.allocate(call);
            ucp_am_handler_param.field_mask(p, UCP_AM_HANDLER_PARAM_FIELD_ID() | UCP_AM_HANDLER_PARAM_FIELD_FLAGS()
                    | UCP_AM_HANDLER_PARAM_FIELD_CB() | UCP_AM_HANDLER_PARAM_FIELD_ARG());
            ucp_am_handler_param.id(p, id);
            ucp_am_handler_param.flags(p, handler == null ? 0 : flags);
            if (handler == null) {
                ucp_am_handler_param.cb(p, MemorySegment.NULL);
            } else if (queueUsable) {
                if (queue == null) {
                    queue = AmQueue.create(arena, stub);
                }
                ucp_am_handler_param.cb(p, queue.callback());
                ucp_am_handler_param.arg(p, queue.arg(id, (flags & UcpAmHandler.PERSISTENT_DATA) != 0));
            } else {
                ucp_am_handler_param.cb(p, stub);
                ucp_am_handler_param.arg(p, MemorySegment.ofAddress(id));
            }
            byte status = ucp_worker_set_am_recv_handler(workerHandle, p);
            if (status != UCS_OK()) {
                if (handler != null) {
                    publish(id, null);
                }
                throw UcxException.of("ucp_worker_set_am_recv_handler(id " + id + ")", status);
            }
        }
        if (handler == null) {
            publish(id, null); // after UCX stopped calling it
        }
    }

    private void publish(int id, UcpAmHandler handler) {
        synchronized (view) {
            UcpAmHandler[] current = handlers;
            if (handler == null && id >= current.length) {
                return;
            }
            UcpAmHandler previous = id < current.length ? current[id] : null;
            UcpAmHandler[] next = Arrays.copyOf(current, Math.max(current.length, id + 1));
            next[id] = handler;
            handlers = next;
            // a registered handler is a way for UCX's progress to call into Java: the worker is not quiet
            if (previous == null && handler != null) {
                worker.requests.addUpcallSource();
            } else if (previous != null && handler == null) {
                worker.requests.removeUpcallSource();
            }
        }
    }

    /** The worker's queue, {@code null} when it has none (for tests). */
    AmQueue queue() {
        return queue;
    }

    /** Whether the worker's small messages come through an {@link AmQueue} once it has a handler (for tests). */
    boolean queued() {
        return queueUsable;
    }

    /** Whether queued messages wait for {@link #deliverQueued()}: asked after every progress call. */
    boolean hasQueued() {
        return queue != null && queue.hasQueued();
    }

    /**
     * Hands the queued messages to their handlers, in the order they came, as callbacks of the worker (the rules of
     * {@link Upcalls} hold in them as in an upcall). A handler may make more messages arrive (a send to its own
     * worker): they are handed on in this call too. Never throws.
     */
    void deliverQueued() {
        AmQueue q = queue;
        worker.upcalls.enter();
        q.depth++;
        try {
            for (long head = q.head(); q.next != head; head = q.head()) {
                long slot = q.slot(q.next++);
                long headerLength = RawCalls.NATIVE.get(JAVA_LONG, slot + AmQueue.SLOT_HEADER_LENGTH);
                long header = slot + AmQueue.SLOT_FIELDS;
                // a copy: UCX took the descriptor back, if there was one
                long attr = RawCalls.NATIVE.get(JAVA_LONG, slot + AmQueue.SLOT_ATTR) & ~UCP_AM_RECV_ATTR_FLAG_DATA();
                long replyEp = (attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP()) != 0
                        ? RawCalls.NATIVE.get(JAVA_LONG, slot + AmQueue.SLOT_REPLY_EP) : 0;
                deliveredQueued++;
                handle((int) RawCalls.NATIVE.get(JAVA_LONG, slot + AmQueue.SLOT_ID), header, headerLength,
                        header + headerLength, RawCalls.NATIVE.get(JAVA_LONG, slot + AmQueue.SLOT_LENGTH), attr,
                        replyEp);
            }
        } finally {
            // the slots go back when the outermost call is done: a nested call's handler may still read one
            if (--q.depth == 0) {
                q.release();
            }
            worker.upcalls.exit();
        }
    }

    /**
     * The upcall's body: runs the handler of the message's id ({@code arg}), after what waits in the queue, which came
     * first; never throws (it runs inside the upcall).
     */
    byte onMessage(long arg, long header, long headerLength, long data, long length, long param) {
        if (queue != null && queue.hasQueued()) {
            deliverQueued();
        }
        long attr = RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED, param + ucp_am_recv_param.recv_attr$offset());
        long replyEp = (attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP()) != 0
                ? RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED, param + ucp_am_recv_param.reply_ep$offset()) : 0;
        deliveredByUpcall++;
        return handle((int) arg, header, headerLength, data, length, attr, replyEp);
    }

    /** Runs the handler of {@code id}; never throws. */
    private byte handle(int id, long header, long headerLength, long data, long length, long attr, long replyEp) {
        UcpAmMessage message = null;
        try {
            UcpAmHandler[] current = handlers;
            UcpAmHandler handler = id < current.length ? current[id] : null;
            if (handler == null) {
                return (byte) UCS_OK(); // unregistered meanwhile: drop it, as UCX does
            }
            message = view.isActive() ? new UcpAmMessage(worker) : view;
            message.begin(id, header, headerLength, data, length, attr, replyEp);
            handler.onMessage(message);
            return message.end(false);
        } catch (Throwable t) {
            worker.upcalls.failed(t);
            return message == null ? (byte) UCS_OK() : message.end(true);
        }
    }

    // ---- kept descriptors ------------------------------------------------------------------------------------------

    UcpAmData keep(long descriptor, long length, boolean rendezvous) {
        UcpAmData d = new UcpAmData(worker, descriptor, length, rendezvous);
        kept.put(descriptor, d);
        return d;
    }

    void forget(long descriptor) {
        kept.remove(descriptor);
    }

    int keptCount() {
        return kept.size();
    }

    /** Gives back to UCX what handlers kept and the application did not use; the worker is closing. */
    void releaseKept() {
        for (long descriptor : kept.keys()) {
            UcpAmData d = kept.remove(descriptor);
            if (d != null) {
                d.releaseWithWorker();
            }
        }
    }
}
