package io.github.ucxffm.bench.perftest;

import io.github.ucxffm.UcsStatus;
import io.github.ucxffm.bindings.ucp_am_handler_param_t;
import io.github.ucxffm.bindings.ucp_am_recv_param_t;
import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import static io.github.ucxffm.bindings.ucx_h.UCP_AM_FLAG_WHOLE_MSG;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_HANDLER_PARAM_FIELD_CB;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_HANDLER_PARAM_FIELD_ID;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_RNDV;
import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_FLAGS;
import static io.github.ucxffm.bindings.ucx_h.UCP_STREAM_RECV_FLAG_WAITALL;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The third kind of block of a paired run ({@code --paired}): the C loop of {@code bench/native/ucp_paired.c}, step
 * for step, written in Java against UCP through plain downcalls, with none of the binding's code: no token, no
 * request table, no check of state, thread or range. It measures what calling UCX from Java costs at all, so that a
 * paired run splits the binding's distance from C in two: plain FFM against C (the price of the language boundary,
 * which no binding can avoid) and ucx-ffm against plain FFM (the binding's own work).
 * <p>
 * Every pointer goes as a raw address ({@code long}), as in the binding's hot paths. The request test and free are
 * critical downcalls ({@link Linker.Option#critical}), as the binding makes them; the operations and progress are
 * critical too when {@code critical} says nothing can call back into Java on the worker (the runner's endpoint has
 * no error callback and no active-message handler is set), as the binding's are then. Not thread-safe; allocates
 * nothing per round trip.
 * <p>
 * Active messages go on an id of their own, as the C loop's do, with a handler of this class's own: an upcall
 * stub on a static method that counts each message and keeps a rendezvous message's data, which the waiting loop
 * fetches into the receive buffer, as the runner and the C loop do. One such loop per process.
 */
final class FfmPairedLoop {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);
    private static final byte INPROGRESS = (byte) ucx_h.UCS_INPROGRESS();
    private static final long ERR_LAST = ucx_h.UCS_ERR_LAST();

    // ucs_status_t ucp_request_check_status(void *request); void ucp_request_free(void *request)
    private static final MethodHandle CHECK = handle(ucx_h.ucp_request_check_status$address(),
            FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG), true);
    private static final MethodHandle FREE = handle(ucx_h.ucp_request_free$address(),
            FunctionDescriptor.ofVoid(JAVA_LONG), true);
    // unsigned ucp_worker_progress(worker)
    private static final FunctionDescriptor PROGRESS = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
    // ucp_tag_send_nbx(ep, buffer, count, tag, param), ucp_tag_send_sync_nbx the same
    private static final FunctionDescriptor TAG_SEND = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_tag_recv_nbx(worker, buffer, count, tag, tag_mask, param)
    private static final FunctionDescriptor TAG_RECV = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_stream_send_nbx(ep, buffer, count, param)
    private static final FunctionDescriptor STREAM_SEND = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG);
    // ucp_stream_recv_nbx(ep, buffer, count, length*, param)
    private static final FunctionDescriptor STREAM_RECV = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);

    // ucp_am_send_nbx(ep, id, header, header_length, buffer, count, param)
    private static final FunctionDescriptor AM_SEND = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_am_recv_data_nbx(worker, data_desc, buffer, count, param)
    private static final FunctionDescriptor AM_RECV_DATA = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucs_status_t (*ucp_am_recv_callback_t)(arg, header, header_length, data, length, param)
    private static final FunctionDescriptor AM_HANDLER = FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final long RECV_ATTR = ucp_am_recv_param_t.recv_attr$offset();
    private static final long RNDV = UCP_AM_RECV_ATTR_FLAG_RNDV();
    /** All of native memory, to read the receive parameters UCX passes by address. */
    private static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    /** Active messages the handler counted; a rendezvous message's kept data (0 when none) and its length. */
    private static long amArrived;
    private static long amKept;
    private static long amKeptLength;

    private final PerfTestType.Operation operation;
    private final MethodHandle progress;
    private final MethodHandle send;
    private final MethodHandle tagRecv;
    private final MethodHandle streamRecv;
    private final MethodHandle amRecvData;
    /** The id of this loop's active messages. */
    private final int amId;
    private long amAwaited;
    private final long worker;
    private final long endpoint;
    private final long sendBuffer;
    private final long recvBuffer;
    private final long size;
    private final long tag;
    /** An empty {@code ucp_request_param_t}, the C loop's {@code {0}}. */
    private final long plainParam;
    /** {@code UCP_STREAM_RECV_FLAG_WAITALL}, as the C loop's stream receive. */
    private final long streamRecvParam;
    /** Flags 0: active-message sends. */
    private final long amSendParam;
    /** Where a stream receive that completes at once writes its length. */
    private final long lengthOut;

    /**
     * Binds the loop to one worker and endpoint.
     *
     * @param worker    the {@code ucp_worker_h}
     * @param endpoint  the {@code ucp_ep_h}
     * @param operation tag, synchronous tag or stream
     * @param send      the send buffer
     * @param recv      the receive buffer
     * @param size      message size
     * @param tag       the tag of tag messages; for active messages the id of this loop's messages, on which this
     *                  constructor registers its handler (before the peer can send one)
     * @param critical  whether nothing can call back into Java on this worker, so that the operations and progress
     *                  may be critical downcalls
     * @param arena     where the parameter structs live
     */
    FfmPairedLoop(MemorySegment worker, MemorySegment endpoint, PerfTestType.Operation operation, MemorySegment send,
                  MemorySegment recv, long size, long tag, boolean critical, Arena arena) {
        this.operation = operation;
        this.progress = handle(ucx_h.ucp_worker_progress$address(), PROGRESS, critical);
        this.send = switch (operation) {
            case TAG -> handle(ucx_h.ucp_tag_send_nbx$address(), TAG_SEND, critical);
            case TAG_SYNC -> handle(ucx_h.ucp_tag_send_sync_nbx$address(), TAG_SEND, critical);
            case STREAM -> handle(ucx_h.ucp_stream_send_nbx$address(), STREAM_SEND, critical);
            case AM -> handle(ucx_h.ucp_am_send_nbx$address(), AM_SEND, critical);
            default -> throw new UnsupportedOperationException("--paired has no plain FFM loop for " + operation);
        };
        this.tagRecv = handle(ucx_h.ucp_tag_recv_nbx$address(), TAG_RECV, critical);
        this.streamRecv = handle(ucx_h.ucp_stream_recv_nbx$address(), STREAM_RECV, critical);
        this.amRecvData = handle(ucx_h.ucp_am_recv_data_nbx$address(), AM_RECV_DATA, critical);
        this.amId = (int) tag;
        this.worker = worker.address();
        this.endpoint = endpoint.address();
        this.sendBuffer = send.address();
        this.recvBuffer = recv.address();
        this.size = size;
        this.tag = tag;
        this.plainParam = ucp_request_param_t.allocate(arena).fill((byte) 0).address();
        MemorySegment waitAll = ucp_request_param_t.allocate(arena).fill((byte) 0);
        ucp_request_param_t.op_attr_mask(waitAll, UCP_OP_ATTR_FIELD_FLAGS());
        ucp_request_param_t.flags(waitAll, UCP_STREAM_RECV_FLAG_WAITALL());
        this.streamRecvParam = waitAll.address();
        MemorySegment amSend = ucp_request_param_t.allocate(arena).fill((byte) 0);
        ucp_request_param_t.op_attr_mask(amSend, UCP_OP_ATTR_FIELD_FLAGS());
        this.amSendParam = amSend.address();
        this.lengthOut = arena.allocate(JAVA_LONG).address();
        if (operation == PerfTestType.Operation.AM) {
            if (critical) {
                throw new IllegalArgumentException("active messages call back: the loop's calls cannot be critical");
            }
            setHandler(worker, amId, arena);
        }
    }

    /** Registers {@link #onActiveMessage} as the handler of {@code id}, with UCX's whole-message flag. */
    private static void setHandler(MemorySegment worker, int id, Arena arena) {
        MemorySegment stub;
        try {
            stub = LINKER.upcallStub(MethodHandles.lookup().findStatic(FfmPairedLoop.class, "onActiveMessage",
                    MethodType.methodType(byte.class, long.class, long.class, long.class, long.class, long.class,
                            long.class)), AM_HANDLER, arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        MemorySegment param = ucp_am_handler_param_t.allocate(arena);
        ucp_am_handler_param_t.field_mask(param, UCP_AM_HANDLER_PARAM_FIELD_ID() | UCP_AM_HANDLER_PARAM_FIELD_FLAGS()
                | UCP_AM_HANDLER_PARAM_FIELD_CB());
        ucp_am_handler_param_t.id(param, id);
        ucp_am_handler_param_t.flags(param, UCP_AM_FLAG_WHOLE_MSG());
        ucp_am_handler_param_t.cb(param, stub);
        byte status = ucx_h.ucp_worker_set_am_recv_handler(worker, param);
        if (status != 0) {
            throw failed("handler registration", status);
        }
    }

    /** The handler: counts the message and keeps a rendezvous message's data for {@link #awaitActiveMessage}. */
    private static byte onActiveMessage(long arg, long header, long headerLength, long data, long length,
                                        long param) {
        amArrived++;
        if ((NATIVE.get(JAVA_LONG, param + RECV_ATTR) & RNDV) != 0) {
            amKept = data;
            amKeptLength = length;
            return INPROGRESS;
        }
        return 0;
    }

    private static MethodHandle handle(MemorySegment symbol, FunctionDescriptor descriptor, boolean critical) {
        return critical ? LINKER.downcallHandle(symbol, descriptor, CRITICAL)
                : LINKER.downcallHandle(symbol, descriptor);
    }

    /**
     * The client's {@code n} round trips: send and wait, then receive and wait.
     *
     * @param n      round trips
     * @param stamps filled with {@link System#nanoTime()} after each
     */
    void ping(int n, long[] stamps) {
        try {
            for (int i = 0; i < n; i++) {
                sendOne();
                receiveOne();
                stamps[i] = System.nanoTime();
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("plain FFM ping", t);
        }
    }

    /**
     * The server's {@code n} round trips: receive and wait, then send and wait.
     *
     * @param n round trips
     */
    void pong(int n) {
        try {
            for (int i = 0; i < n; i++) {
                receiveOne();
                sendOne();
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("plain FFM pong", t);
        }
    }

    private void sendOne() throws Throwable {
        long request = switch (operation) {
            case STREAM -> (long) send.invokeExact(endpoint, sendBuffer, size, plainParam);
            // flags 0, as the runner's active-message send
            case AM -> (long) send.invokeExact(endpoint, amId, 0L, 0L, sendBuffer, size, amSendParam);
            default -> (long) send.invokeExact(endpoint, sendBuffer, size, tag, plainParam);
        };
        waitFor(request, "send");
    }

    private void receiveOne() throws Throwable {
        switch (operation) {
            case STREAM -> waitFor((long) streamRecv.invokeExact(endpoint, recvBuffer, size, lengthOut,
                    streamRecvParam), "receive");
            case AM -> awaitActiveMessage();
            default -> waitFor((long) tagRecv.invokeExact(worker, recvBuffer, size, tag, -1L, plainParam),
                    "receive");
        }
    }

    /** Progresses until the next active message has arrived and its data, if kept, is in the receive buffer. */
    private void awaitActiveMessage() throws Throwable {
        amAwaited++;
        while (amArrived < amAwaited) {
            int ignored = (int) progress.invokeExact(worker);
        }
        long data = amKept;
        if (data != 0) {
            amKept = 0;
            waitFor((long) amRecvData.invokeExact(worker, data, recvBuffer, Math.min(amKeptLength, size),
                    plainParam), "active-message data receive");
        }
    }

    /** The C loop's wait_for: nothing for a completed operation, else test before each progress call, then free. */
    private void waitFor(long request, String what) throws Throwable {
        if (request == 0) {
            return;
        }
        if (Long.compareUnsigned(request, ERR_LAST) >= 0) {
            throw failed(what, (byte) request);
        }
        byte status;
        while ((status = (byte) CHECK.invokeExact(request)) == INPROGRESS) {
            int ignored = (int) progress.invokeExact(worker);
        }
        FREE.invokeExact(request);
        if (status != 0) {
            throw failed(what, status);
        }
    }

    private static IllegalStateException failed(String what, byte status) {
        UcsStatus s = UcsStatus.of(status);
        return new IllegalStateException("plain FFM " + what + " failed: " + s + " (" + s.description() + ")");
    }
}
