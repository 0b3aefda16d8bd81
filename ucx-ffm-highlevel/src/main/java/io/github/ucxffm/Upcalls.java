package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_err_handler_cb_t;
import io.github.ucxffm.bindings.ucp_listener_conn_callback_t;
import io.github.ucxffm.bindings.ucp_tag_recv_info;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

import static io.github.ucxffm.bindings.ucx_h.UCS_OK;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * One worker's upcalls: the stubs UCX calls (one per callback kind, made once for the worker's life), how deep the
 * calling thread is in them, and the exceptions application code threw inside them.
 * <p>
 * Rules every upcall follows: its body catches every {@link Throwable} (one escaping an upcall terminates the JVM)
 * and hands it to {@link #failed}, which the next {@link UcpWorker#progress()} rethrows; while a thread is inside
 * one ({@link #inCallback()}), progress, closing the worker and waiting for an endpoint's close are refused, as UCX
 * forbids them there.
 */
final class Upcalls {

    /** Completion of sends, RMA, atomics and flushes; receives of each kind; active messages; errors; clients. */
    final MemorySegment sendStub;
    final MemorySegment tagRecvStub;
    final MemorySegment streamRecvStub;
    final MemorySegment amRecvDataStub;
    final MemorySegment amRecvStub;
    final MemorySegment errorStub;
    final MemorySegment connectionStub;

    /** Whether callbacks may run on several threads at once (a MULTI worker): depth is then counted per thread. */
    private final boolean perThread;
    /** How deep the (one) thread using a non-MULTI worker is in this worker's callbacks. */
    private int depth;
    private final ThreadLocal<int[]> depthPerThread;

    private final List<Throwable> errors = new ArrayList<>();
    private volatile boolean hasErrors;

    Upcalls(UcpWorker worker, boolean perThread, Arena arena) {
        this.perThread = perThread;
        this.depthPerThread = perThread ? ThreadLocal.withInitial(() -> new int[1]) : null;
        // The stubs reach the worker through a weak reference: a stub is a GC root until its arena closes, and a
        // strong one would keep a worker the application dropped without close() from ever being reported.
        Trampolines t = new Trampolines(worker);
        sendStub = Trampolines.stub(Trampolines.SEND_DONE, t, arena);
        tagRecvStub = Trampolines.stub(Trampolines.TAG_RECV_DONE, t, arena);
        streamRecvStub = Trampolines.stub(Trampolines.LENGTH_DONE, t, arena);
        amRecvDataStub = Trampolines.stub(Trampolines.LENGTH_DONE, t, arena);
        amRecvStub = Trampolines.stub(Trampolines.AM_MESSAGE, t, arena);
        errorStub = ucp_err_handler_cb_t.allocate(t::onEndpointError, arena);
        connectionStub = ucp_listener_conn_callback_t.allocate(t::onConnectionRequest, arena);
    }

    // ---- depth ---------------------------------------------------------------------------------------------------

    void enter() {
        if (perThread) {
            depthPerThread.get()[0]++;
        } else {
            depth++;
        }
    }

    void exit() {
        if (perThread) {
            depthPerThread.get()[0]--;
        } else {
            depth--;
        }
    }

    /** Whether the calling thread is inside one of the worker's callbacks. */
    boolean inCallback() {
        return perThread ? depthPerThread.get()[0] > 0 : depth > 0;
    }

    /** Throws inside a callback, where UCX forbids {@code what}. */
    void refuseInCallback(String what) {
        if (inCallback()) {
            throw new IllegalStateException(what + " inside a callback of this UcpWorker: UCX does not allow it "
                    + "there; do it after progress() returns");
        }
    }

    // ---- errors --------------------------------------------------------------------------------------------------

    /** Records an exception thrown by application code inside an upcall; {@link #rethrow()} reports it. */
    void failed(Throwable t) {
        synchronized (errors) {
            errors.add(t);
            hasErrors = true;
        }
    }

    /** Whether {@link #rethrow()} has something to throw: one volatile read, for every progress call. */
    boolean hasFailures() {
        return hasErrors;
    }

    /** Throws the first recorded exception, the others suppressed in it, and forgets them all. */
    void rethrow() {
        Throwable first;
        synchronized (errors) {
            if (errors.isEmpty()) {
                return;
            }
            first = errors.getFirst();
            for (int i = 1; i < errors.size(); i++) {
                first.addSuppressed(errors.get(i));
            }
            errors.clear();
            hasErrors = false;
        }
        if (first instanceof RuntimeException r) {
            throw r;
        }
        if (first instanceof Error e) {
            throw e;
        }
        throw new CompletionException("a UCX callback failed", first);
    }

    // ---- the targets UCX calls -------------------------------------------------------------------------------------

    /**
     * Upcall targets that hold the worker weakly; a collected worker's upcalls do nothing. The ones on the data path
     * (completions, active messages) take every pointer as a raw address: a {@link MemorySegment} parameter is an
     * object made per upcall.
     */
    private static final class Trampolines {
        private final WeakReference<UcpWorker> worker;

        Trampolines(UcpWorker worker) {
            this.worker = new WeakReference<>(worker);
        }

        /** A method of this class and the C signature UCX calls it with. */
        record Target(MethodHandle handle, FunctionDescriptor descriptor) {
            static Target of(String name, FunctionDescriptor descriptor) {
                try {
                    return new Target(MethodHandles.lookup().findVirtual(Trampolines.class, name,
                            descriptor.toMethodType()), descriptor);
                } catch (ReflectiveOperationException e) {
                    throw new ExceptionInInitializerError(e);
                }
            }
        }

        // ucp_send_nbx_callback_t(void *request, ucs_status_t status, void *user_data)
        static final Target SEND_DONE = Target.of("onSendComplete",
                FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_BYTE, JAVA_LONG));
        // ucp_tag_recv_nbx_callback_t(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
        // void *user_data)
        static final Target TAG_RECV_DONE = Target.of("onTagReceiveComplete",
                FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_BYTE, JAVA_LONG, JAVA_LONG));
        // ucp_stream_recv_nbx_callback_t and ucp_am_recv_data_nbx_callback_t(void *request, ucs_status_t status,
        // size_t length, void *user_data)
        static final Target LENGTH_DONE = Target.of("onLengthComplete",
                FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_BYTE, JAVA_LONG, JAVA_LONG));
        // ucp_am_recv_callback_t: ucs_status_t (void *arg, const void *header, size_t header_length, void *data,
        // size_t length, const ucp_am_recv_param_t *param)
        static final Target AM_MESSAGE = Target.of("onAmMessage", FunctionDescriptor.of(JAVA_BYTE,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));

        static MemorySegment stub(Target target, Trampolines t, Arena arena) {
            return Linker.nativeLinker().upcallStub(target.handle().bindTo(t), target.descriptor(), arena);
        }

        /** The worker, its callback depth raised; {@code null} once it was collected (the upcall then does nothing). */
        private UcpWorker enter() {
            UcpWorker w = worker.get();
            if (w != null) {
                w.upcalls.enter();
            }
            return w;
        }

        /**
         * {@code length < 0}: the length recorded when the operation started; {@code info != 0}: the length and tag
         * are read from that {@code ucp_tag_recv_info_t}.
         */
        private void complete(long request, byte status, long userData, long length, long info) {
            UcpWorker w = enter();
            if (w != null) {
                try {
                    long tag = 0;
                    if (info != 0) {
                        length = RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED, info + ucp_tag_recv_info.length$offset());
                        tag = RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED, info + ucp_tag_recv_info.sender_tag$offset());
                    }
                    w.requests.complete(request, status, userData, length, tag);
                } catch (Throwable t) {
                    w.upcalls.failed(t);
                } finally {
                    w.upcalls.exit();
                }
            }
        }

        void onSendComplete(long request, byte status, long userData) {
            complete(request, status, userData, -1, 0);
        }

        void onTagReceiveComplete(long request, byte status, long info, long userData) {
            complete(request, status, userData, 0, info);
        }

        void onLengthComplete(long request, byte status, long length, long userData) {
            complete(request, status, userData, length, 0);
        }

        byte onAmMessage(long arg, long header, long headerLength, long data, long length, long param) {
            UcpWorker w = enter();
            if (w == null) {
                return (byte) UCS_OK();
            }
            try {
                return w.am.onMessage(arg, header, headerLength, data, length, param); // catches everything itself
            } finally {
                w.upcalls.exit();
            }
        }

        void onEndpointError(MemorySegment arg, MemorySegment ep, byte status) {
            run(w -> {
                UcpEndpoint endpoint = w.endpoints.get(ep.address());
                if (endpoint != null) {
                    endpoint.markFailed(status);
                }
            });
        }

        void onConnectionRequest(MemorySegment request, MemorySegment arg) {
            run(w -> {
                UcpListener listener = w.listeners.get(arg.address());
                if (listener != null) { // null: a listener being destroyed; UCX drops the request with it
                    listener.onConnectionRequest(request);
                }
            });
        }

        /** The body of an upcall off the data path (a lambda per call is fine there), inside the callback rules. */
        private void run(Consumer<UcpWorker> body) {
            UcpWorker w = enter();
            if (w != null) {
                try {
                    body.accept(w);
                } catch (Throwable t) {
                    w.upcalls.failed(t);
                } finally {
                    w.upcalls.exit();
                }
            }
        }
    }
}
