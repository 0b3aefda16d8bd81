package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_stream_poll_ep;
import io.github.ucxffm.bindings.ucp_worker_attr;
import io.github.ucxffm.bindings.ucp_worker_params;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

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
 * <p>
 * <b>Critical calls.</b> While nothing that UCX could call back into Java is registered with a SINGLE or SERIALIZED
 * worker, its polled operations and {@link #progress()} are made as critical downcalls, without the thread-state
 * transition (a few nanoseconds each). Those things are: an endpoint with an error callback (every endpoint has one
 * unless made with {@link UcpEndpoint.Params#errorCallback errorCallback(false)}), a listener, an active-message
 * handler, an operation started with a {@link UcpCallback} or as a future that has not completed, and an endpoint
 * close started inside a callback. The worker counts them; the choice is made per call and needs nothing of the
 * application. A critical call holds up the JVM's safepoints (a garbage collection waits for it), which for
 * {@code ucp_worker_progress} can mean the time to copy a large message over shared memory. Waiting
 * ({@link #await}, {@link Idle#BLOCK}) is never critical. MULTI workers make no critical call.
 * <p>
 * <b>Inside.</b> The worker is a facade over package-private parts, one job each (see {@code docs/INTERNALS.md}):
 * {@link RequestTable} (operations in flight, tokens, completion), {@link Upcalls} (stubs, callback depth and
 * errors), {@link AmDispatcher} (active-message handlers and kept data), {@link Scratch} (per-thread parameter
 * structs and receive results), {@link DeferredCloses}, {@link TagReceiver}, and a {@link Registry} each for
 * endpoints and listeners.
 */
public final class UcpWorker extends UcxHandle {

    /** The token of an operation that completed when it was started. */
    public static final long COMPLETED = 0L;

    private final UcpContext context;
    private final UcsThreadMode mode;
    private final Thread owner;
    /** The worker's native memory: upcall stubs, scratch structs, the stream-poll array. */
    private final Arena arena = Arena.ofShared();
    private final MemorySegment handle;
    /** {@link #eventFd()}, once asked; -1 before. Written by any thread alike, so a race only asks UCX twice. */
    private volatile int eventFd = -1;

    // The parts; final, of final classes, so that the JIT calls them directly.
    final Scratch.Source scratch;
    final RequestTable requests;
    final Upcalls upcalls;
    final AmDispatcher am;
    final DeferredCloses closes;
    final Registry<UcpEndpoint> endpoints;
    final Registry<UcpListener> listeners;
    private final TagReceiver tags;

    /** {@code ucp_stream_worker_poll}'s output, grown to the largest request. */
    private MemorySegment streamPoll;
    private long maxAmHeader = -1;

    UcpWorker(UcpContext context, UcsThreadMode mode, long clientId) {
        super("UcpWorker", context);
        this.context = context;
        this.mode = mode;
        this.owner = Thread.currentThread();
        boolean multi = mode == UcsThreadMode.MULTI;
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
        // Whether the request test and free calls may skip the thread-state transition (see RawCalls): not for
        // MULTI workers.
        boolean critical = !multi;
        Guard guard = new Guard(multi);
        scratch = new Scratch.Source(arena, multi);
        requests = new RequestTable(guard, scratch, critical);
        upcalls = new Upcalls(this, multi, arena);
        am = new AmDispatcher(this, guard, upcalls.amRecvStub, arena, AmQueue.usable(multi));
        closes = new DeferredCloses(guard, critical, requests);
        endpoints = new Registry<>(guard);
        listeners = new Registry<>(guard);
        tags = new TagReceiver(requests, scratch, upcalls.tagRecvStub, critical);
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

    /** The worker handle without checks, for closing children while the worker itself closes. */
    MemorySegment nativeHandleUnchecked() {
        return handle;
    }

    /**
     * Whether the calling thread is inside one of this worker's callbacks (completion, active-message, error or
     * connection handler), where UCX allows neither progress nor destroying the worker.
     *
     * @return {@code true} inside a callback
     */
    public boolean inCallback() {
        return upcalls.inCallback();
    }

    /** {@link #check()}, and refuses inside a callback: for closing the worker's context. */
    void checkClosable() {
        check();
        upcalls.refuseInCallback("closing the context");
    }

    /** The parameter struct for the next operation, with every field this layer uses cleared. */
    MemorySegment param() {
        return scratch.get().clearedParam();
    }

    /** Describes the segments for one operation; a confined arena when every call is on the owner thread. */
    IovList iovList(MemorySegment[] iov) {
        return IovList.of(iov, mode == UcsThreadMode.SINGLE);
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
        if (upcalls.inCallback()) {
            throw new IllegalStateException("progress() inside a callback of this UcpWorker: UCX does not allow "
                    + "it (the callback runs inside ucp_worker_progress)");
        }
        int work = RawCalls.progress(requests.quiet(), h.address());
        if (am.hasQueued()) {
            am.deliverQueued(); // small active messages the native callback queued (AmQueue)
        }
        if (!closes.isEmpty()) {
            closes.finish(false);
        }
        if (upcalls.hasFailures()) {
            upcalls.rethrow();
        }
        return work;
    }

    /**
     * The worker's event file descriptor ({@code ucp_worker_get_efd}), readable when {@link #arm()} was called and
     * there is work. Needs {@link UcpContext.Feature#WAKEUP}.
     *
     * @return the file descriptor; owned by the worker, do not close it
     */
    public int eventFd() {
        requireWakeup();
        MemorySegment h = handle();
        int fd = eventFd;
        if (fd < 0) { // asked once: the descriptor is the worker's for its whole life, and Idle.BLOCK asks each time
            try (Arena call = Arena.ofConfined()) {
                MemorySegment out = call.allocate(JAVA_INT);
                Status.check(ucp_worker_get_efd(h, out), "ucp_worker_get_efd");
                fd = out.get(JAVA_INT, 0);
            }
            eventFd = fd;
        }
        return fd;
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

    /**
     * Sleeps until the worker has events, {@link #signal()} is called, or {@code timeoutMillis} passed: arms the
     * event file descriptor ({@link #arm()}) and, when armed, waits for it with {@code poll(2)}. This is the sleep
     * of an event loop that has other deadlines (timers) than UCX's: call it when {@link #progress()} found nothing
     * to do. Blocks the carrier thread: use a platform thread. Allocates nothing.
     *
     * @param timeoutMillis the longest sleep, 0 or more
     * @return {@code false} without sleeping when {@code arm()} found work to progress first (progress, then call
     *         again), {@code true} after the sleep (an event, a signal, the timeout, or an interrupted poll)
     */
    public boolean armAndWait(int timeoutMillis) {
        if (timeoutMillis < 0) {
            throw new IllegalArgumentException("timeoutMillis must not be negative: " + timeoutMillis);
        }
        if (!arm()) {
            return false;
        }
        Libc.awaitReadable(scratch.get().pollFd, eventFd(), timeoutMillis);
        return true;
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
    public void awaitCondition(BooleanSupplier condition, Duration timeout, Idle idle) {
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
                if (left > 0) {
                    armAndWait((int) Math.min(Integer.MAX_VALUE, left / 1_000_000 + 1));
                }
            }
        }
    }

    // ---- requests -------------------------------------------------------------------------------------------------

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
        check();
        return requests.poll(request);
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
        long r = requests.requestOf(request);
        if (r != 0) {
            ucp_request_cancel(handle, MemorySegment.ofAddress(r));
        }
    }

    /**
     * The sender's tag of the last tag receive or probe completed by this thread on this worker.
     *
     * @return the sender tag
     */
    public long receivedTag() {
        return scratch.get().receivedTag;
    }

    /**
     * The length of the last receive (tag, stream) or probe completed by this thread on this worker.
     *
     * @return bytes received
     */
    public long receivedLength() {
        return scratch.get().receivedLength;
    }

    /** Operations started but not yet completed and released. */
    int inFlightCount() {
        return requests.inFlightCount();
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
     * UCX's description of this worker ({@code ucp_worker_print_info}): its transports, address and settings.
     *
     * @return the text UCX prints
     */
    public String describe() {
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
        int slot = requests.reserve(RequestTable.OTHER, "ucp_worker_flush_nbx", null, null, null);
        return requests.started(ucp_worker_flush_nbx(h, param), slot);
    }

    /**
     * Flushes every endpoint of the worker ({@code ucp_worker_flush_nbx}); {@code callback} runs when every operation
     * started before has completed at the remote side too.
     *
     * @param callback called once on the progressing thread (or before this method returns), with length 0
     */
    public void flush(UcpCallback callback) {
        flush(Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Flushes every endpoint of the worker ({@code ucp_worker_flush_nbx}), completing a future (allocates; for
     * control paths and simple code).
     *
     * @return a future of {@code 0}, completed on the progressing thread
     */
    public CompletableFuture<Long> flushAsync() {
        return RequestTable.future(this::flush);
    }

    private void flush(UcpCallback callback, CompletableFuture<Long> future) {
        MemorySegment h = handle();
        MemorySegment param = param();
        int slot = requests.reserveCompletion(RequestTable.OTHER, "ucp_worker_flush_nbx", null, null, null, null, callback,
                future, 0);
        requests.callbackParams(param, 0, upcalls.sendStub, slot);
        requests.startedWithCallback(ucp_worker_flush_nbx(h, param), slot, 0, 0);
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
        return tags.receive(handle().address(), buffer, offset, length, tag, tagMask);
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
        tags.receive(h, buffer, offset, length, tag, tagMask, Objects.requireNonNull(callback, "callback"), null);
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
        CompletableFuture<Long> future = new CompletableFuture<>();
        tags.receive(h, buffer, offset, length, tag, tagMask, null, future);
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
        return tags.probe(handle(), tag, tagMask, remove);
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
        return tags.receiveMessage(handle(), message, buffer, offset, length);
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
        return tags.receive(h, iovList(iov), tag, tagMask);
    }

    // ---- active messages ----------------------------------------------------------------------------------------

    /** Throws unless the context has active messages; UCX would only say {@code UCS_ERR_INVALID_PARAM}. */
    void requireAm() {
        if (!context.has(UcpContext.Feature.AM)) {
            throw new IllegalStateException("active messages need UcpContext.Feature.AM; this context has "
                    + context.features());
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
        am.set(h, id, handler, flags);
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

    /** Kept descriptors not yet used. */
    int keptAmDataCount() {
        return am.keptCount();
    }

    // ---- stream polling -----------------------------------------------------------------------------------------

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
        long entry = ucp_stream_poll_ep.sizeof();
        if (streamPoll == null || streamPoll.byteSize() < entry * ready.length) {
            streamPoll = arena.allocate(entry * ready.length, 8);
        }
        long n = ucp_stream_worker_poll(h, streamPoll, ready.length, 0);
        if (n < 0) {
            throw UcxException.of("ucp_stream_worker_poll", (int) n);
        }
        int filled = 0;
        for (int i = 0; i < n; i++) {
            UcpEndpoint e = endpoints.get(streamPoll.get(ADDRESS, i * entry).address());
            if (e != null) {
                ready[filled++] = e;
            }
        }
        return filled;
    }

    // ---- endpoints and listeners ------------------------------------------------------------------------------

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
     * @param address where to listen; port 0 lets the system choose ({@link UcpListener#address()} tells); IPv4 only
     *                (see the three-argument form)
     * @return the listener, owned by this worker
     * @throws IllegalArgumentException for an IPv6 address
     */
    public UcpListener listen(InetSocketAddress address) {
        return listen(address, null, null);
    }

    /**
     * Listens for clients on a socket address.
     *
     * @param address where to listen; port 0 lets the system choose. IPv4 only: UCX (1.13 to 1.23) corrupts its heap
     *                when it accepts a connection made over IPv6 loopback, and finds other IPv6 destinations
     *                unreachable, so an IPv6 address is refused ({@code -Ducxffm.sockaddr.ipv6=true} allows it, for a
     *                UCX release known to be fixed)
     * @param policy  decides, per request, whether to go on ({@code true}) or reject at once; {@code null} allows
     *                every request
     * @param handler receives each allowed request on the progressing thread, to accept or reject; {@code null}
     *                queues them for {@link UcpListener#poll()}
     * @return the listener, owned by this worker
     * @throws IllegalArgumentException for an IPv6 address
     */
    public UcpListener listen(InetSocketAddress address, Predicate<UcpConnectionRequest> policy,
                              Consumer<UcpConnectionRequest> handler) {
        check();
        Objects.requireNonNull(address, "address");
        return new UcpListener(this, SockAddr.requireIpv4(address, "listener address"), policy, handler);
    }

    // ---- life cycle ---------------------------------------------------------------------------------------------

    @Override
    void beforeClose() {
        if (handle == null) {
            return; // ucp_worker_create failed in the constructor: no parts were made, nothing to refuse or cancel
        }
        check();
        upcalls.refuseInCallback("closing the worker");
        // Receives still posted would otherwise be matched while the endpoints close (closing progresses the
        // worker) and written into buffers the application may be about to free: cancel them first.
        requests.cancelPostedReceives(handle);
    }

    @Override
    void release() {
        if (handle == null) {
            arena.close();
            return; // ucp_worker_create failed in the constructor: there is no native worker
        }
        am.releaseKept(); // descriptors handlers kept and the application left unused
        closes.finish(true);
        // Endpoints are closed (children first). What is still in flight is released now: UCX frees each request
        // when it completes, and nothing will look at it again.
        requests.freeRequestsInFlight(handle);
        ucp_worker_destroy(handle);
        requests.abandonAll(upcalls);
        arena.close();
    }

    @Override
    public String toString() {
        return "UcpWorker[" + mode + (isClosed() ? ", closed]" : "]");
    }
}
