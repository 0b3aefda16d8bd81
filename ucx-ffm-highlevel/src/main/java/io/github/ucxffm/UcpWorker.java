package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_err_handler_cb_t;
import io.github.ucxffm.bindings.ucp_listener_conn_callback_t;
import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucp_tag_recv_info;
import io.github.ucxffm.bindings.ucp_worker_attr;
import io.github.ucxffm.bindings.ucp_worker_params;
import io.github.ucxffm.bindings.support.UcpInline;
import io.github.ucxffm.bindings.support.UcsMacros;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A UCP worker ({@code ucp_worker_h}): the progress engine that moves every operation of its endpoints. Nothing
 * completes unless some thread calls {@link #progress()} (or waits with {@link #await}); a rendezvous transfer
 * needs progress on both sides.
 * <p>
 * <b>Ownership.</b> Created by {@link UcpContext#newWorker}, owned by the context. {@link #close()} closes the
 * worker's listeners and endpoints (force), releases every request still in flight, then destroys the worker.
 * <p>
 * <b>Threads.</b> A {@link UcsThreadMode#SINGLE} worker (the default) belongs to the thread that created it: every
 * method but {@link #signal()} throws {@link IllegalStateException} on another thread. A SERIALIZED worker may be
 * used by any thread, one at a time; a MULTI worker by any threads at once.
 * <p>
 * <b>Completion.</b> Operations return a request token: {@link #COMPLETED} when they finished at once, otherwise a
 * handle to poll with {@link #poll(long)}, which releases the request when it reports completion. Tokens are
 * primitives; polling allocates nothing. Operations also come with a {@link UcpCallback} or as a
 * {@link CompletableFuture}. A buffer given to an operation belongs to it until completion: the worker keeps it
 * strongly reachable until then, and the application must not reuse or free it before.
 */
public final class UcpWorker extends UcxHandle {

    /** The token of an operation that completed when it was started. */
    public static final long COMPLETED = 0L;

    private static final long INITIAL_POOL = 64;

    /** See {@link UcxVersion.Capability#TAG_RECV_INFO_ON_IMMEDIATE_COMPLETION}; constant-folded by the JIT. */
    private static final boolean RECV_INFO_ON_IMMEDIATE_COMPLETION =
            UcxVersion.runtime().has(UcxVersion.Capability.TAG_RECV_INFO_ON_IMMEDIATE_COMPLETION);

    private final UcpContext context;
    private final UcsThreadMode mode;
    private final Thread owner;
    private final boolean locking;
    /**
     * Whether the request test and free calls may skip the thread-state transition (see {@link RawCalls}): not for
     * MULTI workers.
     */
    final boolean critical;

    final Arena arena = Arena.ofShared();
    private final MemorySegment handle;

    // One upcall stub per callback kind, made once for the worker's life.
    final MemorySegment sendStub;
    final MemorySegment tagRecvStub;
    final MemorySegment streamRecvStub;
    final MemorySegment amRecvDataStub;
    final MemorySegment errorStub;
    final MemorySegment connectionStub;

    /** Per-thread scratch: the request parameters and receive-info structs reused by every operation. */
    static final class Scratch {
        final MemorySegment param;
        final MemorySegment tagInfo;
        final MemorySegment length;
        /** Raw addresses of the above, and of parameter structs filled once and never written again. */
        final long tagInfoAddress;
        final long lengthAddress;
        /** No field set: a polled operation without flags. */
        final long plainParam;
        /** No immediate completion: a polled tag receive posted when no matching message had arrived. */
        final long tagRecvParam;
        /**
         * Receive information into {@link #tagInfo}: a polled tag receive on a UCX that reports it on immediate
         * completion ({@code RECV_INFO_ON_IMMEDIATE_COMPLETION}).
         */
        final long tagRecvInfoParam;
        /** Flags 0, and {@code UCP_STREAM_RECV_FLAG_WAITALL}: polled stream receives. */
        final long streamRecvParam;
        final long streamRecvAllParam;
        /** Flags only; the flags field is written per call: polled active-message sends. */
        final MemorySegment amSendParam;
        long receivedTag;
        long receivedLength;

        Scratch(Arena arena) {
            param = ucp_request_param_t.allocate(arena);
            tagInfo = ucp_tag_recv_info.allocate(arena);
            length = arena.allocate(JAVA_LONG);
            tagInfoAddress = tagInfo.address();
            lengthAddress = length.address();
            plainParam = ucp_request_param_t.allocate(arena).address();
            MemorySegment tagRecv = ucp_request_param_t.allocate(arena);
            ucp_request_param_t.op_attr_mask(tagRecv, UCP_OP_ATTR_FLAG_NO_IMM_CMPL());
            tagRecvParam = tagRecv.address();
            MemorySegment tagRecvInfo = ucp_request_param_t.allocate(arena);
            ucp_request_param_t.op_attr_mask(tagRecvInfo, UCP_OP_ATTR_FIELD_RECV_INFO());
            tagRecvInfo.set(ADDRESS, ucp_request_param_t.recv_info$offset(), tagInfo);
            tagRecvInfoParam = tagRecvInfo.address();
            streamRecvParam = flagsParam(arena, 0).address();
            streamRecvAllParam = flagsParam(arena, UCP_STREAM_RECV_FLAG_WAITALL()).address();
            amSendParam = flagsParam(arena, 0);
        }

        private static MemorySegment flagsParam(Arena arena, int flags) {
            MemorySegment p = ucp_request_param_t.allocate(arena);
            ucp_request_param_t.op_attr_mask(p, UCP_OP_ATTR_FIELD_FLAGS());
            ucp_request_param_t.flags(p, flags);
            return p;
        }
    }

    private final Scratch single;
    private final ThreadLocal<Scratch> perThread;

    /** Polled operations in flight (their slots hold an even token and a UCX request). */
    private int polledInFlight;
    /** Receives completed when posted whose results wait for poll() (their slots hold an odd token). */
    private int immediateCount;
    /** The sequence number in the upper half of the next token. */
    private int tokenSequence;
    private Pending[] pending = new Pending[(int) INITIAL_POOL];
    private int[] free = new int[(int) INITIAL_POOL];
    private int freeCount;

    /** Endpoints of this worker by native handle, for the error and active-message upcalls. */
    final LongObjectMap<UcpEndpoint> endpoints = new LongObjectMap<>(64);

    private final List<Throwable> callbackErrors = new ArrayList<>();
    private volatile boolean hasCallbackErrors;

    UcpWorker(UcpContext context, UcsThreadMode mode, long clientId) {
        super("UcpWorker", context);
        this.context = context;
        this.mode = mode;
        this.owner = Thread.currentThread();
        this.locking = mode == UcsThreadMode.MULTI;
        this.critical = !locking;
        try (Arena call = Arena.ofConfined()) {
            MemorySegment params = ucp_worker_params.allocate(call);
            long mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE();
            ucp_worker_params.thread_mode(params, mode.code());
            if (clientId != 0) {
                mask |= UCP_WORKER_PARAM_FIELD_CLIENT_ID();
                ucp_worker_params.client_id(params, clientId);
            }
            ucp_worker_params.field_mask(params, mask);
            MemorySegment workerP = call.allocate(ADDRESS);
            byte status = ucp_worker_create(context.handle(), params, workerP);
            if (status != UCS_OK()) {
                super.close();
                throw UcxException.of("ucp_worker_create", status);
            }
            this.handle = workerP.get(ADDRESS, 0);
        }
        // The stubs reach the worker through a weak reference: a stub is a GC root until its arena closes, and a
        // strong one would keep a worker the application dropped without close() from ever being reported.
        Upcalls up = new Upcalls(this);
        sendStub = Upcalls.stub(Upcalls.SEND_DONE, up, arena);
        tagRecvStub = Upcalls.stub(Upcalls.TAG_RECV_DONE, up, arena);
        streamRecvStub = Upcalls.stub(Upcalls.LENGTH_DONE, up, arena);
        amRecvDataStub = Upcalls.stub(Upcalls.LENGTH_DONE, up, arena);
        amRecvStub = Upcalls.stub(Upcalls.AM_MESSAGE, up, arena);
        errorStub = ucp_err_handler_cb_t.allocate(up::onEndpointError, arena);
        connectionStub = ucp_listener_conn_callback_t.allocate(up::onConnectionRequest, arena);
        single = new Scratch(arena);
        perThread = locking ? ThreadLocal.withInitial(() -> new Scratch(arena)) : null;
        for (int i = 0; i < pending.length; i++) {
            pending[i] = new Pending(i);
            free[freeCount++] = pending.length - 1 - i;
        }
    }

    /**
     * Upcall targets that hold the worker weakly; a collected worker's upcalls do nothing. The ones on the data path
     * (completions, active messages) take every pointer as a raw address: a {@link MemorySegment} parameter is an
     * object made per upcall.
     */
    private static final class Upcalls {
        private final java.lang.ref.WeakReference<UcpWorker> worker;

        Upcalls(UcpWorker worker) {
            this.worker = new java.lang.ref.WeakReference<>(worker);
        }

        /** A method of this class and the C signature UCX calls it with. */
        record Target(java.lang.invoke.MethodHandle handle, java.lang.foreign.FunctionDescriptor descriptor) {
            static Target of(String name, java.lang.foreign.FunctionDescriptor descriptor) {
                try {
                    return new Target(java.lang.invoke.MethodHandles.lookup().findVirtual(Upcalls.class, name,
                            descriptor.toMethodType()), descriptor);
                } catch (ReflectiveOperationException e) {
                    throw new ExceptionInInitializerError(e);
                }
            }
        }

        // ucp_send_nbx_callback_t(void *request, ucs_status_t status, void *user_data)
        static final Target SEND_DONE = Target.of("onSendComplete",
                java.lang.foreign.FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_BYTE, JAVA_LONG));
        // ucp_tag_recv_nbx_callback_t(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
        // void *user_data)
        static final Target TAG_RECV_DONE = Target.of("onTagReceiveComplete",
                java.lang.foreign.FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_BYTE, JAVA_LONG, JAVA_LONG));
        // ucp_stream_recv_nbx_callback_t and ucp_am_recv_data_nbx_callback_t(void *request, ucs_status_t status,
        // size_t length, void *user_data)
        static final Target LENGTH_DONE = Target.of("onLengthComplete",
                java.lang.foreign.FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_BYTE, JAVA_LONG, JAVA_LONG));
        // ucp_am_recv_callback_t: ucs_status_t (void *arg, const void *header, size_t header_length, void *data,
        // size_t length, const ucp_am_recv_param_t *param)
        static final Target AM_MESSAGE = Target.of("onAmMessage", java.lang.foreign.FunctionDescriptor.of(JAVA_BYTE,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));

        static MemorySegment stub(Target target, Upcalls up, Arena arena) {
            return java.lang.foreign.Linker.nativeLinker().upcallStub(target.handle().bindTo(up),
                    target.descriptor(), arena);
        }

        void onSendComplete(long request, byte status, long userData) {
            UcpWorker w = worker.get();
            if (w != null) {
                w.enterUpcall();
                try {
                    w.onSendComplete(request, status, userData);
                } finally {
                    w.exitUpcall();
                }
            }
        }

        void onTagReceiveComplete(long request, byte status, long info, long userData) {
            UcpWorker w = worker.get();
            if (w != null) {
                w.enterUpcall();
                try {
                    w.onTagReceiveComplete(request, status, info, userData);
                } finally {
                    w.exitUpcall();
                }
            }
        }

        void onLengthComplete(long request, byte status, long length, long userData) {
            UcpWorker w = worker.get();
            if (w != null) {
                w.enterUpcall();
                try {
                    w.onLengthComplete(request, status, length, userData);
                } finally {
                    w.exitUpcall();
                }
            }
        }

        byte onAmMessage(long arg, long header, long headerLength, long data, long length, long param) {
            UcpWorker w = worker.get();
            if (w == null) {
                return (byte) UCS_OK();
            }
            w.enterUpcall();
            try {
                return w.onAmMessage(arg, header, headerLength, data, length, param);
            } finally {
                w.exitUpcall();
            }
        }

        void onEndpointError(MemorySegment arg, MemorySegment ep, byte status) {
            UcpWorker w = worker.get();
            if (w != null) {
                w.enterUpcall();
                try {
                    w.onEndpointError(arg, ep, status);
                } finally {
                    w.exitUpcall();
                }
            }
        }

        void onConnectionRequest(MemorySegment request, MemorySegment arg) {
            UcpWorker w = worker.get();
            if (w != null) {
                w.enterUpcall();
                try {
                    w.onConnectionRequest(request, arg);
                } finally {
                    w.exitUpcall();
                }
            }
        }
    }

    // ---- callbacks in progress -----------------------------------------------------------------------------------

    /** How deep the (one) thread using a non-MULTI worker is in this worker's callbacks. */
    private int upcallDepth;
    /** The same per thread, for a MULTI worker, whose callbacks may run on several threads at once. */
    private final ThreadLocal<int[]> upcallDepthPerThread = ThreadLocal.withInitial(() -> new int[1]);

    void enterUpcall() {
        if (locking) {
            upcallDepthPerThread.get()[0]++;
        } else {
            upcallDepth++;
        }
    }

    void exitUpcall() {
        if (locking) {
            upcallDepthPerThread.get()[0]--;
        } else {
            upcallDepth--;
        }
    }

    /**
     * Whether the calling thread is inside one of this worker's callbacks (completion, active-message, error or
     * connection handler), where UCX allows neither progress nor destroying the worker.
     *
     * @return {@code true} inside a callback
     */
    public boolean inCallback() {
        return locking ? upcallDepthPerThread.get()[0] > 0 : upcallDepth > 0;
    }

    private void refuseInCallback(String what) {
        if (inCallback()) {
            throw new IllegalStateException(what + " inside a callback of this UcpWorker: UCX does not allow it "
                    + "there; do it after progress() returns");
        }
    }

    /** Close requests of endpoints closed inside a callback, finished by later progress calls. */
    private long[] deferredCloses = new long[4];
    private long[] deferredDeadlines = new long[4];
    private int deferredCount;

    /** Takes over an endpoint's close request that cannot be waited for here (inside a callback). */
    void deferClose(long request, long deadline) {
        lock();
        try {
            if (deferredCount == deferredCloses.length) {
                deferredCloses = java.util.Arrays.copyOf(deferredCloses, deferredCount * 2);
                deferredDeadlines = java.util.Arrays.copyOf(deferredDeadlines, deferredCount * 2);
            }
            deferredCloses[deferredCount] = request;
            deferredDeadlines[deferredCount++] = deadline;
        } finally {
            unlock();
        }
    }

    /** Frees the deferred close requests that completed or ran out of time. */
    private void finishDeferredCloses(boolean all) {
        lock();
        try {
            long now = System.nanoTime();
            int kept = 0;
            for (int i = 0; i < deferredCount; i++) {
                long r = deferredCloses[i];
                if (all || RawCalls.checkStatus(critical, r) != UCS_INPROGRESS() || now - deferredDeadlines[i] > 0) {
                    RawCalls.free(critical, r); // UCX frees one still in flight when it completes
                } else {
                    deferredCloses[kept] = r;
                    deferredDeadlines[kept++] = deferredDeadlines[i];
                }
            }
            deferredCount = kept;
        } finally {
            unlock();
        }
    }

    // ---- identity and thread rules ----------------------------------------------------------------------------

    /**
     * The context this worker belongs to.
     *
     * @return the owning context
     */
    public UcpContext context() {
        return context;
    }

    /**
     * The thread mode the worker was created with.
     *
     * @return the mode
     */
    public UcsThreadMode threadMode() {
        return mode;
    }

    /** The open check and, for a SINGLE worker, the owner check: one field read and one comparison. */
    void check() {
        ensureOpen();
        if (mode == UcsThreadMode.SINGLE && Thread.currentThread() != owner) {
            throw new IllegalStateException("this UcpWorker is confined to thread '" + owner.getName()
                    + "' (UcsThreadMode.SINGLE); called from '" + Thread.currentThread().getName() + "'");
        }
    }

    MemorySegment handle() {
        check();
        return handle;
    }

    /**
     * The native handle for calls through the raw bindings.
     *
     * @return the {@code ucp_worker_h}; it dangles after {@link #close()}
     */
    public MemorySegment nativeHandle() {
        return handle();
    }

    Scratch scratch() {
        return locking ? perThread.get() : single;
    }

    /** The parameter struct for the next operation, with every field this layer uses cleared. */
    MemorySegment param() {
        MemorySegment p = scratch().param;
        p.fill((byte) 0);
        return p;
    }

    // ---- progress and waiting -----------------------------------------------------------------------------------

    /**
     * Progresses communication once ({@code ucp_worker_progress}). Callbacks of completed operations, active-message
     * handlers, endpoint error handlers and connection handlers run inside this call.
     *
     * @return a non-zero count if some work was done
     * @throws RuntimeException the first exception a callback threw during this call (others are suppressed)
     */
    public int progress() {
        MemorySegment h = handle();
        if (inCallback()) {
            throw new IllegalStateException("progress() inside a callback of this UcpWorker: UCX does not allow "
                    + "it (the callback runs inside ucp_worker_progress)");
        }
        int work = ucp_worker_progress(h);
        if (deferredCount != 0) {
            finishDeferredCloses(false);
        }
        if (hasCallbackErrors) {
            rethrowCallbackErrors();
        }
        return work;
    }

    private void rethrowCallbackErrors() {
        Throwable first;
        synchronized (callbackErrors) {
            first = callbackErrors.getFirst();
            for (int i = 1; i < callbackErrors.size(); i++) {
                first.addSuppressed(callbackErrors.get(i));
            }
            callbackErrors.clear();
            hasCallbackErrors = false;
        }
        if (first instanceof RuntimeException r) {
            throw r;
        }
        if (first instanceof Error e) {
            throw e;
        }
        throw new CompletionException("a UCX callback failed", first);
    }

    /** Records an exception thrown by application code inside an upcall; progress() rethrows it. */
    void callbackFailed(Throwable t) {
        synchronized (callbackErrors) {
            callbackErrors.add(t);
            hasCallbackErrors = true;
        }
    }

    /**
     * The worker's event file descriptor ({@code ucp_worker_get_efd}), readable when {@link #arm()} was called and
     * there is work. Needs {@link UcpContext.Feature#WAKEUP}.
     *
     * @return the file descriptor; owned by the worker, do not close it
     */
    public int eventFd() {
        requireWakeup();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment fd = call.allocate(JAVA_INT);
            Status.check(ucp_worker_get_efd(handle(), fd), "ucp_worker_get_efd");
            return fd.get(JAVA_INT, 0);
        }
    }

    private void requireWakeup() {
        if (!context.has(UcpContext.Feature.WAKEUP)) {
            throw new IllegalStateException("event-driven waiting needs UcpContext.Feature.WAKEUP");
        }
    }

    /**
     * Arms the event file descriptor ({@code ucp_worker_arm}). When it returns {@code false} there is still work:
     * progress again, then arm again, before sleeping.
     *
     * @return {@code true} if armed (safe to sleep), {@code false} on {@code UCS_ERR_BUSY}
     */
    public boolean arm() {
        requireWakeup();
        byte status = ucp_worker_arm(handle());
        if (status == UCS_ERR_BUSY()) {
            return false;
        }
        Status.check(status, "ucp_worker_arm");
        return true;
    }

    /**
     * Blocks until the worker has events ({@code ucp_worker_wait}), or until {@link #signal()}. Call {@link #arm()}
     * first, as {@link #await} does. Blocks the carrier thread: use a platform thread.
     */
    public void waitForEvents() {
        requireWakeup();
        Status.check(ucp_worker_wait(handle()), "ucp_worker_wait");
    }

    /**
     * Wakes a thread blocked in {@link #waitForEvents()} or {@link #await} ({@code ucp_worker_signal}). The one
     * method any thread may call on a SINGLE worker.
     */
    public void signal() {
        ensureOpen();
        requireWakeup();
        Status.check(ucp_worker_signal(handle), "ucp_worker_signal");
    }

    /** How {@link #await} spends the time between progress calls. */
    public enum Idle {
        /** Progress in a tight loop: lowest latency, one core busy. */
        SPIN,
        /** Progress, then {@link Thread#yield()} when there was nothing to do. */
        YIELD,
        /**
         * Progress while there is work; when idle, arm the event fd and sleep in {@code ucp_worker_wait} until an
         * event or {@link #signal()}. Burns no core; needs {@link UcpContext.Feature#WAKEUP}.
         */
        BLOCK
    }

    /**
     * Progresses until the request completes, then releases it.
     *
     * @param request a token returned by an operation of this worker
     * @param timeout how long to wait at most
     * @param idle    how to wait
     * @throws UcxTimeoutException if the request is still in flight at the deadline (it stays valid: poll or
     *                             cancel it)
     * @throws UcxException        if the operation failed
     */
    public void await(long request, Duration timeout, Idle idle) {
        if (request == COMPLETED) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!poll(request)) {
            idle(idle, deadline);
            if (System.nanoTime() - deadline > 0) {
                // Polled once more, and only once: a poll that reports completion has released the token.
                if (poll(request)) {
                    return;
                }
                throw new UcxTimeoutException("await", UCS_ERR_TIMED_OUT());
            }
        }
    }

    /**
     * Progresses until the request completes, spinning, for at most 30 seconds.
     *
     * @param request a token returned by an operation of this worker
     * @throws UcxException if the operation failed or did not complete in time
     */
    public void await(long request) {
        await(request, Duration.ofSeconds(30), Idle.SPIN);
    }

    /**
     * Progresses until {@code condition} holds.
     *
     * @param condition checked after each progress call
     * @param timeout   how long to wait at most
     * @param idle      how to wait
     * @throws UcxTimeoutException if the condition does not hold by the deadline
     */
    public void awaitCondition(java.util.function.BooleanSupplier condition, Duration timeout, Idle idle) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            idle(idle, deadline);
            if (System.nanoTime() - deadline > 0) {
                // Asked once more, and only once: a condition may consume what it found (a polled request).
                if (condition.getAsBoolean()) {
                    return;
                }
                throw new UcxTimeoutException("awaitCondition", UCS_ERR_TIMED_OUT());
            }
        }
    }

    private void idle(Idle idle, long deadline) {
        int work = progress();
        if (work != 0) {
            return;
        }
        switch (idle) {
            case SPIN -> Thread.onSpinWait();
            case YIELD -> Thread.yield();
            case BLOCK -> {
                // Not ucp_worker_wait: it sleeps with no bound, and the deadline must end the wait. Sleeping on the
                // event fd with the time left is what it does otherwise.
                long left = deadline - System.nanoTime();
                if (left > 0 && arm()) {
                    Libc.awaitReadable(eventFd(), (int) Math.min(Integer.MAX_VALUE, left / 1_000_000 + 1));
                }
            }
        }
    }

    // ---- requests -------------------------------------------------------------------------------------------------

    private void lock() {
        if (locking) {
            synchronizedEnter();
        }
    }

    private final java.util.concurrent.locks.ReentrantLock poolLock = new java.util.concurrent.locks.ReentrantLock();

    private void synchronizedEnter() {
        poolLock.lock();
    }

    private void unlock() {
        if (locking) {
            poolLock.unlock();
        }
    }

    /** A pooled book-keeping slot for a new operation. */
    Pending acquire(byte kind, String op, Object keep1, Object keep2) {
        lock();
        try {
            Pending p = takeFreeSlot();
            p.kind = kind;
            p.op = op;
            p.keep1 = keep1;
            p.keep2 = keep2;
            return p;
        } finally {
            unlock();
        }
    }

    /** The next free slot, the pool grown if none is left; the caller holds the pool lock. */
    private Pending takeFreeSlot() {
        if (freeCount == 0) {
            growPool();
        }
        return pending[free[--freeCount]];
    }

    private void growPool() {
        int old = pending.length;
        pending = java.util.Arrays.copyOf(pending, old * 2);
        free = java.util.Arrays.copyOf(free, old * 2);
        for (int i = old; i < pending.length; i++) {
            pending[i] = new Pending(i);
            free[freeCount++] = i;
        }
    }

    void recycle(Pending p) {
        OperationResource owned = p.keep2 instanceof OperationResource r ? r : null;
        lock();
        try {
            if (p.memory != null) {
                p.memory.endUse();
            }
            p.clear();
            free[freeCount++] = p.id;
        } finally {
            unlock();
            if (owned != null) {
                owned.close(); // UCX is done with it: the operation completed, failed to start or was released
            }
        }
    }

    /**
     * Handles the {@code ucs_status_ptr_t} an operation returned, for a polled operation.
     *
     * @return the token: {@link #COMPLETED}, or one to {@link #poll(long)}
     */
    long started(MemorySegment result, Pending p) {
        // Tiny on purpose: it inlines into every operation, so the segment the downcall returned does not escape
        // and the JIT need not allocate it.
        return started(result.address(), p);
    }

    /**
     * Handles the {@code ucs_status_ptr_t} of a polled operation started without a pending slot: nothing to do when
     * it completed at once (the common case of a small message), the slot is taken only for a request in flight.
     *
     * @return the token: {@link #COMPLETED}, or one to {@link #poll(long)}
     */
    long startedPolled(long address, byte kind, String op, UcpEndpoint endpoint, Object keep1, Object keep2) {
        return startedPolled(address, kind, op, endpoint, keep1, keep2, null);
    }

    /**
     * {@link #startedPolled(long, byte, String, UcpEndpoint, Object, Object)} for an operation on registered memory
     * whose use began before the call: the use ends now if the operation completed or failed at once, else when it
     * completes.
     */
    long startedPolled(long address, byte kind, String op, UcpEndpoint endpoint, Object keep1, Object keep2,
                       UcpMemory memory) {
        if (address == 0) {
            if (memory != null) {
                memory.endUse();
            }
            return COMPLETED;
        }
        if (Long.compareUnsigned(address, UCS_ERR_LAST()) >= 0) { // UCS_PTR_IS_ERR
            if (memory != null) {
                memory.endUse();
            }
            throw UcxException.of(op, (byte) address);
        }
        Pending p = acquire(kind, op, keep1, keep2);
        p.endpoint = endpoint;
        p.memory = memory;
        return track(p, address);
    }

    /**
     * Records a request in flight in its slot and gives out the slot's token: the slot's index and a sequence
     * number, so that {@link #poll(long)} finds the slot by indexing, and a token polled after its slot was reused
     * (or a foreign one) is refused rather than taken for another operation.
     */
    private long track(Pending p, long address) {
        p.request = address;
        lock();
        try {
            polledInFlight++;
            return newToken(p, 0L);
        } finally {
            unlock();
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

    /** The slot of a polled operation's token, or {@code null} when the token does not name one in flight. */
    private Pending inFlightSlot(long token) {
        int id = (int) ((token & 0xffffffffL) >>> 1);
        Pending p;
        lock();
        try {
            p = id < pending.length ? pending[id] : null;
        } finally {
            unlock();
        }
        return p != null && p.token == token && p.request != 0 ? p : null;
    }

    private static IllegalStateException unknownToken(long token) {
        return new IllegalStateException("unknown request token " + Long.toHexString(token)
                + " (already completed, or not from a polled operation of this worker)");
    }

    /**
     * A token for a receive that completed when it was posted: its tag and length wait in a pending slot until
     * {@link #poll(long)} hands them over, so that {@link #receivedTag()} and {@link #receivedLength()} describe
     * the receive just polled, as they do for one that completed later. Odd, unlike the tokens of operations in
     * flight (see {@link #newToken}); a token polled twice is refused rather than mistaken for a newer one.
     */
    long completedReceive(String op, long length, long tag, int status) {
        lock();
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
            unlock();
        }
    }

    private boolean pollCompletedReceive(long token) {
        check();
        int id = (int) ((token & 0xffffffffL) >>> 1);
        Pending p;
        lock();
        try {
            p = id < pending.length ? pending[id] : null;
            if (p == null || p.token != token || p.kind != Pending.DONE) {
                throw unknownToken(token);
            }
            immediateCount--;
        } finally {
            unlock();
        }
        int status = p.status;
        String op = p.op;
        if (status < 0) {
            recycle(p);
            throw UcxException.of(op, status);
        }
        Scratch s = scratch();
        s.receivedTag = p.tag;
        s.receivedLength = p.length;
        recycle(p);
        return true;
    }

    private long started(long address, Pending p) {
        if (address == 0) {
            recycle(p);
            return COMPLETED;
        }
        if (Long.compareUnsigned(address, UCS_ERR_LAST()) >= 0) { // UCS_PTR_IS_ERR
            String op = p.op;
            recycle(p);
            throw UcxException.of(op, (byte) address);
        }
        return track(p, address);
    }

    /**
     * Checks a request; when it has completed, collects its receive information, releases it and returns
     * {@code true}. After that the token is invalid.
     *
     * @param request a token from an operation of this worker ({@link #COMPLETED} is always complete)
     * @return {@code true} if the operation completed successfully, {@code false} while it is in flight
     * @throws UcxException          if it completed with an error (the request is released all the same)
     * @throws IllegalStateException if the token is unknown to this worker (already released, or foreign)
     */
    public boolean poll(long request) {
        if (request == COMPLETED) {
            return true;
        }
        if ((request & 1L) != 0) {
            return pollCompletedReceive(request);
        }
        check();
        Pending p = inFlightSlot(request);
        if (p == null) {
            throw unknownToken(request);
        }
        long address = p.request;
        // Raw-address downcalls: polling runs in every wait loop, and a MemorySegment made per call here is not
        // reliably scalar-replaced by the JIT (measured: up to ~1 KB per ping-pong round).
        byte status;
        Scratch s = scratch();
        if (p.kind == Pending.TAG_RECV) {
            status = RawCalls.tagRecvTest(critical, address, s.tagInfoAddress);
            if (status != UCS_INPROGRESS()) {
                s.receivedTag = ucp_tag_recv_info.sender_tag(s.tagInfo);
                s.receivedLength = ucp_tag_recv_info.length(s.tagInfo);
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
        lock();
        try {
            polledInFlight--;
        } finally {
            unlock();
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

    private UcxException failure(String op, int status, UcpEndpoint ep) {
        status = failedEndpointStatus(status, ep);
        UcxException e = UcxException.of(op, status);
        if (ep != null && UcxException.isPeerFailure(status)) {
            ep.markFailed(status);
        }
        return e;
    }

    /**
     * Cancels an operation in flight ({@code ucp_request_cancel}). UCX can cancel receives that have not matched;
     * sends, RMA and atomics already handed to the transport usually complete anyway. A canceled operation
     * completes with {@link UcxCanceledException} on its next poll (or callback, or future).
     *
     * @param request a token of this worker; {@link #COMPLETED}, and a token already polled to completion, are
     *                ignored
     */
    public void cancel(long request) {
        if (request == COMPLETED || (request & 1L) != 0) {
            return; // completed already: a receive's result waiting for poll()
        }
        check();
        Pending p = inFlightSlot(request);
        if (p != null) {
            ucp_request_cancel(handle, MemorySegment.ofAddress(p.request));
        }
    }

    /**
     * The sender's tag of the last tag receive or probe completed by this thread on this worker.
     *
     * @return the sender tag
     */
    public long receivedTag() {
        return scratch().receivedTag;
    }

    /**
     * The length of the last receive (tag, stream) or probe completed by this thread on this worker.
     *
     * @return bytes received
     */
    public long receivedLength() {
        return scratch().receivedLength;
    }

    /** Operations started but not yet completed and released. */
    int inFlightCount() {
        lock();
        try {
            return polledInFlight + immediateCount;
        } finally {
            unlock();
        }
    }

    // ---- callback and future operations -------------------------------------------------------------------------

    /** Fills the callback fields of the parameters; the operation's user data is the pending slot's id. */
    void callbackParams(MemorySegment param, int attrMask, MemorySegment stub, Pending p) {
        ucp_request_param_t.op_attr_mask(param, attrMask | UCP_OP_ATTR_FIELD_CALLBACK()
                | UCP_OP_ATTR_FIELD_USER_DATA());
        param.set(ADDRESS, ucp_request_param_t.cb$offset(), stub);
        ucp_request_param_t.user_data(param, MemorySegment.ofAddress(p.id + 1L));
    }

    /**
     * Handles the result of an operation started with a callback: on immediate completion the callback runs now.
     */
    void startedWithCallback(MemorySegment result, Pending p, long length, long tag) {
        startedWithCallback(result.address(), p, length, tag);
    }

    private void startedWithCallback(long address, Pending p, long length, long tag) {
        boolean error = Long.compareUnsigned(address, UCS_ERR_LAST()) >= 0; // UCS_PTR_IS_ERR
        if (address != 0 && !error) {
            // The upcall completes it, and may already have (a receive of an arrived message): p is not touched.
            return;
        }
        int status = address == 0 ? 0 : (byte) address; // UCS_PTR_RAW_STATUS
        deliver(p, status, length, tag);
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

    /**
     * UCX ends a flush on an endpoint that failed with {@code UCS_ERR_TIMED_OUT}, which would read as the caller's
     * own deadline; on an endpoint known to have failed it is reported as that failure.
     */
    private static int failedEndpointStatus(int status, UcpEndpoint ep) {
        if (status == UCS_ERR_TIMED_OUT() && ep != null) {
            int f = ep.failureCode();
            if (f < 0) {
                return f;
            }
        }
        return status;
    }

    private Pending fromUserData(long userData) {
        lock();
        try {
            return pending[(int) (userData - 1)];
        } finally {
            unlock();
        }
    }

    /** {@code length < 0}: the length recorded when the operation started (sends carry none in their upcall). */
    private void completeUpcall(long request, byte status, long userData, long length, long tag) {
        try {
            Pending p = fromUserData(userData);
            RawCalls.free(critical, request);
            deliver(p, status, length < 0 ? p.length : length, tag);
        } catch (Throwable t) {
            callbackFailed(t);
        }
    }

    private void onSendComplete(long request, byte status, long userData) {
        completeUpcall(request, status, userData, -1, 0);
    }

    private void onTagReceiveComplete(long request, byte status, long info, long userData) {
        try {
            completeUpcall(request, status, userData,
                    RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED, info + ucp_tag_recv_info.length$offset()),
                    RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED, info + ucp_tag_recv_info.sender_tag$offset()));
        } catch (Throwable t) {
            callbackFailed(t);
        }
    }

    private void onLengthComplete(long request, byte status, long length, long userData) {
        completeUpcall(request, status, userData, length, 0);
    }

    private void onEndpointError(MemorySegment arg, MemorySegment ep, byte status) {
        try {
            UcpEndpoint endpoint;
            lock();
            try {
                endpoint = endpoints.get(ep.address());
            } finally {
                unlock();
            }
            if (endpoint != null) {
                endpoint.markFailed(status);
            }
        } catch (Throwable t) {
            callbackFailed(t);
        }
    }

    private final java.util.Map<Long, UcpListener> listeners = new java.util.concurrent.ConcurrentHashMap<>();
    private long nextListenerId = 1;

    long registerListener(UcpListener listener) {
        long id;
        synchronized (listeners) {
            id = nextListenerId++;
        }
        listeners.put(id, listener);
        return id;
    }

    void unregisterListener(long id) {
        listeners.remove(id);
    }

    private void onConnectionRequest(MemorySegment request, MemorySegment arg) {
        try {
            UcpListener listener = listeners.get(arg.address());
            if (listener == null) {
                return; // a listener being destroyed; UCX drops the request with it
            }
            listener.onConnectionRequest(request);
        } catch (Throwable t) {
            callbackFailed(t);
        }
    }

    void register(UcpEndpoint ep, long address) {
        lock();
        try {
            endpoints.put(address, ep);
        } finally {
            unlock();
        }
    }

    void unregister(long address) {
        lock();
        try {
            endpoints.remove(address);
        } finally {
            unlock();
        }
    }

    // ---- worker-wide operations ------------------------------------------------------------------------------------

    /**
     * This worker's address in ucx-ffm's {@link UcpWorkerAddress#FORMAT checked format}: UCX's address
     * ({@code ucp_worker_query} with {@code UCP_WORKER_ATTR_FIELD_ADDRESS}) behind a header with a length and a
     * checksum. Give it to a peer, which connects with {@link #connect(byte[])}; anyone who has it can connect to
     * this worker, so hand it only to peers you trust.
     *
     * @return the framed address, a new array
     */
    public byte[] address() {
        return UcpWorkerAddress.frame(rawAddress());
    }

    /**
     * This worker's address as UCX makes it ({@code ucp_worker_query} with {@code UCP_WORKER_ATTR_FIELD_ADDRESS}),
     * without ucx-ffm's header: for peers that use UCX but not ucx-ffm, which pass it to {@code ucp_ep_create}
     * themselves. Between ucx-ffm peers use {@link #address()}, which the receiving side can check.
     *
     * @return a copy of UCX's address bytes
     */
    public byte[] rawAddress() {
        MemorySegment h = handle();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment attr = ucp_worker_attr.allocate(call);
            ucp_worker_attr.field_mask(attr, UCP_WORKER_ATTR_FIELD_ADDRESS());
            Status.check(ucp_worker_query(h, attr), "ucp_worker_query");
            MemorySegment address = ucp_worker_attr.address(attr);
            byte[] bytes = address.reinterpret(ucp_worker_attr.address_length(attr)).toArray(JAVA_BYTE);
            ucp_worker_release_address(h, address);
            return bytes;
        }
    }

    /**
     * UCX's description of this worker ({@code ucp_worker_print_info}).
     *
     * @return the text UCX prints
     */
    public String printInfo() {
        MemorySegment h = handle();
        return Libc.printToString(stream -> ucp_worker_print_info(h, stream));
    }

    /**
     * Starts flushing every endpoint of the worker ({@code ucp_worker_flush_nbx}): when it completes, every
     * operation started before it has completed at the remote side too.
     *
     * @return a request token
     */
    public long flush() {
        MemorySegment h = handle();
        MemorySegment param = param();
        Pending p = acquire(Pending.OTHER, "ucp_worker_flush_nbx", null, null);
        return started(ucp_worker_flush_nbx(h, param), p);
    }

    /**
     * Orders operations ({@code ucp_worker_fence}): those started after it are performed at the remote side after
     * those started before it. Completes nothing.
     */
    public void fence() {
        Status.check(ucp_worker_fence(handle()), "ucp_worker_fence");
    }

    // ---- tag matching -------------------------------------------------------------------------------------------

    /**
     * Posts a tag receive ({@code ucp_tag_recv_nbx}): matches a message whose tag equals {@code tag} on the bits
     * set in {@code tagMask}. After completion, {@link #receivedTag()} and {@link #receivedLength()} tell what
     * arrived. A longer message fails with {@link UcxTruncatedException}.
     *
     * @param buffer  where to receive; belongs to the operation until it completes
     * @param offset  start in {@code buffer}
     * @param length  capacity in bytes
     * @param tag     tag to match
     * @param tagMask which bits of the tag must match ({@code -1L}: all)
     * @return a request token; never {@link #COMPLETED}, even for a message that had arrived and was received at
     *         once: {@link #poll(long)} hands over its tag and length (at no cost: no UCX request is involved)
     */
    public long receiveTag(MemorySegment buffer, long offset, long length, long tag, long tagMask) {
        long h = handle().address();
        Buffers.checkRange(buffer, offset, length);
        Scratch s = scratch();
        long at = buffer.address() + offset;
        if (RECV_INFO_ON_IMMEDIATE_COMPLETION) {
            // One call: a message that had arrived is received at once and its tag and length are in tagInfo.
            long result = RawCalls.tagRecv(h, at, length, tag, tagMask, s.tagRecvInfoParam);
            // done (0) or failed at once (truncated; poll() reports it): either way no request is involved
            if (result == 0 || Long.compareUnsigned(result, UCS_ERR_LAST()) >= 0) {
                return completedReceive("ucp_tag_recv_nbx", ucp_tag_recv_info.length(s.tagInfo),
                        ucp_tag_recv_info.sender_tag(s.tagInfo), (byte) result);
            }
            return startedPolled(result, Pending.TAG_RECV, "ucp_tag_recv_nbx", null, buffer, null);
        }
        // UCX 1.13 leaves recv_info unwritten when a receive matches an arrived message at once, so the tag and
        // length of such a message would be lost. Take an arrived message with a probe instead, which reports
        // them, and receive it; post a receive only when none has arrived (no progress runs in between, so none
        // can have arrived meanwhile on this thread; one that another thread's progress delivers is matched by the
        // receive, which then completes through its request like any other).
        long message = RawCalls.tagProbe(critical, h, tag, tagMask, 1, s.tagInfoAddress);
        if (message != 0) {
            long result = RawCalls.tagMessageRecv(h, at, length, message, s.plainParam);
            long arrivedLength = ucp_tag_recv_info.length(s.tagInfo);
            long arrivedTag = ucp_tag_recv_info.sender_tag(s.tagInfo);
            if (result == 0) {
                return completedReceive("ucp_tag_recv_nbx", arrivedLength, arrivedTag, 0);
            }
            if (Long.compareUnsigned(result, UCS_ERR_LAST()) >= 0) { // failed at once: poll() reports it
                return completedReceive("ucp_tag_recv_nbx", arrivedLength, arrivedTag, (byte) result);
            }
            return startedPolled(result, Pending.TAG_RECV, "ucp_tag_recv_nbx", null, buffer, null);
        }
        long result = RawCalls.tagRecv(h, at, length, tag, tagMask, s.tagRecvParam);
        return startedPolled(result, Pending.TAG_RECV, "ucp_tag_recv_nbx", null, buffer, null);
    }

    /**
     * Posts a tag receive whose completion is delivered to {@code callback} with the sender tag and length.
     *
     * @param buffer   where to receive; belongs to the operation until the callback runs
     * @param offset   start in {@code buffer}
     * @param length   capacity in bytes
     * @param tag      tag to match
     * @param tagMask  which bits must match
     * @param callback called once, on the progressing thread, or before this method returns when the message had
     *                 arrived already (an exception it throws then is rethrown by the next {@link #progress()})
     */
    public void receiveTag(MemorySegment buffer, long offset, long length, long tag, long tagMask,
                           UcpCallback callback) {
        MemorySegment h = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = param();
        Pending p = acquire(Pending.TAG_RECV, "ucp_tag_recv_nbx", buffer, null);
        p.callback = java.util.Objects.requireNonNull(callback, "callback");
        // No immediate completion (recv_info would stay unwritten): UCX calls the callback, with the tag and
        // length, before ucp_tag_recv_nbx returns
        callbackParams(param, UCP_OP_ATTR_FLAG_NO_IMM_CMPL(), tagRecvStub, p);
        MemorySegment result = ucp_tag_recv_nbx(h, Buffers.at(buffer, offset), length, tag, tagMask, param);
        startedWithCallback(result, p, 0, 0);
    }

    /**
     * Posts a tag receive completed through a future, for control paths and simple code (allocates).
     *
     * @param buffer  where to receive; belongs to the operation until the future completes
     * @param offset  start in {@code buffer}
     * @param length  capacity in bytes
     * @param tag     tag to match
     * @param tagMask which bits must match
     * @return a future of the received length; {@link #receivedTag()} is not set by this form
     */
    public CompletableFuture<Long> receiveTagAsync(MemorySegment buffer, long offset, long length, long tag,
                                                   long tagMask) {
        MemorySegment h = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = param();
        Pending p = acquire(Pending.TAG_RECV, "ucp_tag_recv_nbx", buffer, null);
        CompletableFuture<Long> future = new CompletableFuture<>();
        p.future = future;
        callbackParams(param, UCP_OP_ATTR_FLAG_NO_IMM_CMPL(), tagRecvStub, p); // see the callback form
        MemorySegment result = ucp_tag_recv_nbx(h, Buffers.at(buffer, offset), length, tag, tagMask, param);
        startedWithCallback(result, p, 0, 0);
        return future;
    }

    /**
     * Looks for a matching tag message that has arrived but is not yet received ({@code ucp_tag_probe_nb}).
     * With {@code remove}, the message is taken out of UCX's queue and must be received with
     * {@link #receiveMessage}. {@link #receivedTag()} and {@link #receivedLength()} describe the message found.
     *
     * @param tag     tag to match
     * @param tagMask which bits must match
     * @param remove  whether to take the message for {@link #receiveMessage}
     * @return the message handle ({@code 0} when nothing matched; without {@code remove}, non-zero means found)
     */
    public long probeTag(long tag, long tagMask, boolean remove) {
        MemorySegment h = handle();
        Scratch s = scratch();
        MemorySegment message = ucp_tag_probe_nb(h, tag, tagMask, remove ? 1 : 0, s.tagInfo);
        if (message.address() != 0) {
            s.receivedTag = ucp_tag_recv_info.sender_tag(s.tagInfo);
            s.receivedLength = ucp_tag_recv_info.length(s.tagInfo);
        }
        return message.address();
    }

    /**
     * Receives a message taken by {@link #probeTag} with {@code remove} ({@code ucp_tag_msg_recv_nbx}).
     *
     * @param message the handle from {@code probeTag}
     * @param buffer  where to receive; at least {@link #receivedLength()} bytes from {@code offset}
     * @param offset  start in {@code buffer}
     * @param length  capacity in bytes
     * @return a request token
     */
    public long receiveMessage(long message, MemorySegment buffer, long offset, long length) {
        MemorySegment h = handle();
        if (message == 0) {
            throw new IllegalArgumentException("no message: probeTag found nothing");
        }
        Buffers.checkRange(buffer, offset, length);
        Scratch s = scratch();
        MemorySegment param = param();
        ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_RECV_INFO());
        param.set(ADDRESS, ucp_request_param_t.recv_info$offset(), s.tagInfo);
        Pending p = acquire(Pending.TAG_RECV, "ucp_tag_msg_recv_nbx", buffer, null);
        return started(ucp_tag_msg_recv_nbx(h, Buffers.at(buffer, offset), length, MemorySegment.ofAddress(message),
                param), p);
    }

    // ---- scatter-gather -------------------------------------------------------------------------------------------

    /** Describes the segments for one operation; a confined arena when every call is on the owner thread. */
    IovList iovList(MemorySegment[] iov) {
        return IovList.of(iov, mode == UcsThreadMode.SINGLE);
    }

    /**
     * Posts a tag receive that scatters the message over several segments ({@code ucp_tag_recv_nbx} with the
     * {@code ucp_dt_make_iov()} datatype): the bytes fill {@code iov[0]}, then {@code iov[1]}, and so on. After
     * completion, {@link #receivedTag()} and {@link #receivedLength()} tell what arrived (the length in bytes). A
     * message longer than the segments together fails with {@link UcxTruncatedException}. Allocates a small
     * descriptor array per call, freed when the operation is released.
     *
     * @param iov     where to receive, in order; every segment native; the segments belong to the operation until it
     *                completes (the worker keeps them reachable), the array may be reused at once
     * @param tag     tag to match
     * @param tagMask which bits of the tag must match ({@code -1L}: all)
     * @return a request token for {@link #poll(long)}; never {@link #COMPLETED}, as for the contiguous form
     * @throws IllegalArgumentException if {@code iov} is empty or holds a heap segment
     */
    public long receiveTag(MemorySegment[] iov, long tag, long tagMask) {
        MemorySegment h = handle();
        IovList list = iovList(iov);
        MemorySegment param = param();
        // no immediate completion, as for the contiguous form: poll() reads the tag and length from the request
        ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_DATATYPE() | UCP_OP_ATTR_FLAG_NO_IMM_CMPL());
        ucp_request_param_t.datatype(param, UcpInline.ucp_dt_make_iov());
        Pending p = acquire(Pending.TAG_RECV, "ucp_tag_recv_nbx", null, list);
        return started(ucp_tag_recv_nbx(h, list.array(), list.count(), tag, tagMask, param), p);
    }

    // ---- active messages ----------------------------------------------------------------------------------------

    /** The one {@code ucp_am_recv_callback_t} stub of this worker; {@code arg} carries the active-message id. */
    final MemorySegment amRecvStub;

    /** Handlers by id; copied on write, read without locking by the upcall. */
    private volatile UcpAmHandler[] amHandlers = new UcpAmHandler[0];

    /** The view handed to handlers; a nested delivery (a handler's send delivered at once) gets a fresh one. */
    private final UcpAmMessage amView = new UcpAmMessage(this);

    /** Descriptors kept by handlers and not yet used, by address; released when the worker closes. */
    private final LongObjectMap<UcpAmData> amKept = new LongObjectMap<>(16);

    private long maxAmHeader = -1;

    /** Throws unless the context has active messages; UCX would only say {@code UCS_ERR_INVALID_PARAM}. */
    void requireAm() {
        if (!context.has(UcpContext.Feature.AM)) {
            throw new IllegalStateException("active messages need UcpContext.Feature.AM; this context has "
                    + context.features());
        }
    }

    static void checkAmId(int id) {
        if (id < 0 || id > 0xFFFF) {
            throw new IllegalArgumentException("active-message id must be in [0, 65535]: " + id);
        }
    }

    /**
     * Registers the handler of active messages with {@code id} ({@code ucp_worker_set_am_recv_handler} with
     * {@link UcpAmHandler#WHOLE_MESSAGE}), replacing the previous one; {@code null} unregisters it. Messages with an
     * id that has no handler are dropped by UCX with a warning.
     *
     * @param id      the active-message id, 0 to 65535
     * @param handler runs on the progressing thread for each message; {@code null} to unregister
     * @throws IllegalStateException if the context lacks {@link UcpContext.Feature#AM}
     */
    public void setAmHandler(int id, UcpAmHandler handler) {
        setAmHandler(id, handler, UcpAmHandler.WHOLE_MESSAGE);
    }

    /**
     * Registers the handler of active messages with {@code id} ({@code ucp_worker_set_am_recv_handler}), replacing
     * the previous one; {@code null} unregisters it. The handler stays registered until replaced, unregistered or
     * the worker closes.
     *
     * @param id      the active-message id, 0 to 65535
     * @param handler runs on the progressing thread for each message; {@code null} to unregister
     * @param flags   {@link UcpAmHandler#WHOLE_MESSAGE} and/or {@link UcpAmHandler#PERSISTENT_DATA}, or {@code 0}
     * @throws IllegalStateException    if the context lacks {@link UcpContext.Feature#AM}
     * @throws IllegalArgumentException for an id out of range or unknown flags
     */
    public void setAmHandler(int id, UcpAmHandler handler, int flags) {
        MemorySegment h = handle();
        requireAm();
        checkAmId(id);
        int known = UcpAmHandler.WHOLE_MESSAGE | UcpAmHandler.PERSISTENT_DATA;
        if ((flags & ~known) != 0) {
            throw new IllegalArgumentException("unknown active-message handler flags 0x"
                    + Integer.toHexString(flags & ~known) + " (use UcpAmHandler.WHOLE_MESSAGE, PERSISTENT_DATA)");
        }
        if (handler != null) {
            publishAmHandler(id, handler); // before UCX can call it
        }
        try (Arena call = Arena.ofConfined()) {
            MemorySegment p = io.github.ucxffm.bindings.ucp_am_handler_param.allocate(call);
            io.github.ucxffm.bindings.ucp_am_handler_param.field_mask(p, UCP_AM_HANDLER_PARAM_FIELD_ID()
                    | UCP_AM_HANDLER_PARAM_FIELD_FLAGS() | UCP_AM_HANDLER_PARAM_FIELD_CB()
                    | UCP_AM_HANDLER_PARAM_FIELD_ARG());
            io.github.ucxffm.bindings.ucp_am_handler_param.id(p, id);
            io.github.ucxffm.bindings.ucp_am_handler_param.flags(p, handler == null ? 0 : flags);
            io.github.ucxffm.bindings.ucp_am_handler_param.cb(p, handler == null ? MemorySegment.NULL : amRecvStub);
            io.github.ucxffm.bindings.ucp_am_handler_param.arg(p, MemorySegment.ofAddress(id));
            byte status = ucp_worker_set_am_recv_handler(h, p);
            if (status != UCS_OK()) {
                if (handler != null) {
                    publishAmHandler(id, null);
                }
                throw UcxException.of("ucp_worker_set_am_recv_handler(id " + id + ")", status);
            }
        }
        if (handler == null) {
            publishAmHandler(id, null); // after UCX stopped calling it
        }
    }

    private void publishAmHandler(int id, UcpAmHandler handler) {
        synchronized (amView) {
            UcpAmHandler[] current = amHandlers;
            if (handler == null && id >= current.length) {
                return;
            }
            UcpAmHandler[] next = java.util.Arrays.copyOf(current, Math.max(current.length, id + 1));
            next[id] = handler;
            amHandlers = next;
        }
    }

    /**
     * The largest user header {@link UcpEndpoint#sendAm} accepts on this worker ({@code ucp_worker_query} with
     * {@code UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER}).
     *
     * @return bytes
     * @throws IllegalStateException if the context lacks {@link UcpContext.Feature#AM}
     */
    public long maxAmHeaderLength() {
        MemorySegment h = handle();
        requireAm();
        long max = maxAmHeader;
        if (max < 0) {
            try (Arena call = Arena.ofConfined()) {
                MemorySegment attr = ucp_worker_attr.allocate(call);
                ucp_worker_attr.field_mask(attr, UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER());
                Status.check(ucp_worker_query(h, attr), "ucp_worker_query");
                max = ucp_worker_attr.max_am_header(attr);
            }
            maxAmHeader = max;
        }
        return max;
    }

    /** The endpoint this worker owns at a native address, or null. */
    UcpEndpoint endpointAt(long address) {
        lock();
        try {
            return endpoints.get(address);
        } finally {
            unlock();
        }
    }

    UcpAmData keepAmData(long descriptor, long length, boolean rendezvous) {
        UcpAmData d = new UcpAmData(this, descriptor, length, rendezvous);
        lock();
        try {
            amKept.put(descriptor, d);
        } finally {
            unlock();
        }
        return d;
    }

    void forgetAmData(long descriptor) {
        lock();
        try {
            amKept.remove(descriptor);
        } finally {
            unlock();
        }
    }

    /** Kept descriptors not yet used. */
    int keptAmDataCount() {
        lock();
        try {
            return amKept.size();
        } finally {
            unlock();
        }
    }

    /** Gives back to UCX what handlers kept and the application did not use; the worker is closing. */
    void releaseKeptAmData() {
        for (long descriptor : amKept.keys()) {
            UcpAmData d = amKept.remove(descriptor);
            if (d != null) {
                d.releaseWithWorker();
            }
        }
    }

    private byte onAmMessage(long arg, long header, long headerLength, long data, long length, long param) {
        UcpAmMessage message = null;
        try {
            int id = (int) arg;
            UcpAmHandler[] handlers = amHandlers;
            UcpAmHandler handler = id < handlers.length ? handlers[id] : null;
            if (handler == null) {
                return (byte) UCS_OK(); // unregistered meanwhile: drop it, as UCX does
            }
            long attr = RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED,
                    param + io.github.ucxffm.bindings.ucp_am_recv_param.recv_attr$offset());
            long replyEp = (attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP()) != 0 ? RawCalls.NATIVE.get(JAVA_LONG_UNALIGNED,
                    param + io.github.ucxffm.bindings.ucp_am_recv_param.reply_ep$offset()) : 0;
            message = amView.isActive() ? new UcpAmMessage(this) : amView;
            message.begin(id, header, headerLength, data, length, attr, replyEp);
            handler.onMessage(message);
            return message.end(false);
        } catch (Throwable t) {
            callbackFailed(t);
            return message == null ? (byte) UCS_OK() : message.end(true);
        }
    }

    // ---- stream polling -----------------------------------------------------------------------------------------

    private MemorySegment streamPoll;

    /**
     * Finds endpoints of this worker with stream data ready to receive ({@code ucp_stream_worker_poll}). Needs
     * {@link UcpContext.Feature#STREAM}.
     *
     * @param ready filled from index 0 with endpoints that have data; its length bounds the count
     * @return how many entries of {@code ready} were filled
     */
    public int pollStreams(UcpEndpoint[] ready) {
        MemorySegment h = handle();
        if (!context.has(UcpContext.Feature.STREAM)) {
            throw new IllegalStateException("stream polling needs UcpContext.Feature.STREAM");
        }
        if (ready.length == 0) {
            return 0;
        }
        long entry = io.github.ucxffm.bindings.ucp_stream_poll_ep.sizeof();
        if (streamPoll == null || streamPoll.byteSize() < entry * ready.length) {
            streamPoll = arena.allocate(entry * ready.length, 8);
        }
        long n = ucp_stream_worker_poll(h, streamPoll, ready.length, 0);
        if (n < 0) {
            throw UcxException.of("ucp_stream_worker_poll", (int) n);
        }
        int filled = 0;
        for (int i = 0; i < n; i++) {
            long ep = streamPoll.get(ADDRESS, i * entry).address();
            UcpEndpoint e;
            lock();
            try {
                e = endpoints.get(ep);
            } finally {
                unlock();
            }
            if (e != null) {
                ready[filled++] = e;
            }
        }
        return filled;
    }

    // ---- endpoints ----------------------------------------------------------------------------------------------

    /**
     * Connects to a worker whose address the application received ({@code ucp_ep_create} with
     * {@code UCP_EP_PARAM_FIELD_REMOTE_ADDRESS}), with peer error handling. The address is checked first
     * ({@link UcpWorkerAddress#FORMAT}): bytes that are truncated, corrupt or not a ucx-ffm worker address throw
     * before UCX sees them. For UCX's own address bytes from a non-ucx-ffm peer, use
     * {@link UcpEndpoint.Params#rawWorker(byte[])}.
     *
     * @param workerAddress the peer's {@link #address()}
     * @return the endpoint, owned by this worker
     * @throws IllegalArgumentException if {@code workerAddress} is not a well-formed ucx-ffm worker address
     */
    public UcpEndpoint connect(byte[] workerAddress) {
        return connect(UcpEndpoint.Params.worker(workerAddress));
    }

    /**
     * Connects to a listener ({@code ucp_ep_create} with {@code UCP_EP_PARAM_FIELD_SOCK_ADDR}), with peer error
     * handling. The connection completes with progress; operations may be started at once.
     *
     * @param address the listener's address
     * @return the endpoint, owned by this worker
     */
    public UcpEndpoint connect(InetSocketAddress address) {
        return connect(UcpEndpoint.Params.socket(address));
    }

    /**
     * Creates an endpoint as described.
     *
     * @param params where to connect and how to handle errors
     * @return the endpoint, owned by this worker
     */
    public UcpEndpoint connect(UcpEndpoint.Params params) {
        check();
        return new UcpEndpoint(this, params);
    }

    /**
     * Listens for clients on a socket address; requests the policy allows wait in {@link UcpListener#poll()}.
     *
     * @param address where to listen; port 0 lets the system choose ({@link UcpListener#address()} tells)
     * @return the listener, owned by this worker
     */
    public UcpListener listen(InetSocketAddress address) {
        return listen(address, null, null);
    }

    /**
     * Listens for clients on a socket address.
     *
     * @param address where to listen; port 0 lets the system choose
     * @param policy  decides, per request, whether to go on ({@code true}) or reject at once; {@code null} allows
     *                every request
     * @param handler receives each allowed request on the progressing thread, to accept or reject; {@code null}
     *                queues them for {@link UcpListener#poll()}
     * @return the listener, owned by this worker
     */
    public UcpListener listen(InetSocketAddress address, java.util.function.Predicate<UcpConnectionRequest> policy,
                              Consumer<UcpConnectionRequest> handler) {
        check();
        return new UcpListener(this, java.util.Objects.requireNonNull(address, "address"), policy, handler);
    }

    /** {@link #check()}, and refuses inside a callback: for closing the worker's context. */
    void checkClosable() {
        check();
        refuseInCallback("closing the context");
    }

    /** The worker handle without checks, for closing children while the worker itself closes. */
    MemorySegment nativeHandleUnchecked() {
        return handle;
    }

    // ---- life cycle ---------------------------------------------------------------------------------------------

    private static boolean isPolledInFlight(Pending p) {
        return p.token != 0 && (p.token & 1L) == 0;
    }

    @Override
    void beforeClose() {
        check();
        refuseInCallback("closing the worker");
        // Receives still posted would otherwise be matched while the endpoints close (closing progresses the
        // worker) and written into buffers the application may be about to free: cancel them first.
        for (Pending p : pending) {
            if (isPolledInFlight(p) && (p.kind == Pending.TAG_RECV || p.kind == Pending.STREAM_RECV)) {
                ucp_request_cancel(handle, MemorySegment.ofAddress(p.request));
            }
        }
    }

    @Override
    void release() {
        if (handle == null) {
            arena.close();
            return; // ucp_worker_create failed in the constructor: there is no native worker
        }
        releaseKeptAmData(); // descriptors handlers kept and the application left unused
        finishDeferredCloses(true);
        // Endpoints are closed (children first). What is still in flight is released now: UCX frees each request
        // when it completes, and nothing will look at it again.
        for (Pending p : pending) {
            if (isPolledInFlight(p)) {
                MemorySegment r = MemorySegment.ofAddress(p.request);
                ucp_request_cancel(handle, r);
                ucp_request_free(r);
            }
        }
        ucp_worker_destroy(handle);
        for (Pending p : pending) {
            if (isPolledInFlight(p)) {
                // UCX no longer reads what those operations held: end their use of registered memory, free their
                // IOV arrays (recycle does both)
                polledInFlight--;
                recycle(p);
            }
        }
        // Callback and future operations whose completion never came: report them canceled, so that no future
        // waits forever and every registered memory's use ends.
        for (Pending p : pending) {
            if (p.op != null) {
                try {
                    deliver(p, UCS_ERR_CANCELED(), 0, 0);
                } catch (Throwable t) {
                    callbackFailed(t);
                }
            }
        }
        arena.close();
    }

    @Override
    public String toString() {
        return "UcpWorker[" + mode + (isClosed() ? ", closed]" : "]");
    }

    /** Used by handlers that must hand failures to the application. */
    Consumer<Throwable> failureSink() {
        return this::callbackFailed;
    }
}
