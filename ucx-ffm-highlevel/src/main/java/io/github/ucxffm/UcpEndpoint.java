package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_ep_attr;
import io.github.ucxffm.bindings.ucp_ep_params;
import io.github.ucxffm.bindings.ucp_err_handler;
import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucs_sock_addr;
import io.github.ucxffm.bindings.support.UcpInline;
import io.github.ucxffm.bindings.support.UcsMacros;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

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
 * <p>
 * <b>Overloads.</b> Every operation follows one rule. Its parameters are the same in each form (the buffer, offset
 * and length first, then what the operation needs), and it comes in three forms that differ only in how completion
 * is reported:
 * <ul>
 *   <li>{@code op(...)} returns a {@code long} token for {@link UcpWorker#poll(long)} ({@link UcpWorker#COMPLETED}
 *       when it finished at once). Allocates nothing: the form for hot paths.</li>
 *   <li>{@code op(..., UcpCallback)} returns nothing and calls back once, on the progressing thread or before it
 *       returns. Allocates nothing. A receive's callback gets the received length, any other operation's 0.</li>
 *   <li>{@code opAsync(...)} returns a {@code CompletableFuture<Long>} of the operation's length (bytes sent,
 *       received, written or read; the old value for an atomic; 0 for a flush). Allocates: for control paths.</li>
 * </ul>
 * Where the local buffer of an operation is typically registered memory (put and get, the one-sided transfers),
 * each form also takes a {@link UcpMemory} instead of the {@link MemorySegment}: the memory then counts the
 * operation as in use ({@link UcpMemory#operationsInFlight()}) and refuses to close until it completes.
 * <p>
 * Where a form is missing, on purpose:
 * <ul>
 *   <li>Tag, stream and active-message operations take no {@code UcpMemory}: UCX finds a registration by address
 *       whatever the operation, so pass {@link UcpMemory#segment()}; it is then not counted as in use, and must not
 *       be closed before the operation completes. A {@code UcpMemory} form of each would double their number for
 *       that check alone.</li>
 *   <li>The scatter-gather forms ({@code MemorySegment[]}) return a token only: they serve bulk transfers that are
 *       polled in batches, and already allocate a descriptor array per call.</li>
 *   <li>The atomics on values ({@code fetchAdd64Async}, {@code compareAndSwap32Async}, {@code post64Async}...)
 *       are futures only: they own their operand and result buffers, which only a future can hand back; the same
 *       operations on caller-owned buffers ({@link #atomic}) have all three forms.</li>
 * </ul>
 * Tag receives, which need no endpoint, are on {@link UcpWorker} and follow the same rule.
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
        InetSocketAddress localAddress;
        boolean peerErrorHandling = true;
        Consumer<UcxException> errorHandler;
        String name;
        boolean sendClientId;
        boolean errorCallback = true;

        private Params(byte[] workerAddress, InetSocketAddress socketAddress, UcpConnectionRequest request) {
            this.workerAddress = workerAddress;
            this.socketAddress = socketAddress;
            this.connectionRequest = request;
        }

        /**
         * Connect to a worker by its address, checked here ({@link UcpWorkerAddress#FORMAT}): bytes that are
         * truncated, extended, corrupt or not a ucx-ffm worker address are refused before UCX sees them.
         *
         * @param address bytes from the peer's {@link UcpWorker#address()}
         * @return the parameters
         * @throws IllegalArgumentException if {@code address} is not a well-formed ucx-ffm worker address; the
         *                                  message says what is wrong
         */
        public static Params worker(byte[] address) {
            return new Params(UcpWorkerAddress.ucxAddress(address), null, null);
        }

        /**
         * Connect to a worker by UCX's own address bytes ({@code ucp_worker_get_address}, or
         * {@link UcpWorker#rawAddress()}), for interoperability with peers that use UCX but not ucx-ffm. Only the
         * length is checked: UCX's parser trusts the sizes written inside the bytes, and malformed ones can crash
         * the process. Pass only bytes from a trusted peer, received over a trusted channel; between ucx-ffm peers
         * use {@link #worker(byte[])}.
         *
         * @param ucxAddress UCX's worker address bytes, 1 to {@link UcpWorkerAddress#MAX_UCX_ADDRESS} of them
         * @return the parameters
         * @throws IllegalArgumentException if {@code ucxAddress} is null, empty or too long
         */
        public static Params rawWorker(byte[] ucxAddress) {
            return new Params(UcpWorkerAddress.checkRaw(ucxAddress), null, null);
        }

        /**
         * Connect to a listener by socket address (client-server mode).
         *
         * @param address the listener's address: IPv4 (see {@link UcpWorker#listen(InetSocketAddress)} on IPv6)
         * @return the parameters
         * @throws IllegalArgumentException for an IPv6 address
         */
        public static Params socket(InetSocketAddress address) {
            Objects.requireNonNull(address, "address");
            return new Params(null, SockAddr.requireIpv4(address, "server address"), null);
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
         * @throws IllegalArgumentException if {@link #errorCallback errorCallback(false)} was set
         */
        public Params onError(Consumer<UcxException> handler) {
            if (handler != null && !errorCallback) {
                throw new IllegalArgumentException("onError needs the error callback, off by errorCallback(false)");
            }
            this.errorHandler = handler;
            return this;
        }

        /**
         * Whether UCX gets an error callback for this endpoint (default {@code true}). Without one, as in
         * {@code ucx_perftest}, UCX has no way to tell Java that the endpoint failed or that the peer closed the
         * connection: the endpoint is marked failed only by an operation that fails with a peer failure, and
         * {@link #onError} cannot be used. In exchange nothing of this endpoint can call back into Java, which lets
         * the worker make its calls without the thread-state transition (see {@link UcpWorker}, "Critical calls").
         *
         * @param enabled {@code false} for no error callback
         * @return these parameters
         * @throws IllegalArgumentException if {@code false} and an {@link #onError} handler is set
         */
        public Params errorCallback(boolean enabled) {
            if (!enabled && errorHandler != null) {
                throw new IllegalArgumentException("onError needs the error callback, off by errorCallback(false)");
            }
            this.errorCallback = enabled;
            return this;
        }

        /**
         * The local address of a {@link #socket socket} connection's client ({@code UCP_EP_PARAM_FIELD_LOCAL_SOCK_ADDR}):
         * UCX binds the client's connection-manager socket to it before connecting, so the server sees this address
         * as the client's ({@link UcpConnectionRequest#clientAddress()}). Port 0 lets the system choose the port.
         * Without it the system chooses both. An address that cannot be bound (in use, not on this host) makes the
         * connection fail: {@link UcpWorker#connect(Params)} throws, or the endpoint fails as a refused connection
         * does, depending on the UCX release.
         *
         * @param address where the client's socket is bound: IPv4, as the server address
         * @return these parameters
         * @throws IllegalArgumentException for an IPv6 address
         * @throws IllegalStateException if these are not the parameters of a socket connection
         */
        public Params localAddress(InetSocketAddress address) {
            Objects.requireNonNull(address, "address");
            if (socketAddress == null) {
                throw new IllegalStateException("a local address applies only to a connection to a socket address");
            }
            this.localAddress = SockAddr.requireIpv4(address, "local address");
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
    /** Whether this endpoint counts among the worker's upcall sources (its error callback), until released. */
    private boolean upcallSource;
    private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;

    UcpEndpoint(UcpWorker worker, Params params) {
        super("UcpEndpoint", worker);
        this.worker = worker;
        this.errorHandler = params.errorHandler;
        this.peerErrorHandling = params.peerErrorHandling;
        MemorySegment created;
        // Any failure below leaves this half-built endpoint among the worker's children: close it (release() sees
        // no native handle and skips UCX), or the worker's close would trip over it.
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
                if (params.localAddress != null) {
                    mask |= UCP_EP_PARAM_FIELD_LOCAL_SOCK_ADDR();
                    MemorySegment la = SockAddr.of(params.localAddress, call);
                    MemorySegment local = ucp_ep_params.local_sockaddr(p);
                    ucs_sock_addr.addr(local, la);
                    ucs_sock_addr.addrlen(local, (int) la.byteSize());
                }
            } else {
                if (params.connectionRequest.listener().worker().context() != worker.context()) {
                    throw new IllegalArgumentException("a connection request can be accepted only by a worker of "
                            + "its listener's context");
                }
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
            if (params.errorCallback) {
                mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER();
                MemorySegment handler = ucp_ep_params.err_handler(p);
                ucp_err_handler.cb(handler, worker.upcalls.errorStub);
                worker.requests.addUpcallSource(); // before UCX can call it
                upcallSource = true;
            }
            if (params.name != null) {
                mask |= UCP_EP_PARAM_FIELD_NAME();
                ucp_ep_params.name(p, call.allocateFrom(params.name));
            }
            ucp_ep_params.field_mask(p, mask);
            MemorySegment epP = call.allocate(ADDRESS);
            byte status = ucp_ep_create(worker.handle(), p, epP);
            if (status != UCS_OK()) {
                throw UcxException.of("ucp_ep_create", status);
            }
            created = epP.get(ADDRESS, 0);
        } catch (RuntimeException | Error e) {
            super.close();
            throw e;
        }
        this.handle = created;
        worker.endpoints.put(handle.address(), this);
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

    /** The status UCX reported this endpoint failed with, or 0. */
    int failureCode() {
        return failure;
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
                    worker.upcalls.failed(t);
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
        long ep = handle().address();
        Buffers.checkRange(buffer, offset, length);
        long result = RawCalls.tagSend(worker.requests.quiet(), sync, ep, buffer.address() + offset, length, tag,
                worker.scratch.get().plainParam);
        return worker.requests.startedPolled(result, RequestTable.SEND, sync ? "ucp_tag_send_sync_nbx" : "ucp_tag_send_nbx",
                this, buffer, null);
    }

    /** The callback and future forms of a tag send. */
    private void send(MemorySegment buffer, long offset, long length, long tag, boolean sync, UcpCallback callback,
                      CompletableFuture<Long> future) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = worker.param();
        long reported = reported(future, length);
        int slot = worker.requests.reserveCompletion(RequestTable.SEND, sync ? "ucp_tag_send_sync_nbx" : "ucp_tag_send_nbx",
                this, buffer, null, null, callback, future, reported);
        worker.requests.callbackParams(param, 0, worker.upcalls.sendStub, slot);
        MemorySegment at = Buffers.at(buffer, offset);
        MemorySegment result = sync ? ucp_tag_send_sync_nbx(ep, at, length, tag, param)
                : ucp_tag_send_nbx(ep, at, length, tag, param);
        worker.requests.startedWithCallback(result, slot, reported, 0);
    }

    /**
     * What a send, put or get reports on completion: the length to a future, which promises it; 0 to a callback,
     * whose {@code length} is for receives ({@link UcpCallback}).
     */
    private static long reported(CompletableFuture<Long> future, long length) {
        return future != null ? length : 0;
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
        send(buffer, offset, length, tag, false, Objects.requireNonNull(callback, "callback"), null);
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
        return RequestTable.future((cb, f) -> send(buffer, offset, length, tag, false, cb, f));
    }

    /**
     * Sends a tagged message that completes only when the peer has matched it ({@code ucp_tag_send_sync_nbx});
     * {@code callback} runs on completion.
     *
     * @param buffer   the data; belongs to the operation until the callback runs
     * @param offset   start in {@code buffer}
     * @param length   bytes to send
     * @param tag      the message tag
     * @param callback called once on the progressing thread (or before this method returns)
     */
    public void sendTagSync(MemorySegment buffer, long offset, long length, long tag, UcpCallback callback) {
        send(buffer, offset, length, tag, true, Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Sends a tagged message that completes only when the peer has matched it ({@code ucp_tag_send_sync_nbx}),
     * completing a future (allocates; for control paths and simple code).
     *
     * @param buffer the data; belongs to the operation until the future completes
     * @param offset start in {@code buffer}
     * @param length bytes to send
     * @param tag    the message tag
     * @return a future of {@code length}, completed on the progressing thread
     */
    public CompletableFuture<Long> sendTagSyncAsync(MemorySegment buffer, long offset, long length, long tag) {
        return RequestTable.future((cb, f) -> send(buffer, offset, length, tag, true, cb, f));
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
        long ep = handle().address();
        Buffers.checkRange(buffer, offset, length);
        long result = RawCalls.streamSend(worker.requests.quiet(), ep, buffer.address() + offset, length,
                worker.scratch.get().plainParam);
        return worker.requests.startedPolled(result, RequestTable.SEND, "ucp_stream_send_nbx", this, buffer, null);
    }

    /**
     * Sends bytes on the endpoint's ordered stream ({@code ucp_stream_send_nbx}); {@code callback} runs on
     * completion.
     *
     * @param buffer   the data; belongs to the operation until the callback runs
     * @param offset   start in {@code buffer}
     * @param length   bytes to send
     * @param callback called once on the progressing thread (or before this method returns)
     */
    public void sendStream(MemorySegment buffer, long offset, long length, UcpCallback callback) {
        sendStream(buffer, offset, length, Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Sends bytes on the endpoint's ordered stream ({@code ucp_stream_send_nbx}), completing a future (allocates;
     * for control paths and simple code).
     *
     * @param buffer the data; belongs to the operation until the future completes
     * @param offset start in {@code buffer}
     * @param length bytes to send
     * @return a future of {@code length}, completed on the progressing thread
     */
    public CompletableFuture<Long> sendStreamAsync(MemorySegment buffer, long offset, long length) {
        return RequestTable.future((cb, f) -> sendStream(buffer, offset, length, cb, f));
    }

    private void sendStream(MemorySegment buffer, long offset, long length, UcpCallback callback,
                            CompletableFuture<Long> future) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = worker.param();
        long reported = reported(future, length);
        int slot = worker.requests.reserveCompletion(RequestTable.SEND, "ucp_stream_send_nbx", this, buffer, null, null,
                callback, future, reported);
        worker.requests.callbackParams(param, 0, worker.upcalls.sendStub, slot);
        worker.requests.startedWithCallback(ucp_stream_send_nbx(ep, Buffers.at(buffer, offset), length, param), slot,
                reported, 0);
    }

    /**
     * Receives bytes from the endpoint's stream ({@code ucp_stream_recv_nbx}). Without {@code waitAll} it completes
     * as soon as some bytes arrived; {@link UcpWorker#receivedLength()} tells how many.
     *
     * @param buffer  where to receive; belongs to the operation until it completes
     * @param offset  start in {@code buffer}
     * @param length  capacity in bytes
     * @param waitAll complete only when {@code length} bytes arrived ({@code UCP_STREAM_RECV_FLAG_WAITALL})
     * @return a request token; never {@link UcpWorker#COMPLETED}: {@link UcpWorker#poll(long)} hands over the
     *         received length even when the bytes had arrived and were taken at once
     */
    public long receiveStream(MemorySegment buffer, long offset, long length, boolean waitAll) {
        long ep = handle().address();
        Buffers.checkRange(buffer, offset, length);
        Scratch s = worker.scratch.get();
        long result = RawCalls.streamRecv(worker.requests.quiet(), ep, buffer.address() + offset, length,
                s.lengthAddress, waitAll ? s.streamRecvAllParam : s.streamRecvParam);
        if (result == 0) {
            return worker.requests.completedReceive("ucp_stream_recv_nbx", s.length.get(JAVA_LONG, 0), 0, 0);
        }
        return worker.requests.startedPolled(result, RequestTable.STREAM_RECV, "ucp_stream_recv_nbx", this, buffer, null);
    }

    /**
     * Receives bytes from the endpoint's stream ({@code ucp_stream_recv_nbx}); {@code callback} runs with the
     * received length.
     *
     * @param buffer   where to receive; belongs to the operation until the callback runs
     * @param offset   start in {@code buffer}
     * @param length   capacity in bytes
     * @param waitAll  complete only when {@code length} bytes arrived ({@code UCP_STREAM_RECV_FLAG_WAITALL})
     * @param callback called once on the progressing thread, or before this method returns when bytes had arrived
     */
    public void receiveStream(MemorySegment buffer, long offset, long length, boolean waitAll,
                              UcpCallback callback) {
        receiveStream(buffer, offset, length, waitAll, Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Receives bytes from the endpoint's stream ({@code ucp_stream_recv_nbx}), completing a future (allocates; for
     * control paths and simple code).
     *
     * @param buffer  where to receive; belongs to the operation until the future completes
     * @param offset  start in {@code buffer}
     * @param length  capacity in bytes
     * @param waitAll complete only when {@code length} bytes arrived ({@code UCP_STREAM_RECV_FLAG_WAITALL})
     * @return a future of the received length, completed on the progressing thread
     */
    public CompletableFuture<Long> receiveStreamAsync(MemorySegment buffer, long offset, long length,
                                                      boolean waitAll) {
        return RequestTable.future((cb, f) -> receiveStream(buffer, offset, length, waitAll, cb, f));
    }

    private void receiveStream(MemorySegment buffer, long offset, long length, boolean waitAll,
                               UcpCallback callback, CompletableFuture<Long> future) {
        MemorySegment ep = handle();
        Buffers.checkRange(buffer, offset, length);
        Scratch s = worker.scratch.get();
        MemorySegment param = s.clearedParam();
        int slot = worker.requests.reserveCompletion(RequestTable.STREAM_RECV, "ucp_stream_recv_nbx", this, buffer, null,
                null, callback, future, 0);
        worker.requests.callbackParams(param, UCP_OP_ATTR_FIELD_FLAGS(), worker.upcalls.streamRecvStub, slot);
        ucp_request_param_t.flags(param, waitAll ? UCP_STREAM_RECV_FLAG_WAITALL() : 0);
        MemorySegment result = ucp_stream_recv_nbx(ep, Buffers.at(buffer, offset), length, s.length, param);
        // done at once: the length is in s.length, and no upcall comes
        worker.requests.startedWithCallback(result, slot, result.address() == 0 ? s.length.get(JAVA_LONG, 0) : 0, 0);
    }

    // ---- RMA and atomics ----------------------------------------------------------------------------------------
    //
    // Put, get and atomics on a peer's registered memory through a remote key unpacked on this endpoint. Every
    // operation is checked here before UCX sees it: the context features, the key (open, unpacked on this endpoint),
    // the remote range against the region packed with the key, the local range, and for atomics the operand size and
    // the remote alignment. Completion is local: a put may be reused once it completes, but its data is visible at the
    // peer only after a flush of the endpoint or the worker.

    private static final long DATATYPE_32 = UcpInline.ucp_dt_make_contig(4);
    private static final long DATATYPE_64 = UcpInline.ucp_dt_make_contig(8);

    /** Refuses an operation the context was not created for; UCX would fail it late or not at all. */
    private void requireFeature(UcpContext.Feature feature, String what) {
        if (!worker.context().has(feature)) {
            throw new IllegalStateException(what + " needs UcpContext.Feature." + feature.name() + ", which the "
                    + "endpoint's context was not created with");
        }
    }

    /** The native key, after checking that it is open and was unpacked on this endpoint. */
    private MemorySegment remoteKey(UcpRemoteKey rkey) {
        Objects.requireNonNull(rkey, "rkey");
        if (rkey.endpoint() != this) {
            throw new IllegalArgumentException(rkey + " was unpacked on another endpoint; a key works only on the "
                    + "endpoint it was unpacked on");
        }
        return rkey.handle();
    }

    /**
     * Put or get: checks everything, then starts polled ({@code callback} and {@code future} null) or with a
     * callback or future.
     */
    private long rma(boolean put, MemorySegment buffer, UcpMemory memory, long offset, long length,
                     long remoteAddress, UcpRemoteKey rkey, UcpCallback callback, CompletableFuture<Long> future) {
        MemorySegment ep = handle();
        String op = put ? "ucp_put_nbx" : "ucp_get_nbx";
        requireFeature(UcpContext.Feature.RMA, op);
        MemorySegment rk = remoteKey(rkey);
        rkey.checkRemote(remoteAddress, length);
        MemorySegment local = memory != null ? memory.segment() : Objects.requireNonNull(buffer, "buffer");
        Buffers.checkRange(local, offset, length);
        if (memory != null) {
            memory.beginUse(); // ended by the request table when the operation completes, now or later
        }
        if (callback == null && future == null) {
            long result;
            try {
                result = RawCalls.rma(worker.requests.quiet(), put, ep.address(), local.address() + offset, length,
                        remoteAddress, rk.address(), worker.scratch.get().plainParam);
            } catch (RuntimeException e) {
                if (memory != null) {
                    memory.endUse();
                }
                throw e;
            }
            return worker.requests.startedPolled(result, RequestTable.OTHER, op, this, local, rkey, memory);
        }
        MemorySegment param = worker.param();
        long reported = reported(future, length);
        int slot;
        try {
            slot = worker.requests.reserveCompletion(RequestTable.OTHER, op, this, local, rkey, memory, callback, future,
                    reported);
        } catch (RuntimeException | Error e) {
            if (memory != null) {
                memory.endUse();
            }
            throw e;
        }
        worker.requests.callbackParams(param, 0, worker.upcalls.sendStub, slot);
        MemorySegment at = Buffers.at(local, offset);
        MemorySegment result = put ? ucp_put_nbx(ep, at, length, remoteAddress, rk, param)
                : ucp_get_nbx(ep, at, length, remoteAddress, rk, param);
        worker.requests.startedWithCallback(result, slot, reported, 0);
        return UcpWorker.COMPLETED;
    }

    /**
     * Writes local bytes into the peer's registered memory ({@code ucp_put_nbx}). Completion means the source may be
     * reused; the data is visible at the peer after a flush.
     *
     * @param src           the data; belongs to the operation until it completes
     * @param offset        start in {@code src}
     * @param length        bytes to write
     * @param remoteAddress where to write in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a request token for {@link UcpWorker#poll(long)}
     * @throws IndexOutOfBoundsException if the remote range is outside the region packed with the key, or the local
     *                                   range outside {@code src} (nothing is started)
     * @throws IllegalArgumentException  if the key was unpacked on another endpoint
     * @throws IllegalStateException     if the key or the endpoint is closed, the thread is not allowed, or the
     *                                   context lacks {@link UcpContext.Feature#RMA}
     */
    public long put(MemorySegment src, long offset, long length, long remoteAddress, UcpRemoteKey rkey) {
        return rma(true, src, null, offset, length, remoteAddress, rkey, null, null);
    }

    /**
     * Writes from registered memory into the peer's registered memory ({@code ucp_put_nbx}). While the operation is
     * in flight, {@code src} cannot be unmapped: its {@link UcpMemory#close()} throws {@link IllegalStateException}.
     *
     * @param src           the local registered memory; belongs to the operation until it completes
     * @param offset        start in {@code src}
     * @param length        bytes to write
     * @param remoteAddress where to write in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a request token for {@link UcpWorker#poll(long)}
     * @throws IndexOutOfBoundsException if either range is outside its region (nothing is started)
     * @throws IllegalStateException     if {@code src}, the key or the endpoint is closed, or the context lacks
     *                                   {@link UcpContext.Feature#RMA}
     */
    public long put(UcpMemory src, long offset, long length, long remoteAddress, UcpRemoteKey rkey) {
        return rma(true, null, Objects.requireNonNull(src, "src"), offset, length, remoteAddress, rkey, null, null);
    }

    /**
     * Writes local bytes into the peer's memory; {@code callback} runs on completion.
     *
     * @param src           the data; belongs to the operation until the callback runs
     * @param offset        start in {@code src}
     * @param length        bytes to write
     * @param remoteAddress where to write in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @param callback      called once on the progressing thread (or before this method returns), with length 0
     */
    public void put(MemorySegment src, long offset, long length, long remoteAddress, UcpRemoteKey rkey,
                    UcpCallback callback) {
        rma(true, src, null, offset, length, remoteAddress, rkey, Objects.requireNonNull(callback, "callback"),
                null);
    }

    /**
     * Writes from registered memory into the peer's memory; {@code callback} runs on completion. {@code src} cannot
     * be unmapped until then.
     *
     * @param src           the local registered memory; belongs to the operation until the callback runs
     * @param offset        start in {@code src}
     * @param length        bytes to write
     * @param remoteAddress where to write in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @param callback      called once on the progressing thread (or before this method returns), with length 0
     */
    public void put(UcpMemory src, long offset, long length, long remoteAddress, UcpRemoteKey rkey,
                    UcpCallback callback) {
        rma(true, null, Objects.requireNonNull(src, "src"), offset, length, remoteAddress, rkey,
                Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Writes local bytes into the peer's memory, completing a future (allocates; for control paths and simple code).
     *
     * @param src           the data; belongs to the operation until the future completes
     * @param offset        start in {@code src}
     * @param length        bytes to write
     * @param remoteAddress where to write in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of {@code length}, completed on the progressing thread
     */
    public CompletableFuture<Long> putAsync(MemorySegment src, long offset, long length, long remoteAddress,
                                            UcpRemoteKey rkey) {
        return RequestTable.future((cb, f) -> rma(true, src, null, offset, length, remoteAddress, rkey, cb, f));
    }

    /**
     * Writes from registered memory into the peer's memory, completing a future. {@code src} cannot be unmapped
     * until then.
     *
     * @param src           the local registered memory; belongs to the operation until the future completes
     * @param offset        start in {@code src}
     * @param length        bytes to write
     * @param remoteAddress where to write in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of {@code length}, completed on the progressing thread
     */
    public CompletableFuture<Long> putAsync(UcpMemory src, long offset, long length, long remoteAddress,
                                            UcpRemoteKey rkey) {
        Objects.requireNonNull(src, "src");
        return RequestTable.future((cb, f) -> rma(true, null, src, offset, length, remoteAddress, rkey, cb, f));
    }

    /**
     * Reads the peer's registered memory into local memory ({@code ucp_get_nbx}). The bytes are in {@code dst}
     * when the operation completes.
     *
     * @param dst           where to read into; belongs to the operation until it completes
     * @param offset        start in {@code dst}
     * @param length        bytes to read
     * @param remoteAddress where to read in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a request token for {@link UcpWorker#poll(long)}
     * @throws IndexOutOfBoundsException if the remote range is outside the region packed with the key, or the local
     *                                   range outside {@code dst} (nothing is started)
     * @throws IllegalArgumentException  if the key was unpacked on another endpoint
     * @throws IllegalStateException     if the key or the endpoint is closed, the thread is not allowed, or the
     *                                   context lacks {@link UcpContext.Feature#RMA}
     */
    public long get(MemorySegment dst, long offset, long length, long remoteAddress, UcpRemoteKey rkey) {
        return rma(false, dst, null, offset, length, remoteAddress, rkey, null, null);
    }

    /**
     * Reads the peer's registered memory into local registered memory ({@code ucp_get_nbx}). While the operation is
     * in flight, {@code dst} cannot be unmapped.
     *
     * @param dst           the local registered memory; belongs to the operation until it completes
     * @param offset        start in {@code dst}
     * @param length        bytes to read
     * @param remoteAddress where to read in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a request token for {@link UcpWorker#poll(long)}
     * @throws IndexOutOfBoundsException if either range is outside its region (nothing is started)
     * @throws IllegalStateException     if {@code dst}, the key or the endpoint is closed, or the context lacks
     *                                   {@link UcpContext.Feature#RMA}
     */
    public long get(UcpMemory dst, long offset, long length, long remoteAddress, UcpRemoteKey rkey) {
        return rma(false, null, Objects.requireNonNull(dst, "dst"), offset, length, remoteAddress, rkey, null, null);
    }

    /**
     * Reads the peer's memory into local memory; {@code callback} runs on completion.
     *
     * @param dst           where to read into; belongs to the operation until the callback runs
     * @param offset        start in {@code dst}
     * @param length        bytes to read
     * @param remoteAddress where to read in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @param callback      called once on the progressing thread (or before this method returns), with length 0
     */
    public void get(MemorySegment dst, long offset, long length, long remoteAddress, UcpRemoteKey rkey,
                    UcpCallback callback) {
        rma(false, dst, null, offset, length, remoteAddress, rkey, Objects.requireNonNull(callback, "callback"),
                null);
    }

    /**
     * Reads the peer's memory into local registered memory; {@code callback} runs on completion. {@code dst} cannot
     * be unmapped until then.
     *
     * @param dst           the local registered memory; belongs to the operation until the callback runs
     * @param offset        start in {@code dst}
     * @param length        bytes to read
     * @param remoteAddress where to read in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @param callback      called once on the progressing thread (or before this method returns), with length 0
     */
    public void get(UcpMemory dst, long offset, long length, long remoteAddress, UcpRemoteKey rkey,
                    UcpCallback callback) {
        rma(false, null, Objects.requireNonNull(dst, "dst"), offset, length, remoteAddress, rkey,
                Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Reads the peer's memory into local memory, completing a future (allocates; for control paths and simple code).
     *
     * @param dst           where to read into; belongs to the operation until the future completes
     * @param offset        start in {@code dst}
     * @param length        bytes to read
     * @param remoteAddress where to read in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of {@code length}, completed on the progressing thread once the bytes are in {@code dst}
     */
    public CompletableFuture<Long> getAsync(MemorySegment dst, long offset, long length, long remoteAddress,
                                            UcpRemoteKey rkey) {
        return RequestTable.future((cb, f) -> rma(false, dst, null, offset, length, remoteAddress, rkey, cb, f));
    }

    /**
     * Reads the peer's memory into local registered memory, completing a future. {@code dst} cannot be unmapped
     * until then.
     *
     * @param dst           the local registered memory; belongs to the operation until the future completes
     * @param offset        start in {@code dst}
     * @param length        bytes to read
     * @param remoteAddress where to read in the peer's region
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of {@code length}, completed on the progressing thread once the bytes are in {@code dst}
     */
    public CompletableFuture<Long> getAsync(UcpMemory dst, long offset, long length, long remoteAddress,
                                            UcpRemoteKey rkey) {
        Objects.requireNonNull(dst, "dst");
        return RequestTable.future((cb, f) -> rma(false, null, dst, offset, length, remoteAddress, rkey, cb, f));
    }

    /** The checks of an atomic that do not depend on the buffers; gives the native key. */
    private MemorySegment checkAtomic(UcpAtomicOp op, long size, boolean fetching, long remoteAddress,
                                      UcpRemoteKey rkey) {
        Objects.requireNonNull(op, "op");
        if (size != 4 && size != 8) {
            throw new IllegalArgumentException("an atomic operand is 4 or 8 bytes, not " + size);
        }
        UcpContext.Feature feature = size == 4 ? UcpContext.Feature.AMO32 : UcpContext.Feature.AMO64;
        if (!worker.context().has(feature)) { // the message is built only on failure: this is a hot path
            requireFeature(feature, "a " + size * 8 + "-bit atomic " + op);
        }
        if (op.needsResult && !fetching) {
            throw new IllegalArgumentException(op + " needs a result buffer: it always returns the old value");
        }
        MemorySegment rk = remoteKey(rkey);
        if ((remoteAddress & (size - 1)) != 0) {
            throw new IllegalArgumentException("remote address 0x" + Long.toHexString(remoteAddress) + " is not "
                    + "aligned to the " + size + "-byte operand");
        }
        rkey.checkRemote(remoteAddress, size);
        return rk;
    }

    /** The checks of an atomic's caller-owned buffers. */
    private static void checkAtomicBuffers(MemorySegment operand, MemorySegment result) {
        Objects.requireNonNull(operand, "operand");
        if (!operand.isNative()) {
            throw new IllegalArgumentException("the operand must be native memory (allocate it from an Arena)");
        }
        long size = operand.byteSize();
        if (size != 4 && size != 8) {
            throw new IllegalArgumentException("an atomic operand is 4 or 8 bytes, not " + size
                    + " (slice the segment to the operand)");
        }
        if (result != null) {
            if (!result.isNative()) {
                throw new IllegalArgumentException("the result must be native memory (allocate it from an Arena)");
            }
            if (result.byteSize() != size) {
                throw new IllegalArgumentException("the result is " + result.byteSize() + " bytes; it must have the "
                        + "operand's size, " + size);
            }
            if (operand.asOverlappingSlice(result).isPresent()) {
                throw new IllegalArgumentException("operand and result overlap");
            }
        }
    }

    /** Starts a checked atomic, polled ({@code callback == null}) or with a callback. */
    private long startAtomic(MemorySegment ep, MemorySegment rk, UcpAtomicOp op, MemorySegment operand,
                             MemorySegment result, long remoteAddress, UcpCallback callback,
                             CompletableFuture<Long> future) {
        MemorySegment param = worker.param();
        int mask = UCP_OP_ATTR_FIELD_DATATYPE() | (result != null ? UCP_OP_ATTR_FIELD_REPLY_BUFFER() : 0);
        if (callback == null && future == null) {
            ucp_request_param_t.op_attr_mask(param, mask);
            ucp_request_param_t.datatype(param, operand.byteSize() == 4 ? DATATYPE_32 : DATATYPE_64);
            if (result != null) {
                ucp_request_param_t.reply_buffer(param, result);
            }
            long status = RawCalls.atomic(worker.requests.quiet(), ep.address(), op.code, operand.address(), 1,
                    remoteAddress, rk.address(), param.address());
            return worker.requests.startedPolled(status, RequestTable.OTHER, "ucp_atomic_op_nbx", this, operand, result);
        }
        // a future completes with 0 here; the old value is read by a stage on it (see atomicAsync)
        int slot = worker.requests.reserveCompletion(RequestTable.OTHER, "ucp_atomic_op_nbx", this, operand, result, null,
                callback, future, 0);
        worker.requests.callbackParams(param, mask, worker.upcalls.sendStub, slot);
        ucp_request_param_t.datatype(param, operand.byteSize() == 4 ? DATATYPE_32 : DATATYPE_64);
        if (result != null) {
            ucp_request_param_t.reply_buffer(param, result);
        }
        MemorySegment status = ucp_atomic_op_nbx(ep, op.code, operand, 1, remoteAddress, rk, param);
        worker.requests.startedWithCallback(status, slot, 0, 0);
        return UcpWorker.COMPLETED;
    }

    private long atomicChecked(UcpAtomicOp op, MemorySegment operand, MemorySegment result, long remoteAddress,
                               UcpRemoteKey rkey, UcpCallback callback, CompletableFuture<Long> future) {
        MemorySegment ep = handle();
        checkAtomicBuffers(operand, result);
        MemorySegment rk = checkAtomic(op, operand.byteSize(), result != null, remoteAddress, rkey);
        return startAtomic(ep, rk, op, operand, result, remoteAddress, callback, future);
    }

    /**
     * Performs an atomic operation on a 4- or 8-byte word of the peer's registered memory
     * ({@code ucp_atomic_op_nbx}, {@code count} 1, datatype {@code ucp_dt_make_contig(operand.byteSize())}).
     * <p>
     * {@code operand} is {@code X} of {@link UcpAtomicOp}: the value to add, swap in, and, or, xor, or for
     * {@link UcpAtomicOp#CSWAP} the expected value. With a {@code result} buffer the operation is fetching: the old
     * remote value is stored there on completion. For CSWAP, {@code result} holds the value to store on input and
     * receives the old value on output ({@code param.reply_buffer} as UCX defines it); the swap happened if and only
     * if the old value equals the operand. SWAP and CSWAP need {@code result}; the others may pass {@code null}
     * ("post" operations). Completion of a post operation is local; the update is visible at the peer after a flush.
     * <p>
     * Known UCX defect (measured with Debian's libucx 1.13.1): wherever UCX performs the atomic with its
     * shared-memory device code ({@code uct_sm_ep_atomic32_fetch}/{@code uct_sm_ep_atomic64_fetch}, shared by the
     * {@code self}, {@code posix} and {@code sysv} transports), fetching AND, OR and XOR return the right old value
     * but store {@code old OP old} instead of {@code old OP operand} (AND and OR leave the word unchanged, XOR zeroes
     * it), for 32 and 64 bits: the compiled code ignores the operand. That is the case over {@code self} (an endpoint
     * to its own worker) and, between processes over posix/sysv, when the target region was allocated by UCX
     * ({@link UcpContext#allocate(long)}). Posted AND, OR and XOR, all other operations, every operation on
     * registered application memory over shared memory (UCP's software atomics), and everything over tcp are exact.
     * This layer cannot correct it; avoid fetching logic operations in those cases with that release.
     *
     * @param op            the operation
     * @param operand       4 or 8 bytes of native memory, exactly; its size selects 32- or 64-bit. Belongs to the
     *                      operation until it completes
     * @param result        {@code null}, or native memory of the operand's size, not overlapping it; belongs to the
     *                      operation until it completes
     * @param remoteAddress the remote word, aligned to the operand size, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a request token for {@link UcpWorker#poll(long)}
     * @throws IllegalArgumentException  if a buffer has the wrong size or kind, the buffers overlap, SWAP or CSWAP
     *                                   has no result buffer, the remote address is misaligned, or the key was
     *                                   unpacked on another endpoint
     * @throws IndexOutOfBoundsException if the remote word is outside the region packed with the key
     * @throws IllegalStateException     if the key or endpoint is closed, the thread is not allowed, or the context
     *                                   lacks {@link UcpContext.Feature#AMO32} (4-byte operands) or
     *                                   {@link UcpContext.Feature#AMO64} (8-byte operands)
     */
    public long atomic(UcpAtomicOp op, MemorySegment operand, MemorySegment result, long remoteAddress,
                       UcpRemoteKey rkey) {
        return atomicChecked(op, operand, result, remoteAddress, rkey, null, null);
    }

    /**
     * Performs an atomic operation, as {@link #atomic(UcpAtomicOp, MemorySegment, MemorySegment, long, UcpRemoteKey)};
     * {@code callback} runs on completion, when {@code result} holds the old value.
     *
     * @param op            the operation
     * @param operand       4 or 8 bytes of native memory; belongs to the operation until the callback runs
     * @param result        {@code null}, or native memory of the operand's size; belongs to the operation until the
     *                      callback runs
     * @param remoteAddress the remote word, aligned to the operand size
     * @param rkey          the peer's key, unpacked on this endpoint
     * @param callback      called once on the progressing thread (or before this method returns)
     */
    public void atomic(UcpAtomicOp op, MemorySegment operand, MemorySegment result, long remoteAddress,
                       UcpRemoteKey rkey, UcpCallback callback) {
        atomicChecked(op, operand, result, remoteAddress, rkey, Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Performs an atomic operation, as {@link #atomic(UcpAtomicOp, MemorySegment, MemorySegment, long, UcpRemoteKey)},
     * completing a future (allocates).
     *
     * @param op            the operation
     * @param operand       4 or 8 bytes of native memory; belongs to the operation until the future completes
     * @param result        {@code null}, or native memory of the operand's size; belongs to the operation until the
     *                      future completes
     * @param remoteAddress the remote word, aligned to the operand size
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of the old remote value read from {@code result} at completion (sign-extended from a 4-byte
     *         operand), or of {@code 0} without a result buffer; completed on the progressing thread
     */
    public CompletableFuture<Long> atomicAsync(UcpAtomicOp op, MemorySegment operand, MemorySegment result,
                                               long remoteAddress, UcpRemoteKey rkey) {
        return RequestTable.future((cb, f) -> atomicChecked(op, operand, result, remoteAddress, rkey, cb, f))
                .thenApply(ignored -> oldValue(result));
    }

    /** What an atomic's result buffer holds after completion, sign-extended; 0 without one. */
    private static long oldValue(MemorySegment result) {
        return result == null ? 0L : result.byteSize() == 4 ? (long) result.get(JAVA_INT, 0)
                : result.get(JAVA_LONG, 0);
    }

    /**
     * An atomic on a value rather than on caller-owned buffers: owns a 16-byte native buffer (operand and result)
     * from an arena of its own, closed when the operation completes, and never earlier.
     */
    private static final class ValueAtomic {
        final Arena arena;
        final MemorySegment operand;
        final MemorySegment result;
        private boolean released;

        ValueAtomic(Arena arena, int size, boolean fetching) {
            this.arena = arena;
            MemorySegment buffer = arena.allocate(16, 8);
            this.operand = buffer.asSlice(0, size);
            this.result = fetching ? buffer.asSlice(8, size) : null;
        }

        static void write(MemorySegment s, long value) {
            if (s.byteSize() == 4) {
                s.set(JAVA_INT, 0, (int) value);
            } else {
                s.set(JAVA_LONG, 0, value);
            }
        }

        void release() {
            if (!released) {
                released = true;
                arena.close();
            }
        }
    }

    private CompletableFuture<Long> valueAtomic(UcpAtomicOp op, int size, long value, long swap, boolean fetching,
                                                long remoteAddress, UcpRemoteKey rkey) {
        MemorySegment ep = handle();
        MemorySegment rk = checkAtomic(op, size, fetching, remoteAddress, rkey);
        // A SINGLE worker completes only on its owner thread, which is this one: a confined arena is enough.
        Arena arena = worker.threadMode() == UcsThreadMode.SINGLE ? Arena.ofConfined() : Arena.ofShared();
        ValueAtomic v;
        try {
            v = new ValueAtomic(arena, size, fetching);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
        ValueAtomic.write(v.operand, value);
        if (op == UcpAtomicOp.CSWAP) {
            ValueAtomic.write(v.result, swap);
        }
        CompletableFuture<Long> future;
        try {
            future = RequestTable.future((cb, f) -> startAtomic(ep, rk, op, v.operand, v.result, remoteAddress, cb,
                    f));
        } catch (RuntimeException | Error e) {
            v.release(); // the operation never started
            throw e;
        }
        // Read the old value, then free the buffers, whether the operation succeeded or not; the value is read on
        // the completing thread (the owner, for a SINGLE worker's confined arena).
        return future.thenApply(ignored -> oldValue(v.result)).whenComplete((ignored, failure) -> v.release());
    }

    private static CompletableFuture<Integer> narrow(CompletableFuture<Long> f) {
        return f.thenApply(Long::intValue);
    }

    /**
     * Atomically adds to a 64-bit remote word and returns the old value (fetching {@link UcpAtomicOp#ADD}). Needs no
     * buffers: a small native buffer is allocated and freed when the operation completes.
     *
     * @param delta         the value to add
     * @param remoteAddress the remote word, 8-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of the value before the addition, completed on the progressing thread
     */
    public CompletableFuture<Long> fetchAdd64Async(long delta, long remoteAddress, UcpRemoteKey rkey) {
        return valueAtomic(UcpAtomicOp.ADD, 8, delta, 0, true, remoteAddress, rkey);
    }

    /**
     * Atomically adds to a 32-bit remote word and returns the old value (fetching {@link UcpAtomicOp#ADD}).
     *
     * @param delta         the value to add
     * @param remoteAddress the remote word, 4-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of the value before the addition, completed on the progressing thread
     */
    public CompletableFuture<Integer> fetchAdd32Async(int delta, long remoteAddress, UcpRemoteKey rkey) {
        return narrow(valueAtomic(UcpAtomicOp.ADD, 4, delta, 0, true, remoteAddress, rkey));
    }

    /**
     * Performs a fetching 64-bit atomic on a value: ADD, SWAP, AND, OR or XOR (CSWAP takes two values: use
     * {@link #compareAndSwap64Async}).
     *
     * @param op            the operation, not CSWAP
     * @param value         the operand
     * @param remoteAddress the remote word, 8-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of the old remote value, completed on the progressing thread
     */
    public CompletableFuture<Long> fetch64Async(UcpAtomicOp op, long value, long remoteAddress, UcpRemoteKey rkey) {
        refuseCswap(op);
        return valueAtomic(op, 8, value, 0, true, remoteAddress, rkey);
    }

    /**
     * Performs a fetching 32-bit atomic on a value: ADD, SWAP, AND, OR or XOR.
     *
     * @param op            the operation, not CSWAP
     * @param value         the operand
     * @param remoteAddress the remote word, 4-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of the old remote value, completed on the progressing thread
     */
    public CompletableFuture<Integer> fetch32Async(UcpAtomicOp op, int value, long remoteAddress, UcpRemoteKey rkey) {
        refuseCswap(op);
        return narrow(valueAtomic(op, 4, value, 0, true, remoteAddress, rkey));
    }

    private static void refuseCswap(UcpAtomicOp op) {
        if (op == UcpAtomicOp.CSWAP) {
            throw new IllegalArgumentException("CSWAP takes an expected and a new value: use compareAndSwap");
        }
    }

    /**
     * Atomically replaces a 64-bit remote word by {@code desired} if it equals {@code expected}
     * ({@link UcpAtomicOp#CSWAP}).
     *
     * @param expected      the value the word must hold for the swap to happen
     * @param desired       the value to store
     * @param remoteAddress the remote word, 8-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of the old remote value: the swap happened if and only if it equals {@code expected}
     */
    public CompletableFuture<Long> compareAndSwap64Async(long expected, long desired, long remoteAddress,
                                                         UcpRemoteKey rkey) {
        return valueAtomic(UcpAtomicOp.CSWAP, 8, expected, desired, true, remoteAddress, rkey);
    }

    /**
     * Atomically replaces a 32-bit remote word by {@code desired} if it equals {@code expected}
     * ({@link UcpAtomicOp#CSWAP}).
     *
     * @param expected      the value the word must hold for the swap to happen
     * @param desired       the value to store
     * @param remoteAddress the remote word, 4-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future of the old remote value: the swap happened if and only if it equals {@code expected}
     */
    public CompletableFuture<Integer> compareAndSwap32Async(int expected, int desired, long remoteAddress,
                                                            UcpRemoteKey rkey) {
        return narrow(valueAtomic(UcpAtomicOp.CSWAP, 4, expected, desired, true, remoteAddress, rkey));
    }

    /**
     * Posts a non-fetching 64-bit atomic on a value: ADD, AND, OR or XOR. Completion is local; the update is visible
     * at the peer after a flush.
     *
     * @param op            the operation: ADD, AND, OR or XOR
     * @param value         the operand
     * @param remoteAddress the remote word, 8-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future completed (with {@code null}) on the progressing thread
     */
    public CompletableFuture<Void> post64Async(UcpAtomicOp op, long value, long remoteAddress, UcpRemoteKey rkey) {
        return valueAtomic(op, 8, value, 0, false, remoteAddress, rkey).thenAccept(ignored -> { });
    }

    /**
     * Posts a non-fetching 32-bit atomic on a value: ADD, AND, OR or XOR. Completion is local; the update is visible
     * at the peer after a flush.
     *
     * @param op            the operation: ADD, AND, OR or XOR
     * @param value         the operand
     * @param remoteAddress the remote word, 4-byte aligned, inside the region packed with the key
     * @param rkey          the peer's key, unpacked on this endpoint
     * @return a future completed (with {@code null}) on the progressing thread
     */
    public CompletableFuture<Void> post32Async(UcpAtomicOp op, int value, long remoteAddress, UcpRemoteKey rkey) {
        return valueAtomic(op, 4, value, 0, false, remoteAddress, rkey).thenAccept(ignored -> { });
    }

    // ---- active messages ----------------------------------------------------------------------------------------

    /** Wraps an endpoint UCX made for a peer (an active-message reply endpoint): closing it leaves UCX's alone. */
    private boolean borrowed;

    /**
     * A borrowed view of an endpoint UCX created when a peer connected to {@code worker}; not registered, never
     * closed natively. See {@link UcpAmMessage#replyEndpoint()}.
     */
    UcpEndpoint(UcpWorker worker, MemorySegment existing) {
        super("UcpEndpoint", worker);
        this.worker = worker;
        this.handle = existing;
        this.errorHandler = null;
        this.peerErrorHandling = false;
        this.borrowed = true;
    }

    /** Checks everything an active-message send needs; returns the endpoint handle. */
    private MemorySegment amSendChecks(int id, MemorySegment header, MemorySegment data, long offset, long length,
                                       int flags) {
        MemorySegment ep = handle();
        worker.requireAm();
        AmDispatcher.checkId(id);
        UcpAmSendFlags.check(flags);
        if (header != null && header.byteSize() != 0) {
            Buffers.checkRange(header, 0, header.byteSize());
            if (header.byteSize() > worker.maxAmHeaderLength()) {
                throw new IllegalArgumentException("active-message header of " + header.byteSize()
                        + " bytes exceeds this worker's maximum of " + worker.maxAmHeaderLength());
            }
        }
        Objects.requireNonNull(data, "data");
        Buffers.checkRange(data, offset, length);
        return ep;
    }

    private static MemorySegment headerAddress(MemorySegment header) {
        return header == null || header.byteSize() == 0 ? MemorySegment.NULL : header;
    }

    private static long headerLength(MemorySegment header) {
        return header == null ? 0 : header.byteSize();
    }

    /** The callback and future forms of an active-message send. */
    private void sendAm(int id, MemorySegment header, MemorySegment data, long offset, long length, int flags,
                        UcpCallback callback, CompletableFuture<Long> future) {
        MemorySegment ep = amSendChecks(id, header, data, offset, length, flags);
        MemorySegment param = worker.param();
        long reported = reported(future, length);
        int slot = worker.requests.reserveCompletion(RequestTable.SEND, "ucp_am_send_nbx", this, data, header, null,
                callback, future, reported);
        worker.requests.callbackParams(param, UCP_OP_ATTR_FIELD_FLAGS(), worker.upcalls.sendStub, slot);
        ucp_request_param_t.flags(param, flags);
        worker.requests.startedWithCallback(ucp_am_send_nbx(ep, id, headerAddress(header), headerLength(header),
                Buffers.at(data, offset), length, param), slot, reported, 0);
    }

    /**
     * Sends an active message ({@code ucp_am_send_nbx}): the peer worker's handler for {@code id} runs with the
     * header and the data. Completion means the header and data may be reused, not that the handler ran; a
     * rendezvous send completes only when the receiver fetched or dropped the data, which takes progress on both
     * workers.
     *
     * @param id     the active-message id, 0 to 65535
     * @param header the user header, delivered whole with the message; {@code null} or empty for none; at most
     *               {@link UcpWorker#maxAmHeaderLength()} bytes; belongs to the operation until it completes
     * @param data   the data; belongs to the operation until it completes
     * @param offset start in {@code data}
     * @param length bytes to send (may be {@code 0})
     * @param flags  {@link UcpAmSendFlags} combined with {@code |}
     * @return a request token for {@link UcpWorker#poll(long)}
     * @throws IllegalStateException if the context lacks {@link UcpContext.Feature#AM}
     */
    public long sendAm(int id, MemorySegment header, MemorySegment data, long offset, long length, int flags) {
        MemorySegment ep = amSendChecks(id, header, data, offset, length, flags);
        MemorySegment param = worker.scratch.get().amSendParam;
        ucp_request_param_t.flags(param, flags);
        long result = RawCalls.amSend(worker.requests.quiet(), ep.address(), id, headerAddress(header).address(),
                headerLength(header), data.address() + offset, length, param.address());
        return worker.requests.startedPolled(result, RequestTable.SEND, "ucp_am_send_nbx", this, data, header);
    }

    /**
     * Sends an active message; {@code callback} runs on completion.
     *
     * @param id       the active-message id, 0 to 65535
     * @param header   the user header; {@code null} or empty for none; belongs to the operation until the callback
     *                 runs
     * @param data     the data; belongs to the operation until the callback runs
     * @param offset   start in {@code data}
     * @param length   bytes to send
     * @param flags    {@link UcpAmSendFlags} combined with {@code |}
     * @param callback called once on the progressing thread (or before this method returns)
     * @throws IllegalStateException if the context lacks {@link UcpContext.Feature#AM}
     */
    public void sendAm(int id, MemorySegment header, MemorySegment data, long offset, long length, int flags,
                       UcpCallback callback) {
        sendAm(id, header, data, offset, length, flags, Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Sends an active message, completing a future (allocates; for control paths and simple code).
     *
     * @param id     the active-message id, 0 to 65535
     * @param header the user header; {@code null} or empty for none; belongs to the operation until the future
     *               completes
     * @param data   the data; belongs to the operation until the future completes
     * @param offset start in {@code data}
     * @param length bytes to send
     * @param flags  {@link UcpAmSendFlags} combined with {@code |}
     * @return a future of the data length, completed on the progressing thread
     * @throws IllegalStateException if the context lacks {@link UcpContext.Feature#AM}
     */
    public CompletableFuture<Long> sendAmAsync(int id, MemorySegment header, MemorySegment data, long offset,
                                               long length, int flags) {
        return RequestTable.future((cb, f) -> sendAm(id, header, data, offset, length, flags, cb, f));
    }

    /**
     * Sends an active message whose data is gathered from several segments ({@code ucp_am_send_nbx} with the
     * {@code ucp_dt_make_iov()} datatype). The receiver sees one message of the segments' total length. Allocates a
     * small native descriptor array for the operation.
     *
     * @param id     the handler id at the receiver, 0 to 65535
     * @param header the header, or {@code null}; belongs to the operation until it completes
     * @param iov    the data, in order; every segment native; the segments belong to the operation until it completes
     * @param flags  {@link UcpAmSendFlags} bits
     * @return a request token
     */
    public long sendAm(int id, MemorySegment header, MemorySegment[] iov, int flags) {
        MemorySegment ep = amSendChecks(id, header, MemorySegment.NULL, 0, 0, flags);
        IovList list = worker.iovList(iov);
        MemorySegment param = worker.param();
        int slot = iovOperation(param, UCP_OP_ATTR_FIELD_FLAGS(), RequestTable.SEND, "ucp_am_send_nbx", header, list);
        ucp_request_param_t.flags(param, flags);
        return worker.requests.started(ucp_am_send_nbx(ep, id, headerAddress(header), headerLength(header),
                list.array(), list.count(), param), slot);
    }

    /**
     * Sends an active message gathered from several segments, as {@link #sendAm(int, MemorySegment, MemorySegment[],
     * int)} does; {@code callback} runs on completion. Suits code with many sends in flight: nothing has to be polled
     * per send, each completion arrives by itself (one upcall per send that does not complete at once).
     *
     * @param id       the handler id at the receiver, 0 to 65535
     * @param header   the header, or {@code null}; belongs to the operation until the callback runs
     * @param iov      the data, in order; every segment native; the segments belong to the operation until the
     *                 callback runs (the worker keeps them reachable), the array may be reused at once
     * @param flags    {@link UcpAmSendFlags} bits
     * @param callback called once on the progressing thread (or before this method returns), with length 0
     * @throws IllegalArgumentException if {@code iov} is empty or holds a heap segment
     * @throws IllegalStateException    if the context lacks {@link UcpContext.Feature#AM}
     */
    public void sendAm(int id, MemorySegment header, MemorySegment[] iov, int flags, UcpCallback callback) {
        Objects.requireNonNull(callback, "callback");
        MemorySegment ep = amSendChecks(id, header, MemorySegment.NULL, 0, 0, flags);
        IovList list = worker.iovList(iov);
        MemorySegment param = worker.param();
        int slot = worker.requests.reserveCompletion(RequestTable.SEND, "ucp_am_send_nbx", this, header, list, null,
                callback, null, 0);
        worker.requests.callbackParams(param, UCP_OP_ATTR_FIELD_FLAGS() | UCP_OP_ATTR_FIELD_DATATYPE(),
                worker.upcalls.sendStub, slot);
        ucp_request_param_t.datatype(param, UcpInline.ucp_dt_make_iov());
        ucp_request_param_t.flags(param, flags);
        worker.requests.startedWithCallback(ucp_am_send_nbx(ep, id, headerAddress(header), headerLength(header),
                list.array(), list.count(), param), slot, 0, 0);
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

    // ---- scatter-gather -------------------------------------------------------------------------------------------

    /** Starts a polled IOV operation: the datatype set, the descriptor array owned by the operation. */
    private int iovOperation(MemorySegment param, int attrMask, byte kind, String op, Object keep, IovList list) {
        ucp_request_param_t.op_attr_mask(param, attrMask | UCP_OP_ATTR_FIELD_DATATYPE());
        ucp_request_param_t.datatype(param, UcpInline.ucp_dt_make_iov());
        return worker.requests.reserve(kind, op, this, keep, list);
    }

    /**
     * Sends one tagged message gathered from several segments ({@code ucp_tag_send_nbx} with the
     * {@code ucp_dt_make_iov()} datatype): the receiver gets the bytes of {@code iov[0]}, then {@code iov[1]}, and
     * so on, as one message, into a contiguous buffer or segments of its own. Allocates a small descriptor array
     * per call, freed when the operation is released.
     *
     * @param iov the data, in order; every segment native; the segments belong to the operation until it completes
     *            (the worker keeps them reachable), the array may be reused at once
     * @param tag the message tag
     * @return a request token for {@link UcpWorker#poll(long)}
     * @throws IllegalArgumentException if {@code iov} is empty or holds a heap segment
     */
    public long sendTag(MemorySegment[] iov, long tag) {
        MemorySegment ep = handle();
        IovList list = worker.iovList(iov);
        MemorySegment param = worker.param();
        int slot = iovOperation(param, 0, RequestTable.SEND, "ucp_tag_send_nbx", null, list);
        return worker.requests.started(ucp_tag_send_nbx(ep, list.array(), list.count(), tag, param), slot);
    }

    /**
     * Sends bytes gathered from several segments on the endpoint's ordered stream ({@code ucp_stream_send_nbx}
     * with the {@code ucp_dt_make_iov()} datatype).
     *
     * @param iov the data, in order; every segment native; the segments belong to the operation until it completes
     * @return a request token
     * @throws IllegalArgumentException if {@code iov} is empty or holds a heap segment
     */
    public long sendStream(MemorySegment[] iov) {
        MemorySegment ep = handle();
        IovList list = worker.iovList(iov);
        MemorySegment param = worker.param();
        int slot = iovOperation(param, 0, RequestTable.SEND, "ucp_stream_send_nbx", null, list);
        return worker.requests.started(ucp_stream_send_nbx(ep, list.array(), list.count(), param), slot);
    }

    /**
     * Receives stream bytes scattered over several segments ({@code ucp_stream_recv_nbx} with the
     * {@code ucp_dt_make_iov()} datatype). Without {@code waitAll} it completes as soon as some bytes arrived;
     * {@link UcpWorker#receivedLength()} tells how many (in bytes, filling the segments in order).
     *
     * @param iov     where to receive, in order; every segment native; the segments belong to the operation until
     *                it completes
     * @param waitAll complete only when the segments are full ({@code UCP_STREAM_RECV_FLAG_WAITALL})
     * @return a request token
     * @throws IllegalArgumentException if {@code iov} is empty or holds a heap segment
     */
    public long receiveStream(MemorySegment[] iov, boolean waitAll) {
        MemorySegment ep = handle();
        IovList list = worker.iovList(iov);
        Scratch s = worker.scratch.get();
        MemorySegment param = s.clearedParam();
        ucp_request_param_t.flags(param, waitAll ? UCP_STREAM_RECV_FLAG_WAITALL() : 0);
        int slot = iovOperation(param, UCP_OP_ATTR_FIELD_FLAGS(), RequestTable.STREAM_RECV, "ucp_stream_recv_nbx", null,
                list);
        MemorySegment result = ucp_stream_recv_nbx(ep, list.array(), list.count(), s.length, param);
        if (result.address() == 0) {
            s.receivedLength = s.length.get(JAVA_LONG, 0);
        }
        return worker.requests.started(result, slot);
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
        int slot = worker.requests.reserve(RequestTable.OTHER, "ucp_ep_flush_nbx", this, null, null);
        return worker.requests.started(ucp_ep_flush_nbx(ep, param), slot);
    }

    /**
     * Flushes the endpoint ({@code ucp_ep_flush_nbx}); {@code callback} runs when every operation started on it
     * before has completed at the remote side too.
     *
     * @param callback called once on the progressing thread (or before this method returns), with length 0
     */
    public void flush(UcpCallback callback) {
        flush(Objects.requireNonNull(callback, "callback"), null);
    }

    /**
     * Flushes the endpoint ({@code ucp_ep_flush_nbx}), completing a future (allocates; for control paths and simple
     * code).
     *
     * @return a future of {@code 0}, completed on the progressing thread when every operation started on the
     *         endpoint before has completed at the remote side too
     */
    public CompletableFuture<Long> flushAsync() {
        return RequestTable.future(this::flush);
    }

    private void flush(UcpCallback callback, CompletableFuture<Long> future) {
        MemorySegment ep = handle();
        MemorySegment param = worker.param();
        int slot = worker.requests.reserveCompletion(RequestTable.OTHER, "ucp_ep_flush_nbx", this, null, null, null,
                callback, future, 0);
        worker.requests.callbackParams(param, 0, worker.upcalls.sendStub, slot);
        worker.requests.startedWithCallback(ucp_ep_flush_nbx(ep, param), slot, 0, 0);
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
     * UCX's description of this endpoint ({@code ucp_ep_print_info}): its lanes and the transports they use.
     *
     * @return the text UCX prints
     */
    public String describe() {
        MemorySegment ep = nativeHandle();
        return Libc.printToString(stream -> ucp_ep_print_info(ep, stream));
    }

    private static final Pattern LANE = Pattern.compile(
            "lane\\[\\d+\\]:\\s+\\d+:([A-Za-z0-9_]+)/");

    /**
     * The UCX transports the endpoint's lanes use (from {@link #describe()}), such as {@code tcp}, {@code posix},
     * {@code sysv}, {@code cma}, {@code self}, or {@code rc_mlx5} on an RDMA NIC. Lanes are chosen during wire-up, so
     * ask after a first message has gone through: on UCX 1.18.1, asking before the wire-up of an endpoint connected
     * through a listener of the same process over shared memory has completed crashes the process
     * ({@link UcxVersion.Defect#IN_PROCESS_LISTENER_SHARED_MEMORY_EARLY_SEND}).
     *
     * @return the transport names, in lane order, without repeats
     */
    public Set<String> transports() {
        Set<String> names = new LinkedHashSet<>();
        Matcher m = LANE.matcher(describe());
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
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
        if (borrowed) {
            return; // UCX's own endpoint (an active-message reply endpoint): UCX closes it
        }
        if (handle == null) {
            dropUpcallSource();
            return; // the constructor failed before ucp_ep_create made an endpoint
        }
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
                if (worker.inCallback()) {
                    // no progress here (UCX forbids it inside a callback): later progress calls finish the close
                    worker.closes.add(request.address(), deadline);
                    return;
                }
                while (ucp_request_check_status(request) == UCS_INPROGRESS() && System.nanoTime() - deadline < 0) {
                    ucp_worker_progress(workerHandle);
                }
                if (worker.am.hasQueued()) {
                    worker.am.deliverQueued(); // messages that came while closing, as progress() hands them on
                }
                // Released either way: UCX frees a request still in flight when it completes.
                ucp_request_free(request);
            }
        } finally {
            worker.endpoints.remove(handle.address());
            dropUpcallSource(); // closed: UCX calls no error callback of a closed endpoint
        }
    }

    private void dropUpcallSource() {
        if (upcallSource) {
            upcallSource = false;
            worker.requests.removeUpcallSource();
        }
    }

    @Override
    public String toString() {
        return "UcpEndpoint[" + (isClosed() ? "closed" : failure != 0 ? "failed " + UcsStatus.of(failure) : "open")
                + "]";
    }
}
