package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_conn_request_attr;
import io.github.ucxffm.bindings.ucp_listener_attr;
import io.github.ucxffm.bindings.ucp_listener_conn_handler;
import io.github.ucxffm.bindings.ucp_listener_params;
import io.github.ucxffm.bindings.ucs_sock_addr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.function.Consumer;
import java.util.function.Predicate;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * A UCP listener ({@code ucp_listener_h}): accepts connections from clients that connect to a socket address
 * with {@link UcpWorker#connect(InetSocketAddress)}.
 * <p>
 * Each arriving request first meets the accept policy; a refused one is rejected at once and never seen by the
 * application. An accepted one goes to the handler, if one was given, or waits in a queue read with
 * {@link #poll()}. Both run on the worker's progressing thread.
 * <p>
 * <b>Ownership.</b> Created by {@link UcpWorker#listen}, owned by the worker; {@link #close()} rejects requests
 * still queued or handed out and never answered, then destroys the listener. Endpoints already accepted stay open.
 * <p>
 * <b>Threads.</b> Those of its worker.
 */
public final class UcpListener extends UcxHandle {

    private final UcpWorker worker;
    private final MemorySegment handle;
    private final Predicate<UcpConnectionRequest> policy;
    private final Consumer<UcpConnectionRequest> handler;
    private final ArrayDeque<UcpConnectionRequest> queue = new ArrayDeque<>();
    /** Requests given to the handler or the queue and perhaps not answered yet: close() rejects those still open. */
    private final ArrayList<UcpConnectionRequest> handedOut = new ArrayList<>();
    private final InetSocketAddress address;
    private final long id;
    private int rejectedByPolicy;
    /** In the worker's registry and counted as an upcall source (its connection handler), until {@link #forget}. */
    private boolean registered;

    UcpListener(UcpWorker worker, InetSocketAddress bind, Predicate<UcpConnectionRequest> policy,
                Consumer<UcpConnectionRequest> handler) {
        super("UcpListener", worker);
        this.worker = worker;
        this.policy = policy;
        this.handler = handler;
        this.id = worker.listeners.add(this);
        this.registered = true;
        worker.requests.addUpcallSource(); // before UCX knows the connection handler
        MemorySegment created = null;
        try (Arena call = Arena.ofConfined()) {
            MemorySegment params = ucp_listener_params.allocate(call);
            ucp_listener_params.field_mask(params, UCP_LISTENER_PARAM_FIELD_SOCK_ADDR()
                    | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER());
            MemorySegment sa = SockAddr.of(bind, call);
            MemorySegment sock = ucp_listener_params.sockaddr(params);
            ucs_sock_addr.addr(sock, sa);
            ucs_sock_addr.addrlen(sock, (int) sa.byteSize());
            MemorySegment conn = ucp_listener_params.conn_handler(params);
            ucp_listener_conn_handler.cb(conn, worker.upcalls.connectionStub);
            ucp_listener_conn_handler.arg(conn, MemorySegment.ofAddress(id));
            MemorySegment listenerP = call.allocate(ADDRESS);
            byte status = ucp_listener_create(worker.handle(), params, listenerP);
            if (status != UCS_OK()) {
                forget();
                super.close();
                throw UcxException.of("ucp_listener_create(" + bind + ")", status);
            }
            created = listenerP.get(ADDRESS, 0);
            MemorySegment attr = ucp_listener_attr.allocate(call);
            ucp_listener_attr.field_mask(attr, UCP_LISTENER_ATTR_FIELD_SOCKADDR());
            byte q = ucp_listener_query(created, attr);
            if (q != UCS_OK()) {
                ucp_listener_destroy(created);
                forget();
                super.close();
                throw UcxException.of("ucp_listener_query", q);
            }
            InetSocketAddress bound = SockAddr.read(ucp_listener_attr.sockaddr(attr));
            this.address = bound != null ? bound : bind;
        } catch (RuntimeException | Error e) {
            if (created == null) {
                forget(); // UCX never had the handler (an address it could not take, say); idempotent
            }
            throw e;
        }
        this.handle = created;
    }

    MemorySegment handle() {
        worker.check();
        ensureOpen();
        return handle;
    }

    /**
     * The worker the listener belongs to.
     *
     * @return the worker
     */
    public UcpWorker worker() {
        return worker;
    }

    /**
     * The address the listener is bound to; with port 0 asked for, the port the system chose.
     *
     * @return the bound address
     */
    public InetSocketAddress address() {
        return address;
    }

    /**
     * The next accepted-by-policy request waiting in the queue (listeners made without a handler).
     *
     * @return the request, or {@code null} if none is waiting
     */
    public UcpConnectionRequest poll() {
        worker.check();
        ensureOpen();
        return queue.poll();
    }

    /**
     * How many requests the accept policy refused so far.
     *
     * @return the count
     */
    public int rejectedByPolicy() {
        return rejectedByPolicy;
    }

    /** Called by the worker's connection upcall, on the progressing thread. */
    void onConnectionRequest(MemorySegment request) {
        InetSocketAddress client = null;
        long clientId = 0;
        try (Arena call = Arena.ofConfined()) {
            MemorySegment attr = ucp_conn_request_attr.allocate(call);
            ucp_conn_request_attr.field_mask(attr, UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR()
                    | UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ID());
            if (ucp_conn_request_query(request, attr) == UCS_OK()) {
                client = SockAddr.read(ucp_conn_request_attr.client_address(attr));
                clientId = ucp_conn_request_attr.client_id(attr);
            }
        }
        UcpConnectionRequest r = new UcpConnectionRequest(this, request, client, clientId);
        if (isClosing()) {
            r.rejectQuietly(handle);
            return;
        }
        boolean allowed;
        try {
            allowed = policy == null || policy.test(r);
        } catch (Throwable t) {
            r.rejectQuietly(handle);
            rejectedByPolicy++;
            throw t;
        }
        if (!allowed) {
            r.rejectQuietly(handle);
            rejectedByPolicy++;
            return;
        }
        handedOut.removeIf(answered -> !answered.isPending());
        handedOut.add(r);
        if (handler != null) {
            try {
                handler.accept(r);
            } catch (Throwable t) {
                if (r.isPending()) {
                    r.rejectQuietly(handle); // the client learns at once instead of waiting for the listener to close
                }
                throw t;
            }
        } else {
            queue.add(r);
        }
    }

    @Override
    void beforeClose() {
        worker.check();
    }

    @Override
    void release() {
        if (handle == null) {
            forget();
            return; // the constructor failed: there is no native listener
        }
        for (UcpConnectionRequest r : queue) {
            r.rejectQuietly(handle);
        }
        queue.clear();
        for (UcpConnectionRequest r : handedOut) {
            r.rejectQuietly(handle); // polled or given to the handler, never answered: it dies with the listener
        }
        handedOut.clear();
        ucp_listener_destroy(handle);
        forget();
    }

    /** Leaves the worker's registry and its count of upcall sources (UCX no longer calls the handler); once. */
    private void forget() {
        if (registered) {
            registered = false;
            worker.listeners.remove(id);
            worker.requests.removeUpcallSource();
        }
    }

    @Override
    public String toString() {
        return "UcpListener[" + address + (isClosed() ? ", closed]" : "]");
    }
}
