package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.github.ucxffm.TestSupport.assertBytes;
import static io.github.ucxffm.TestSupport.awaitBoth;
import static io.github.ucxffm.TestSupport.progressFor;
import static io.github.ucxffm.TestSupport.progressUntil;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Client-server connections over TCP on the loopback interface: listen, accept, reject, policy, addresses. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ListenerTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private UcpContext context;
    private UcpWorker server;
    private UcpWorker client;
    private Arena arena;

    @BeforeEach
    void setUp() {
        context = UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "tcp,self").build();
        server = context.newWorker();
        client = context.newWorker();
        arena = Arena.ofConfined();
    }

    @AfterEach
    void tearDown() {
        context.close();
        arena.close();
    }

    private UcpListener listen() {
        UcpListener l = server.listen(new InetSocketAddress(LOOPBACK, 0));
        assertNotEquals(0, l.address().getPort(), "port 0 must be replaced by the bound port");
        assertEquals(LOOPBACK, l.address().getAddress());
        return l;
    }

    /**
     * IPv6 is refused before UCX sees it: UCX corrupts its heap accepting a connection made over {@code ::1} (the JVM
     * aborts), so a listener or a client on an IPv6 address must fail cleanly, and the worker go on serving IPv4.
     */
    @Test
    void shouldRefuseIpv6AddressesAndStayUsable() throws Exception {
        InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("::1"), 0);
        IllegalArgumentException listen = assertThrows(IllegalArgumentException.class, () -> server.listen(v6));
        assertTrue(listen.getMessage().contains("IPv6") && listen.getMessage().contains("127.0.0.1"),
                listen.getMessage());
        IllegalArgumentException connect = assertThrows(IllegalArgumentException.class,
                () -> UcpEndpoint.Params.socket(new InetSocketAddress(InetAddress.getByName("::1"), 13337)));
        assertTrue(connect.getMessage().contains("server address"), connect.getMessage());

        // An IPv4-mapped literal is an Inet4Address in Java: accepted, and it connects.
        UcpListener l = server.listen(new InetSocketAddress(InetAddress.getByName("::ffff:127.0.0.1"), 0));
        UcpEndpoint clientEp = client.connect(l.address());
        AtomicReference<UcpConnectionRequest> request = new AtomicReference<>();
        progressUntil(() -> {
            UcpConnectionRequest r = l.poll();
            if (r != null) {
                request.set(r);
            }
            return request.get() != null;
        }, 10_000, server, client);
        exchange(clientEp, request.get().accept(), 71);
    }

    /** A message each way over a connected pair; bytes asserted. */
    private void exchange(UcpEndpoint clientEp, UcpEndpoint serverEp, int seed) {
        for (long size : new long[] {16, 300_000}) {
            MemorySegment up = BytePattern.allocate(arena, size, seed);
            MemorySegment atServer = arena.allocate(size);
            long recv = server.receiveTag(atServer, 0, size, 0xC1, -1L);
            long send = clientEp.sendTag(up, 0, size, 0xC1);
            awaitBoth(client, send, server, recv);
            assertEquals(size, server.receivedLength());
            assertBytes(up.toArray(JAVA_BYTE), atServer, "client to server, " + size);

            MemorySegment down = BytePattern.allocate(arena, size, seed + 1);
            MemorySegment atClient = arena.allocate(size);
            long recv2 = client.receiveTag(atClient, 0, size, 0x5E, -1L);
            long send2 = serverEp.sendTag(down, 0, size, 0x5E);
            awaitBoth(server, send2, client, recv2);
            assertBytes(down.toArray(JAVA_BYTE), atClient, "server to client, " + size);
        }
    }

    @Test
    void shouldAcceptFromThePollQueueAndTalkBothWays() {
        UcpListener listener = listen();
        assertNull(listener.poll());
        UcpEndpoint clientEp = client.connect(UcpEndpoint.Params.socket(listener.address()).sendClientId(true));
        UcpConnectionRequest[] request = new UcpConnectionRequest[1];
        progressUntil(() -> (request[0] = listener.poll()) != null, 10_000, client, server);
        UcpConnectionRequest r = request[0];
        // UCX sends the client worker's client_id (ucp_worker_params_t.client_id); ucx-ffm never sets it, so UCX
        // sends its default, 0, even with sendClientId(true).
        assertEquals(0, r.clientId());
        assertTrue(r.isPending());
        assertEquals(listener, r.listener());
        assertNotNull(r.clientAddress());
        assertEquals(LOOPBACK, r.clientAddress().getAddress());
        assertNotEquals(listener.address().getPort(), r.clientAddress().getPort());
        UcpEndpoint serverEp = r.accept();
        assertFalse(r.isPending());
        assertThrows(IllegalStateException.class, r::accept, "a request is answered once");
        assertThrows(IllegalStateException.class, r::reject, "a request is answered once");
        exchange(clientEp, serverEp, 1);

        // the connection's two socket ends, seen from each side
        assertEquals(listener.address(), clientEp.remoteAddress());
        assertEquals(r.clientAddress(), clientEp.localAddress());
        assertEquals(listener.address(), serverEp.localAddress());
        assertEquals(r.clientAddress(), serverEp.remoteAddress());
    }

    @Test
    void shouldConnectFromTheLocalAddressGiven() throws Exception {
        UcpListener listener = listen();
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
            port = probe.getLocalPort(); // a port free a moment ago, bound by no one now
        }
        InetSocketAddress from = new InetSocketAddress(LOOPBACK, port);
        UcpEndpoint clientEp = client.connect(UcpEndpoint.Params.socket(listener.address()).localAddress(from));
        UcpConnectionRequest[] request = new UcpConnectionRequest[1];
        progressUntil(() -> (request[0] = listener.poll()) != null, 10_000, client, server);
        assertEquals(from, request[0].clientAddress(), "the server sees the client's bound address");
        UcpEndpoint serverEp = request[0].accept();
        exchange(clientEp, serverEp, 1);
        assertEquals(from, clientEp.localAddress());
        assertEquals(from, serverEp.remoteAddress());
    }

    @Test
    void shouldFailAConnectionWhoseLocalAddressCannotBeBound() throws Exception {
        UcpListener listener = listen();
        try (ServerSocket taken = new ServerSocket(0, 1, LOOPBACK)) { // a listening socket: no one else binds here
            InetSocketAddress from = new InetSocketAddress(LOOPBACK, taken.getLocalPort());
            UcpEndpoint clientEp;
            try {
                clientEp = client.connect(UcpEndpoint.Params.socket(listener.address()).localAddress(from));
            } catch (UcxException refusedAtOnce) {
                return; // UCX tried to bind inside ucp_ep_create
            }
            long send = clientEp.sendTag(arena.allocate(8), 0, 8, 1);
            assertThrows(UcxException.class, () -> progressUntil(() -> client.poll(send), 10_000, client, server),
                    "a connection from an address in use fails");
            assertNull(listener.poll(), "no request reached the server");
        }
    }

    @Test
    void shouldRefuseALocalAddressWhereItHasNoMeaning() {
        assertThrows(IllegalStateException.class, () -> UcpEndpoint.Params.worker(server.address())
                .localAddress(new InetSocketAddress(LOOPBACK, 0)));
        assertThrows(IllegalArgumentException.class, () -> UcpEndpoint.Params.socket(new InetSocketAddress(LOOPBACK, 1))
                .localAddress(new InetSocketAddress(InetAddress.getByName("::1"), 0)));
    }

    @Test
    void shouldAcceptThroughAHandler() {
        List<UcpEndpoint> accepted = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        UcpListener listener = server.listen(new InetSocketAddress(LOOPBACK, 0), null, req -> {
            threads.add(Thread.currentThread());
            accepted.add(req.accept());
        });
        UcpEndpoint clientEp = client.connect(UcpEndpoint.Params.socket(listener.address()));
        progressUntil(() -> !accepted.isEmpty(), 10_000, client, server);
        assertNull(listener.poll(), "a listener with a handler queues nothing");
        assertEquals(List.of(Thread.currentThread()), threads, "the handler runs once, on the progressing thread");
        exchange(clientEp, accepted.getFirst(), 3);
    }

    /** Connects a client with an error handler and a tag send in flight; returns what the handler saw. */
    private static final class Client {
        final AtomicReference<UcxException> error = new AtomicReference<>();
        UcpEndpoint ep;
        long send;
    }

    private Client connectClient(UcpListener listener, MemorySegment payload) {
        Client c = new Client();
        c.ep = client.connect(UcpEndpoint.Params.socket(listener.address()).onError(e -> {
            assertTrue(c.error.compareAndSet(null, e), "error handler ran twice");
        }));
        c.send = c.ep.sendTag(payload, 0, payload.byteSize(), 0x99);
        return c;
    }

    /** Progresses until the client sees its failure; then its send in flight and new operations fail. */
    private UcxException awaitClientFailure(Client c, UcpWorker... workers) {
        progressUntil(() -> c.error.get() != null, 10_000, workers);
        UcxException e = c.error.get();
        assertTrue(c.ep.isFailed());
        assertEquals(e.status(), c.ep.failureStatus());
        // UCX reports a rejection as UCS_ERR_REJECTED: to the error handler, to the send in flight, to later calls
        assertInstanceOf(UcxRejectedException.class, e);
        assertEquals(UcsStatus.ERR_REJECTED, e.status());
        UcxException sendFailure = assertThrows(UcxException.class, () -> {
            progressUntil(() -> client.poll(c.send), 10_000, workers);
        });
        assertInstanceOf(UcxRejectedException.class, sendFailure);
        assertEquals("ucp_tag_send_nbx", sendFailure.call());
        UcxException later = assertThrows(UcxException.class, () -> c.ep.sendTag(arena.allocate(8), 0, 8, 1));
        assertInstanceOf(UcxRejectedException.class, later);
        return e;
    }

    @Test
    void shouldFailTheClientWhenTheServerRejects() {
        UcpListener listener = listen();
        Client c = connectClient(listener, BytePattern.allocate(arena, 64, 5));
        UcpConnectionRequest[] request = new UcpConnectionRequest[1];
        progressUntil(() -> (request[0] = listener.poll()) != null, 10_000, client, server);
        request[0].reject();
        assertFalse(request[0].isPending());
        assertThrows(IllegalStateException.class, request[0]::accept);
        UcxException e = awaitClientFailure(c, client, server);
        assertInstanceOf(UcxRejectedException.class, e);
    }

    @Test
    void shouldRejectClientsRefusedByThePolicyWithoutShowingThem() {
        List<UcpConnectionRequest> seenByPolicy = new ArrayList<>();
        List<UcpConnectionRequest> seenByHandler = new ArrayList<>();
        UcpListener listener = server.listen(new InetSocketAddress(LOOPBACK, 0), req -> {
            seenByPolicy.add(req);
            return !req.clientAddress().getAddress().isLoopbackAddress();
        }, seenByHandler::add);
        Client c = connectClient(listener, BytePattern.allocate(arena, 64, 6));
        UcxException e = awaitClientFailure(c, client, server);
        assertInstanceOf(UcxRejectedException.class, e);
        assertEquals(1, listener.rejectedByPolicy());
        assertEquals(1, seenByPolicy.size());
        assertFalse(seenByPolicy.getFirst().isPending(), "refused request must have been answered");
        progressFor(200, client, server);
        assertTrue(seenByHandler.isEmpty(), "the handler saw a refused request");
        assertNull(listener.poll());
    }

    @Test
    void shouldRefuseToListenOnAPortInUse() {
        UcpListener first = listen();
        UcxException e = assertThrows(UcxException.class, () -> server.listen(first.address()));
        // UCX 1.13 turns bind()'s EADDRINUSE into UCS_ERR_BUSY
        assertInstanceOf(UcxCallException.class, e);
        assertEquals(UcsStatus.ERR_BUSY, e.status());
        assertTrue(e.getMessage().contains("ucp_listener_create"), e.getMessage());
        // the failed listener left nothing behind: the worker and the first listener still work
        UcpEndpoint clientEp = client.connect(first.address());
        UcpConnectionRequest[] request = new UcpConnectionRequest[1];
        progressUntil(() -> (request[0] = first.poll()) != null, 10_000, client, server);
        exchange(clientEp, request[0].accept(), 9);
    }

    @Test
    void shouldRejectQueuedRequestsWhenTheListenerCloses() {
        List<UcpConnectionRequest> queued = new ArrayList<>();
        // the policy sees each request just before it is queued: a way to know it is there without taking it
        UcpListener listener = server.listen(new InetSocketAddress(LOOPBACK, 0), queued::add, null);
        Client c = connectClient(listener, BytePattern.allocate(arena, 64, 7));
        progressUntil(() -> !queued.isEmpty(), 10_000, client, server);
        assertTrue(queued.getFirst().isPending());
        listener.close();
        assertFalse(queued.getFirst().isPending(), "closing the listener must answer the queued request");
        assertThrows(IllegalStateException.class, listener::poll);
        UcxException e = awaitClientFailure(c, client, server);
        assertInstanceOf(UcxRejectedException.class, e);
    }

    @Test
    void shouldRejectPolledButUnansweredRequestsWhenTheListenerCloses() {
        UcpListener listener = listen();
        Client c = connectClient(listener, BytePattern.allocate(arena, 64, 8));
        UcpConnectionRequest[] request = new UcpConnectionRequest[1];
        progressUntil(() -> (request[0] = listener.poll()) != null, 10_000, client, server);
        listener.close();
        assertFalse(request[0].isPending(), "closing the listener must answer requests the application holds");
        assertThrows(IllegalStateException.class, request[0]::accept);
        UcxException e = awaitClientFailure(c, client, server);
        assertInstanceOf(UcxRejectedException.class, e);
    }
}
