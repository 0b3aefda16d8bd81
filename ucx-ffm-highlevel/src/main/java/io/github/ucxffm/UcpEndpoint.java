package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_ep_attr;
import io.github.ucxffm.bindings.ucp_ep_params;
import io.github.ucxffm.bindings.ucp_err_handler;
import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucs_sock_addr;
import io.github.ucxffm.bindings.support.UcsMacros;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A UCP endpoint ({@code ucp_ep_h}): one side of a connection to a peer worker, through which messages, streams,
 * active messages, remote memory access and atomics go.
 * <p>
 * <b>Ownership.</b> Created by {@link UcpWorker#connect} or {@link UcpListener}/{@link UcpConnectionRequest#accept},
 * owned by its worker. {@link #close()} flushes and closes it (bounded by a timeout, then forced); a failed
 * endpoint is force-closed. Remote keys unpacked on it are closed first.
 * <p>
 * <b>Threads.</b> Those of its worker: a SINGLE worker's endpoints may be used only on the worker's thread.
 * <p>
 * <b>Errors.</b> Peer error handling ({@code UCP_ERR_HANDLING_MODE_PEER}) is on unless turned off in
 * {@link Params}: when the peer dies or the link fails, operations in flight complete with a
 * {@link UcxPeerFailureException}, the error handler runs once on the progressing thread, and later operations
 * on the endpoint throw at once. Close the endpoint; connect again for a new one.
 */
public final class UcpEndpoint extends UcxHandle {

    private static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(10);

    /**
     * How to create an endpoint: the peer (a worker address, a socket address or a connection request) and the
     * error handling. Not thread-safe; a value to build and hand to {@link UcpWorker#connect(Params)}.
     */
    public static final class Params {
        final byte[] workerAddress;
        final InetSocketAddress socketAddress;
        final UcpConnectionRequest connectionRequest;
        boolean peerErrorHandling = true;
        Consumer<UcxException> errorHandler;
        String name;
        boolean sendClientId;

        private Params(byte[] workerAddress, InetSocketAddress socketAddress, UcpConnectionRequest request) {
            this.workerAddress = workerAddress;
            this.socketAddress = socketAddress;
            this.connectionRequest = request;
        }

        /**
         * Connect to a worker by its address.
         *
         * @param address bytes from the peer's {@link UcpWorker#address()}
         * @return the parameters
         */
        public static Params worker(byte[] address) {
            Objects.requireNonNull(address, "address");
            if (address.length == 0) {
                throw new IllegalArgumentException("empty worker address");
            }
            return new Params(address.clone(), null, null);
        }

        /**
         * Connect to a listener by socket address (client-server mode).
         *
         * @param address the listener's address
         * @return the parameters
         */
        public static Params socket(InetSocketAddress address) {
            return new Params(null, Objects.requireNonNull(address, "address"), null);
        }

        static Params request(UcpConnectionRequest request) {
            return new Params(null, null, request);
        }

        /**
         * Whether UCX reports peer failures (default {@code true}). Without it, a dead peer may hang operations.
         *
         * @param enabled {@code false} for {@code UCP_ERR_HANDLING_MODE_NONE}
         * @return these parameters
         */
        public Params peerErrorHandling(boolean enabled) {
            this.peerErrorHandling = enabled;
            return this;
        }

        /**
         * What to run, once, when the endpoint fails; on the progressing thread, inside {@code progress()}.
         *
         * @param handler receives the failure
         * @return these parameters
         */
        public Params onError(Consumer<UcxException> handler) {
            this.errorHandler = handler;
            return this;
        }

        /**
         * A name for UCX's logs.
         *
         * @param endpointName the name
         * @return these parameters
         */
        public Params name(String endpointName) {
            this.name = endpointName;
            return this;
        }

        /**
         * Send this worker's client id to the server (socket connections), which sees it in
         * {@link UcpConnectionRequest#clientId()}.
         *
         * @param send whether to send it
         * @return these parameters
         */
        public Params sendClientId(boolean send) {
            this.sendClientId = send;
            return this;
        }
    }

    private final UcpWorker worker;
    private final MemorySegment handle;
    private final Consumer<UcxException> errorHandler;
    private final boolean peerErrorHandling;
    private volatile int failure;
    private boolean errorReported;
    private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;

    UcpEndpoint(UcpWorker worker, Params params) {
        super("UcpEndpoint", worker);
        this.worker = worker;
        this.errorHandler = params.errorHandler;
        this.peerErrorHandling = params.peerErrorHandling;
        MemorySegment created;
        try (Arena call = Arena.ofConfined()) {
            MemorySegment p = ucp_ep_params.allocate(call);
            long mask = 0;
            int flags = 0;
            if (params.workerAddress != null) {
                mask |= UCP_EP_PARAM_FIELD_REMOTE_ADDRESS();
                ucp_ep_params.address(p, call.allocateFrom(JAVA_BYTE, params.workerAddress));
            } else if (params.socketAddress != null) {
                mask |= UCP_EP_PARAM_FIELD_SOCK_ADDR() | UCP_EP_PARAM_FIELD_FLAGS();
                flags |= UCP_EP_PARAMS_FLAGS_CLIENT_SERVER();
                MemorySegment sa = SockAddr.of(params.socketAddress, call);
                MemorySegment sock = ucp_ep_params.sockaddr(p);
                ucs_sock_addr.addr(sock, sa);
                ucs_sock_addr.addrlen(sock, (int) sa.byteSize());
            } else {
                mask |= UCP_EP_PARAM_FIELD_CONN_REQUEST();
                ucp_ep_params.conn_request(p, params.connectionRequest.take());
            }
            if (params.sendClientId) {
                mask |= UCP_EP_PARAM_FIELD_FLAGS();
                flags |= UCP_EP_PARAMS_FLAGS_SEND_CLIENT_ID();
            }
            if (flags != 0) {
                ucp_ep_params.flags(p, flags);
            }
            mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE();
            ucp_ep_params.err_mode(p, params.peerErrorHandling ? UCP_ERR_HANDLING_MODE_PEER()
                    : UCP_ERR_HANDLING_MODE_NONE());
            mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER();
            MemorySegment handler = ucp_ep_params.err_handler(p);
            ucp_err_handler.cb(handler, worker.errorStub);
            if (params.name != null) {
                mask |= UCP_EP_PARAM_FIELD_NAME();
                ucp_ep_params.name(p, call.allocateFrom(params.name));
            }
            ucp_ep_params.field_mask(p, mask);
            MemorySegment epP = call.allocate(ADDRESS);
            byte status = ucp_ep_create(worker.handle(), p, epP);
            if (status != UCS_OK()) {
                super.close();
                throw UcxException.of("ucp_ep_create", status);
            }
            created = epP.get(ADDRESS, 0);
        }
        this.handle = created;
        worker.register(this, handle.address());
    }

    /**
     * The worker this endpoint belongs to.
     *
     * @return the worker
     */
    public UcpWorker worker() {
        return worker;
    }

    /** Checks the endpoint is open, the thread is allowed, and the peer has not failed; then gives the handle. */
    MemorySegment handle() {
        worker.check();
        ensureOpen();
        int f = failure;
        if (f != 0) {
            throw UcxException.of("endpoint failed earlier", f);
        }
        return handle;
    }

    /**
     * The native handle for calls through the raw bindings.
     *
     * @return the {@code ucp_ep_h}; it dangles after {@link #close()}
     */
    public MemorySegment nativeHandle() {
        worker.check();
        ensureOpen();
        return handle;
    }

    /**
     * Whether UCX has reported this endpoint failed.
     *
     * @return {@code true} after a peer or link failure
     */
    public boolean isFailed() {
        return failure != 0;
    }

    /**
     * The failure UCX reported, if any.
     *
     * @return the status of the failure, or {@link UcsStatus#OK}
     */
    public UcsStatus failureStatus() {
        int f = failure;
        return f == 0 ? UcsStatus.OK : UcsStatus.of(f);
    }

    /** Called on the progressing thread by the error upcall, or when an operation completes with a peer failure. */
    void markFailed(int status) {
        if (status >= 0) {
            return;
        }
        if (failure == 0) {
            failure = status;
        }
        if (!errorReported) {
            errorReported = true;
            if (errorHandler != null) {
                try {
                    errorHandler.accept(UcxException.of("endpoint error handler", status));
                } catch (Throwable t) {
                    worker.callbackFailed(t);
                }
            }
        }
    }

    /**
     * How long {@link #close()} waits for the flush before forcing.
     *
     * @param timeout the bound
     * @return this endpoint
     */
    public UcpEndpoint closeTimeout(Duration timeout) {
        this.closeTimeout = Objects.requireNonNull(timeout);
        return this;
    }

    // ---- tag matching -------------------------------------------------------------------------------------------

    private long send(MemorySegment buffer, long offset, long length, long tag, boolean sync) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = worker.param();
        Pending p = worker.acquire(Pending.SEND, sync ? "ucp_tag_send_sync_nbx" : "ucp_tag_send_nbx", buffer, null);
        p.endpoint = this;
        MemorySegment at = Buffers.at(buffer, offset);
        return worker.started(sync ? ucp_tag_send_sync_nbx(ep, at, length, tag, param)
                : ucp_tag_send_nbx(ep, at, length, tag, param), p);
    }

    /**
     * Sends a tagged message ({@code ucp_tag_send_nbx}). Completion means the buffer may be reused, not that the
     * peer received it.
     *
     * @param buffer the data; belongs to the operation until it completes
     * @param offset start in {@code buffer}
     * @param length bytes to send
     * @param tag    the message tag
     * @return a request token for {@link UcpWorker#poll(long)}
     */
    public long sendTag(MemorySegment buffer, long offset, long length, long tag) {
        return send(buffer, offset, length, tag, false);
    }

    /**
     * Sends a tagged message that completes only when the peer has matched it with a receive
     * ({@code ucp_tag_send_sync_nbx}).
     *
     * @param buffer the data; belongs to the operation until it completes
     * @param offset start in {@code buffer}
     * @param length bytes to send
     * @param tag    the message tag
     * @return a request token
     */
    public long sendTagSync(MemorySegment buffer, long offset, long length, long tag) {
        return send(buffer, offset, length, tag, true);
    }

    /**
     * Sends a tagged message; {@code callback} runs on completion.
     *
     * @param buffer   the data; belongs to the operation until the callback runs
     * @param offset   start in {@code buffer}
     * @param length   bytes to send
     * @param tag      the message tag
     * @param callback called once on the progressing thread (or before this method returns)
     */
    public void sendTag(MemorySegment buffer, long offset, long length, long tag, UcpCallback callback) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = worker.param();
        Pending p = worker.acquire(Pending.SEND, "ucp_tag_send_nbx", buffer, null);
        p.endpoint = this;
        p.callback = Objects.requireNonNull(callback, "callback");
        worker.callbackParams(param, 0, worker.sendStub, p);
        worker.startedWithCallback(ucp_tag_send_nbx(ep, Buffers.at(buffer, offset), length, tag, param), p, 0, 0);
    }

    /**
     * Sends a tagged message, completing a future (allocates; for control paths and simple code).
     *
     * @param buffer the data; belongs to the operation until the future completes
     * @param offset start in {@code buffer}
     * @param length bytes to send
     * @param tag    the message tag
     * @return a future completed on the progressing thread
     */
    public CompletableFuture<Long> sendTagAsync(MemorySegment buffer, long offset, long length, long tag) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = worker.param();
        Pending p = worker.acquire(Pending.SEND, "ucp_tag_send_nbx", buffer, null);
        p.endpoint = this;
        CompletableFuture<Long> future = new CompletableFuture<>();
        p.future = future;
        worker.callbackParams(param, 0, worker.sendStub, p);
        worker.startedWithCallback(ucp_tag_send_nbx(ep, Buffers.at(buffer, offset), length, tag, param), p, length, 0);
        return future;
    }

    // ---- streams --------------------------------------------------------------------------------------------------

    /**
     * Sends bytes on the endpoint's ordered stream ({@code ucp_stream_send_nbx}).
     *
     * @param buffer the data; belongs to the operation until it completes
     * @param offset start in {@code buffer}
     * @param length bytes to send
     * @return a request token
     */
    public long sendStream(MemorySegment buffer, long offset, long length) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = worker.param();
        Pending p = worker.acquire(Pending.SEND, "ucp_stream_send_nbx", buffer, null);
        p.endpoint = this;
        return worker.started(ucp_stream_send_nbx(ep, Buffers.at(buffer, offset), length, param), p);
    }

    /**
     * Receives bytes from the endpoint's stream ({@code ucp_stream_recv_nbx}). Without {@code waitAll} it completes
     * as soon as some bytes arrived; {@link UcpWorker#receivedLength()} tells how many.
     *
     * @param buffer  where to receive; belongs to the operation until it completes
     * @param offset  start in {@code buffer}
     * @param length  capacity in bytes
     * @param waitAll complete only when {@code length} bytes arrived ({@code UCP_STREAM_RECV_FLAG_WAITALL})
     * @return a request token
     */
    public long receiveStream(MemorySegment buffer, long offset, long length, boolean waitAll) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        UcpWorker.Scratch s = worker.scratch();
        MemorySegment param = worker.param();
        ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_FLAGS());
        ucp_request_param_t.flags(param, waitAll ? UCP_STREAM_RECV_FLAG_WAITALL() : 0);
        Pending p = worker.acquire(Pending.STREAM_RECV, "ucp_stream_recv_nbx", buffer, null);
        p.endpoint = this;
        MemorySegment result = ucp_stream_recv_nbx(ep, Buffers.at(buffer, offset), length, s.length, param);
        if (result.address() == 0) {
            s.receivedLength = s.length.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0);
        }
        return worker.started(result, p);
    }

    // ---- remote keys ------------------------------------------------------------------------------------------

    /**
     * Unpacks a key made by {@link UcpMemory#packRemoteKey()} on the peer, after checking its format, length and
     * checksum: truncated, corrupt or foreign bytes throw {@link IllegalArgumentException} before UCX sees them.
     *
     * @param packed the key bytes as the peer packed them
     * @return the key, owned by this endpoint
     */
    public UcpRemoteKey unpackRemoteKey(byte[] packed) {
        return UcpRemoteKey.unpack(this, packed);
    }

    /**
     * Unpacks UCX's own key bytes from a peer that does not use ucx-ffm ({@link UcpMemory#packRawRemoteKey()} on
     * the other side). UCX cannot check them: pass only bytes from a trusted peer.
     *
     * @param key           UCX's key bytes
     * @param regionAddress the peer's region address, for local bounds checks
     * @param regionLength  the peer's region length
     * @return the key, owned by this endpoint
     */
    public UcpRemoteKey unpackRawRemoteKey(byte[] key, long regionAddress, long regionLength) {
        return UcpRemoteKey.unpackRaw(this, key, regionAddress, regionLength);
    }

    // ---- flush and close ------------------------------------------------------------------------------------------

    /**
     * Starts flushing the endpoint ({@code ucp_ep_flush_nbx}): on completion, every operation started on it before
     * has completed remotely.
     *
     * @return a request token
     */
    public long flush() {
        MemorySegment ep = handle();
        MemorySegment param = worker.param();
        Pending p = worker.acquire(Pending.OTHER, "ucp_ep_flush_nbx", null, null);
        p.endpoint = this;
        return worker.started(ucp_ep_flush_nbx(ep, param), p);
    }

    /**
     * The local socket address of a socket-connected endpoint ({@code ucp_ep_query}).
     *
     * @return the address, or {@code null} when UCX does not know one (worker-address endpoints)
     */
    public InetSocketAddress localAddress() {
        return queryAddress(UCP_EP_ATTR_FIELD_LOCAL_SOCKADDR(), true);
    }

    /**
     * The peer's socket address of a socket-connected endpoint ({@code ucp_ep_query}).
     *
     * @return the address, or {@code null} when UCX does not know one
     */
    public InetSocketAddress remoteAddress() {
        return queryAddress(UCP_EP_ATTR_FIELD_REMOTE_SOCKADDR(), false);
    }

    private InetSocketAddress queryAddress(long field, boolean local) {
        MemorySegment ep = handle();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment attr = ucp_ep_attr.allocate(call);
            ucp_ep_attr.field_mask(attr, field);
            byte status = ucp_ep_query(ep, attr);
            if (status == UCS_ERR_UNSUPPORTED() || status == UCS_ERR_NOT_CONNECTED()
                    || status == UCS_ERR_INVALID_PARAM()) {
                return null;
            }
            Status.check(status, "ucp_ep_query");
            return SockAddr.read(local ? ucp_ep_attr.local_sockaddr(attr) : ucp_ep_attr.remote_sockaddr(attr));
        }
    }

    /**
     * Closes at once, discarding what is in flight ({@code ucp_ep_close_nbx} with {@code UCP_EP_CLOSE_FLAG_FORCE}).
     * Operations in flight complete with an error.
     */
    public void closeForce() {
        force = true;
        close();
    }

    private boolean force;

    @Override
    void beforeClose() {
        worker.check();
    }

    @Override
    void release() {
        boolean forced = force || failure != 0 || worker.isClosing();
        MemorySegment workerHandle = worker.nativeHandleUnchecked();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment param = ucp_request_param_t.allocate(call);
            if (forced && peerErrorHandling) {
                ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_FLAGS());
                ucp_request_param_t.flags(param, UCP_EP_CLOSE_FLAG_FORCE());
            }
            MemorySegment request = ucp_ep_close_nbx(handle, param);
            if (UcsMacros.UCS_PTR_IS_PTR(request)) {
                long deadline = System.nanoTime() + (forced ? Duration.ofSeconds(2) : closeTimeout).toNanos();
                while (ucp_request_check_status(request) == UCS_INPROGRESS() && System.nanoTime() - deadline < 0) {
                    ucp_worker_progress(workerHandle);
                }
                // Released either way: UCX frees a request still in flight when it completes.
                ucp_request_free(request);
            }
        } finally {
            worker.unregister(handle.address());
        }
    }

    @Override
    public String toString() {
        return "UcpEndpoint[" + (isClosed() ? "closed" : failure != 0 ? "failed " + UcsStatus.of(failure) : "open")
                + "]";
    }
}
