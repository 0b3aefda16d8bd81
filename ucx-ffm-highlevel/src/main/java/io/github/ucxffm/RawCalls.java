package io.github.ucxffm;

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The calls of the operation hot paths, with every pointer passed as a raw address ({@code long}) instead of a
 * {@link MemorySegment}: the same symbols as the generated bindings, with pointer parameters declared as 64-bit
 * integers, which the C ABI passes identically on the 64-bit platforms UCX supports. They sit in every operation
 * and wait loop, so they must not allocate, and a raw address needs neither a segment made for the result nor the
 * scope acquire and release a segment argument costs (an atomic pair for a shared arena's segment).
 * <p>
 * The request test and free calls, and the probe, also come as <em>critical</em> handles
 * ({@link Linker.Option#critical}), which skip the thread-state transition around the call. That is safe only for a
 * call that can neither call back into Java nor wait for something a thread of this JVM must do. Those three never
 * call back; callers pass the worker's choice ({@code critical}: not MULTI, where UCX takes the worker lock inside
 * every call, and a thread spinning on it inside a critical call would hold up a safepoint that the lock's holder,
 * in an upcall, may be waiting for). The operations and progress come in both forms too, and callers pass
 * {@link RequestTable#quiet()}: an operation can call back even without a callback of its own (a send on an
 * endpoint whose peer just failed runs the endpoint's error handler inside the call, a receive that matches a
 * rendezvous message starts the protocol on the sender's endpoint, which may fail the same way, and progress runs
 * every kind of callback), so they are critical only while the worker has nothing registered that UCX could call.
 * An upcall from a critical call aborts the JVM.
 */
final class RawCalls {

    private static final Linker LINKER = Linker.nativeLinker();

    /** All of native memory, for reading the fields of a struct UCX passes by address to an upcall. */
    static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);

    private static MethodHandle plain(MemorySegment symbol, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbol, descriptor);
    }

    private static MethodHandle critical(MemorySegment symbol, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbol, descriptor, CRITICAL);
    }

    private static final FunctionDescriptor STATUS_OF_REQUEST = FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG);
    private static final FunctionDescriptor STATUS_OF_REQUEST_OUT = FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG,
            JAVA_LONG);
    // ucp_worker_progress(worker)
    private static final FunctionDescriptor PROGRESS = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
    // ucp_tag_send_nbx(ep, buffer, count, tag, param), ucp_tag_send_sync_nbx the same
    private static final FunctionDescriptor TAG_SEND = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_tag_recv_nbx(worker, buffer, count, tag, tag_mask, param)
    private static final FunctionDescriptor TAG_RECV = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_tag_probe_nb(worker, tag, tag_mask, remove, info*)
    private static final FunctionDescriptor TAG_PROBE = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_INT, JAVA_LONG);
    // ucp_tag_msg_recv_nbx(worker, buffer, count, message, param)
    private static final FunctionDescriptor TAG_MSG_RECV = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_stream_send_nbx(ep, buffer, count, param)
    private static final FunctionDescriptor STREAM_SEND = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG);
    // ucp_stream_recv_nbx(ep, buffer, count, length*, param)
    private static final FunctionDescriptor STREAM_RECV = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_am_send_nbx(ep, id, header, header_length, buffer, count, param)
    private static final FunctionDescriptor AM_SEND = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_put_nbx(ep, buffer, count, remote_addr, rkey, param), ucp_get_nbx the same
    private static final FunctionDescriptor RMA = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // ucp_atomic_op_nbx(ep, opcode, buffer, count, remote_addr, rkey, param)
    private static final FunctionDescriptor ATOMIC = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);

    private static final MethodHandle CHECK_STATUS = plain(ucx_h.ucp_request_check_status$address(),
            STATUS_OF_REQUEST);
    private static final MethodHandle CHECK_STATUS_C = critical(ucx_h.ucp_request_check_status$address(),
            STATUS_OF_REQUEST);
    private static final MethodHandle TAG_RECV_TEST = plain(ucx_h.ucp_tag_recv_request_test$address(),
            STATUS_OF_REQUEST_OUT);
    private static final MethodHandle TAG_RECV_TEST_C = critical(ucx_h.ucp_tag_recv_request_test$address(),
            STATUS_OF_REQUEST_OUT);
    private static final MethodHandle STREAM_RECV_TEST = plain(ucx_h.ucp_stream_recv_request_test$address(),
            STATUS_OF_REQUEST_OUT);
    private static final MethodHandle STREAM_RECV_TEST_C = critical(ucx_h.ucp_stream_recv_request_test$address(),
            STATUS_OF_REQUEST_OUT);
    private static final MethodHandle FREE = plain(ucx_h.ucp_request_free$address(),
            FunctionDescriptor.ofVoid(JAVA_LONG));
    private static final MethodHandle FREE_C = critical(ucx_h.ucp_request_free$address(),
            FunctionDescriptor.ofVoid(JAVA_LONG));
    // the operations and progress: critical only while the worker is quiet (RequestTable.quiet)
    private static final MethodHandle PROGRESS_H = plain(ucx_h.ucp_worker_progress$address(), PROGRESS);
    private static final MethodHandle PROGRESS_C = critical(ucx_h.ucp_worker_progress$address(), PROGRESS);
    private static final MethodHandle TAG_SEND_H = plain(ucx_h.ucp_tag_send_nbx$address(), TAG_SEND);
    private static final MethodHandle TAG_SEND_C = critical(ucx_h.ucp_tag_send_nbx$address(), TAG_SEND);
    private static final MethodHandle TAG_SEND_SYNC_H = plain(ucx_h.ucp_tag_send_sync_nbx$address(), TAG_SEND);
    private static final MethodHandle TAG_SEND_SYNC_C = critical(ucx_h.ucp_tag_send_sync_nbx$address(), TAG_SEND);
    private static final MethodHandle TAG_RECV_H = plain(ucx_h.ucp_tag_recv_nbx$address(), TAG_RECV);
    private static final MethodHandle TAG_RECV_C = critical(ucx_h.ucp_tag_recv_nbx$address(), TAG_RECV);
    private static final MethodHandle TAG_PROBE_H = plain(ucx_h.ucp_tag_probe_nb$address(), TAG_PROBE);
    private static final MethodHandle TAG_PROBE_C = critical(ucx_h.ucp_tag_probe_nb$address(), TAG_PROBE);
    private static final MethodHandle TAG_MSG_RECV_H = plain(ucx_h.ucp_tag_msg_recv_nbx$address(), TAG_MSG_RECV);
    private static final MethodHandle TAG_MSG_RECV_C = critical(ucx_h.ucp_tag_msg_recv_nbx$address(), TAG_MSG_RECV);
    private static final MethodHandle STREAM_SEND_H = plain(ucx_h.ucp_stream_send_nbx$address(), STREAM_SEND);
    private static final MethodHandle STREAM_SEND_C = critical(ucx_h.ucp_stream_send_nbx$address(), STREAM_SEND);
    private static final MethodHandle STREAM_RECV_H = plain(ucx_h.ucp_stream_recv_nbx$address(), STREAM_RECV);
    private static final MethodHandle STREAM_RECV_C = critical(ucx_h.ucp_stream_recv_nbx$address(), STREAM_RECV);
    private static final MethodHandle AM_SEND_H = plain(ucx_h.ucp_am_send_nbx$address(), AM_SEND);
    private static final MethodHandle AM_SEND_C = critical(ucx_h.ucp_am_send_nbx$address(), AM_SEND);
    private static final MethodHandle PUT_H = plain(ucx_h.ucp_put_nbx$address(), RMA);
    private static final MethodHandle PUT_C = critical(ucx_h.ucp_put_nbx$address(), RMA);
    private static final MethodHandle GET_H = plain(ucx_h.ucp_get_nbx$address(), RMA);
    private static final MethodHandle GET_C = critical(ucx_h.ucp_get_nbx$address(), RMA);
    private static final MethodHandle ATOMIC_H = plain(ucx_h.ucp_atomic_op_nbx$address(), ATOMIC);
    private static final MethodHandle ATOMIC_C = critical(ucx_h.ucp_atomic_op_nbx$address(), ATOMIC);

    static {
        if (ADDRESS.byteSize() != 8) {
            throw new ExceptionInInitializerError("ucx-ffm needs 64-bit pointers");
        }
    }

    private RawCalls() {
    }

    private static RuntimeException unexpected(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    static byte checkStatus(boolean critical, long request) {
        try {
            return critical ? (byte) CHECK_STATUS_C.invokeExact(request) : (byte) CHECK_STATUS.invokeExact(request);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static byte tagRecvTest(boolean critical, long request, long info) {
        try {
            return critical ? (byte) TAG_RECV_TEST_C.invokeExact(request, info)
                    : (byte) TAG_RECV_TEST.invokeExact(request, info);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static byte streamRecvTest(boolean critical, long request, long length) {
        try {
            return critical ? (byte) STREAM_RECV_TEST_C.invokeExact(request, length)
                    : (byte) STREAM_RECV_TEST.invokeExact(request, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static void free(boolean critical, long request) {
        try {
            if (critical) {
                FREE_C.invokeExact(request);
            } else {
                FREE.invokeExact(request);
            }
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static int progress(boolean critical, long worker) {
        try {
            return critical ? (int) PROGRESS_C.invokeExact(worker) : (int) PROGRESS_H.invokeExact(worker);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long tagSend(boolean critical, boolean sync, long ep, long buffer, long count, long tag, long param) {
        try {
            if (sync) {
                return critical ? (long) TAG_SEND_SYNC_C.invokeExact(ep, buffer, count, tag, param)
                        : (long) TAG_SEND_SYNC_H.invokeExact(ep, buffer, count, tag, param);
            }
            return critical ? (long) TAG_SEND_C.invokeExact(ep, buffer, count, tag, param)
                    : (long) TAG_SEND_H.invokeExact(ep, buffer, count, tag, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long tagRecv(boolean critical, long worker, long buffer, long count, long tag, long mask, long param) {
        try {
            return critical ? (long) TAG_RECV_C.invokeExact(worker, buffer, count, tag, mask, param)
                    : (long) TAG_RECV_H.invokeExact(worker, buffer, count, tag, mask, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long tagProbe(boolean critical, long worker, long tag, long mask, int remove, long info) {
        try {
            return critical ? (long) TAG_PROBE_C.invokeExact(worker, tag, mask, remove, info)
                    : (long) TAG_PROBE_H.invokeExact(worker, tag, mask, remove, info);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long tagMessageRecv(boolean critical, long worker, long buffer, long count, long message, long param) {
        try {
            return critical ? (long) TAG_MSG_RECV_C.invokeExact(worker, buffer, count, message, param)
                    : (long) TAG_MSG_RECV_H.invokeExact(worker, buffer, count, message, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long streamSend(boolean critical, long ep, long buffer, long count, long param) {
        try {
            return critical ? (long) STREAM_SEND_C.invokeExact(ep, buffer, count, param)
                    : (long) STREAM_SEND_H.invokeExact(ep, buffer, count, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long streamRecv(boolean critical, long ep, long buffer, long count, long length, long param) {
        try {
            return critical ? (long) STREAM_RECV_C.invokeExact(ep, buffer, count, length, param)
                    : (long) STREAM_RECV_H.invokeExact(ep, buffer, count, length, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long amSend(boolean critical, long ep, int id, long header, long headerLength, long buffer, long count,
                       long param) {
        try {
            return critical ? (long) AM_SEND_C.invokeExact(ep, id, header, headerLength, buffer, count, param)
                    : (long) AM_SEND_H.invokeExact(ep, id, header, headerLength, buffer, count, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long rma(boolean critical, boolean put, long ep, long buffer, long count, long remote, long rkey,
                    long param) {
        try {
            if (put) {
                return critical ? (long) PUT_C.invokeExact(ep, buffer, count, remote, rkey, param)
                        : (long) PUT_H.invokeExact(ep, buffer, count, remote, rkey, param);
            }
            return critical ? (long) GET_C.invokeExact(ep, buffer, count, remote, rkey, param)
                    : (long) GET_H.invokeExact(ep, buffer, count, remote, rkey, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static long atomic(boolean critical, long ep, int op, long buffer, long count, long remote, long rkey,
                       long param) {
        try {
            return critical ? (long) ATOMIC_C.invokeExact(ep, op, buffer, count, remote, rkey, param)
                    : (long) ATOMIC_H.invokeExact(ep, op, buffer, count, remote, rkey, param);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }
}
