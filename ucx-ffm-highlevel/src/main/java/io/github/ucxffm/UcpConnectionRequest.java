package io.github.ucxffm;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.function.Consumer;

import static io.github.ucxffm.bindings.ucx_h.ucp_listener_reject;

/**
 * A client's request to connect to a {@link UcpListener} ({@code ucp_conn_request_h}). Answer it exactly once:
 * {@link #accept()} makes the server's endpoint, {@link #reject()} refuses; a listener closed with requests
 * unanswered rejects them.
 * <p>
 * <b>Threads.</b> Those of the listener's worker, with one exception: {@link #endpointParams()}, called on the
 * listener's worker's thread (in the connection handler, say), gives parameters that may be handed to another thread
 * and passed there to {@link UcpWorker#connect(UcpEndpoint.Params)} of <em>another worker of the same context</em>,
 * which accepts the connection on that worker ({@code ucp_ep_create} with the request on a worker other than the
 * listener's; UCX moves the connection to that worker). A server can so listen on one worker and spread its
 * connections over the workers of several threads. The request is answered once: whichever of that accept and the
 * listener's close comes first wins, and the other finds it answered.
 */
public final class UcpConnectionRequest {

    private final UcpListener listener;
    private final InetSocketAddress clientAddress;
    private final long clientId;
    /** Guarded by {@code this}: taken by an accept on any worker's thread, or rejected by the listener's close. */
    private MemorySegment handle;

    UcpConnectionRequest(UcpListener listener, MemorySegment handle, InetSocketAddress clientAddress, long clientId) {
        this.listener = listener;
        this.handle = handle;
        this.clientAddress = clientAddress;
        this.clientId = clientId;
    }

    /**
     * The client's socket address, as the server sees it.
     *
     * @return the address, or {@code null} if UCX did not report one
     */
    public InetSocketAddress clientAddress() {
        return clientAddress;
    }

    /**
     * The id of the client's worker, when the client sent it ({@link UcpEndpoint.Params#sendClientId}).
     *
     * @return the client id, {@code 0} if none was sent
     */
    public long clientId() {
        return clientId;
    }

    /**
     * The listener the request arrived on.
     *
     * @return the listener
     */
    public UcpListener listener() {
        return listener;
    }

    /**
     * Whether the request is still unanswered.
     *
     * @return {@code true} until accepted or rejected
     */
    public synchronized boolean isPending() {
        return handle != null;
    }

    /** Hands the native request to an endpoint; once. */
    synchronized MemorySegment take() {
        if (handle == null) {
            throw new IllegalStateException("connection request from " + clientAddress + " was already answered");
        }
        MemorySegment h = handle;
        handle = null;
        return h;
    }

    /**
     * Accepts the connection: creates the server's endpoint, with peer error handling.
     *
     * @return the endpoint, owned by the listener's worker
     * @throws UcxException if UCX cannot create the endpoint. UCX 1.18 and 1.23 hand a connection whose header is
     *                      not a UCP address (a port scanner's bytes) to the application as a request, and its accept
     *                      fails ({@code UCS_ERR_INVALID_PARAM}, or {@code UCS_ERR_UNREACHABLE} with
     *                      {@code UCX_PROTO_ENABLE=n}), UCX having rejected it; a server should go on listening
     */
    public UcpEndpoint accept() {
        return accept(null);
    }

    /**
     * Accepts the connection with an error handler.
     *
     * @param onError run once when the endpoint fails, on the progressing thread; may be {@code null}
     * @return the endpoint, owned by the listener's worker
     */
    public UcpEndpoint accept(Consumer<UcxException> onError) {
        listener.handle(); // the worker's thread rules, and an open listener: a closed one rejected its requests
        return listener.worker().connect(UcpEndpoint.Params.request(this).onError(onError));
    }

    /**
     * Accepts the connection with an error handler and a choice of error handling mode. On UCX 1.13, peer error
     * handling keeps shared-memory transports out of the endpoint; without it, UCX may use them (faster on one
     * host) but cannot report a dead peer.
     *
     * @param onError           run once when the endpoint fails, on the progressing thread; may be {@code null}
     * @param peerErrorHandling {@code false} for {@code UCP_ERR_HANDLING_MODE_NONE}
     * @return the endpoint, owned by the listener's worker
     */
    public UcpEndpoint accept(Consumer<UcxException> onError, boolean peerErrorHandling) {
        listener.worker().check();
        return listener.worker().connect(UcpEndpoint.Params.request(this).onError(onError)
                .peerErrorHandling(peerErrorHandling));
    }

    /**
     * Parameters for accepting the connection with every endpoint setting: pass them, changed as needed, to the
     * listener's worker's {@link UcpWorker#connect(UcpEndpoint.Params)}, which accepts it, or to another worker's of
     * the same context, on that worker's thread (see the class comment). For example, an endpoint
     * without peer error handling and without an error callback, as {@code ucx_perftest} makes:
     * {@code worker.connect(request.endpointParams().peerErrorHandling(false).errorCallback(false))}.
     *
     * @return new parameters naming this request
     * @throws IllegalStateException if the request was already answered or the listener is closed
     */
    public UcpEndpoint.Params endpointParams() {
        listener.handle(); // the worker's thread rules, and an open listener: a closed one rejected its requests
        if (!isPending()) {
            throw new IllegalStateException("the connection request was already answered");
        }
        return UcpEndpoint.Params.request(this);
    }

    /**
     * Refuses the connection ({@code ucp_listener_reject}); the client's endpoint fails with
     * {@link UcxRejectedException} or a peer failure.
     */
    public void reject() {
        listener.worker().check();
        synchronized (this) {
            MemorySegment h = take();
            Status.check(ucp_listener_reject(listener.handle(), h), "ucp_listener_reject");
        }
    }

    synchronized void rejectQuietly(MemorySegment listenerHandle) {
        if (handle != null) {
            MemorySegment h = handle;
            handle = null;
            ucp_listener_reject(listenerHandle, h);
        }
    }

    @Override
    public String toString() {
        return "UcpConnectionRequest[from " + clientAddress + ", client id " + Long.toUnsignedString(clientId)
                + (handle == null ? ", answered]" : "]");
    }
}
