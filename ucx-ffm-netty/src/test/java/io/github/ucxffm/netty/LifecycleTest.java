package io.github.ucxffm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.github.ucxffm.testsupport.Await;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Connecting, half-closing, closing and failing, as Netty users expect of a socket channel. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LifecycleTest extends UcxTestBase {

    /** Records the events a channel sees, as strings, and what it read. */
    static final class Recorder extends ChannelInboundHandlerAdapter {
        final List<String> events = new CopyOnWriteArrayList<>();
        final StringBuilder text = new StringBuilder();
        final CompletableFuture<Void> inactive = new CompletableFuture<>();
        final CompletableFuture<Void> inputShutdown = new CompletableFuture<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            events.add("active");
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            synchronized (text) {
                text.append(b.toString(StandardCharsets.US_ASCII));
            }
            b.release();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == ChannelInputShutdownEvent.INSTANCE) {
                events.add("inputShutdown:" + text());
                inputShutdown.complete(null);
            } else if (evt == ChannelInputShutdownReadComplete.INSTANCE) {
                events.add("inputShutdownReadComplete");
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            events.add("exception:" + cause.getClass().getSimpleName());
            error.compareAndSet(null, cause);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            events.add("inactive");
            inactive.complete(null);
        }

        String text() {
            synchronized (text) {
                return text.toString();
            }
        }
    }

    private static ByteBuf ascii(Channel ch, String s) {
        return ch.alloc().directBuffer().writeBytes(s.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void shouldDeliverEndOfStreamAfterTheDataOnShutdownOutput() throws Exception {
        EventLoopGroup group = group(2, TCP);
        Recorder serverSide = new Recorder();
        CountDownLatch answered = new CountDownLatch(1);
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(serverSide)
                .addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        if (evt == ChannelInputShutdownEvent.INSTANCE) {
                            // Half-closed: the server can still answer, then closes.
                            ctx.writeAndFlush(ascii(ctx.channel(), "pong")).addListener(f -> {
                                answered.countDown();
                                ctx.close();
                            });
                        }
                    }
                }), b -> b.childOption(ChannelOption.ALLOW_HALF_CLOSURE, true));
        Recorder clientSide = new Recorder();
        UcxSocketChannel client = (UcxSocketChannel) client(group, ch -> ch.pipeline().addLast(clientSide))
                .option(ChannelOption.ALLOW_HALF_CLOSURE, true).connect(server.localAddress()).sync().channel();
        client.writeAndFlush(ascii(client, "ping-")).sync();
        client.writeAndFlush(ascii(client, "ping")).sync();
        assertFalse(client.isOutputShutdown());
        client.shutdownOutput().sync();
        assertTrue(client.isOutputShutdown());
        assertInstanceOf(ClosedChannelException.class,
                client.writeAndFlush(ascii(client, "late")).await().cause(), "no write after shutdownOutput");
        serverSide.inputShutdown.get(10, TimeUnit.SECONDS);
        assertEquals("inputShutdown:ping-ping", serverSide.events.get(1), "end of stream comes after all the data");
        assertTrue(answered.await(10, TimeUnit.SECONDS));
        clientSide.inputShutdown.get(10, TimeUnit.SECONDS);
        serverSide.inactive.get(10, TimeUnit.SECONDS);
        assertEquals("pong", clientSide.text());
        // Both directions are shut; as with TCP, the channel stays open until closed, and the server's endpoint
        // going away after its close is no error.
        Thread.sleep(200);
        assertTrue(client.isOpen());
        assertTrue(client.isInputShutdown() && client.isOutputShutdown());
        client.close().sync();
        clientSide.inactive.get(10, TimeUnit.SECONDS);
        assertEquals(List.of("active", "inputShutdown:pong", "inputShutdownReadComplete", "inactive"),
                clientSide.events, "the client reads the answer, sees the server's close as end of stream");
        assertTrue(serverSide.events.getLast().equals("inactive"));
        assertTrue(serverSide.events.stream().noneMatch(e -> e.startsWith("exception")), serverSide.events::toString);
        server.close().sync();
    }

    @Test
    void shouldCloseOnEndOfStreamWithoutHalfClosure() throws Exception {
        EventLoopGroup group = group(2, TCP);
        Recorder serverSide = new Recorder();
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(serverSide), null);
        Channel client = client(group, ch -> { }).connect(server.localAddress()).sync().channel();
        client.writeAndFlush(ascii(client, "bye")).sync();
        client.close().sync();
        serverSide.inactive.get(10, TimeUnit.SECONDS);
        assertEquals("bye", serverSide.text(), "data sent before close arrives");
        assertEquals(List.of("active", "inactive"), serverSide.events, "a graceful close is no error");
        server.close().sync();
    }

    /**
     * A rendezvous message is complete only once the peer fetched its data: a close right after the write (the
     * write's promise completes when UCX takes the message) keeps its endpoint until then. Closed at once, as
     * before, the peer's fetch failed with an endpoint timeout and the data was lost.
     */
    @Test
    void shouldDeliverALargeWriteThatIsClosedBeforeThePeerFetchedIt() throws Exception {
        int size = 1 << 20;
        // UCX's choice by size: over tcp alone the transport would otherwise send the message eager
        UcxTransportConfig bySize = UcxTransportConfig.builder().config("TLS", "tcp,self")
                .dataProtocol(UcxTransportConfig.DataProtocol.BY_SIZE).build();
        EventLoopGroup serverGroup = group(1, bySize);
        EventLoopGroup clientGroup = group(1, bySize);
        CompletableFuture<Channel> child = new CompletableFuture<>();
        UcxServerSocketChannel server = server(serverGroup, serverGroup, ch -> child.complete(ch), null);
        Recorder clientSide = new Recorder();
        Channel client = client(clientGroup, ch -> ch.pipeline().addLast(clientSide))
                .connect(server.localAddress()).sync().channel();
        Channel accepted = child.get(10, TimeUnit.SECONDS);
        long rendezvous = UcxTransportStats.rendezvousReceived();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        client.eventLoop().execute(() -> {
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertTrue(held.await(10, TimeUnit.SECONDS));
            // The client's loop is held: the message's data can be fetched only once it runs again, after the close.
            accepted.writeAndFlush(accepted.alloc().directBuffer(size).writeZero(size)).sync();
            accepted.close().sync();
        } finally {
            release.countDown();
        }
        clientSide.inactive.get(20, TimeUnit.SECONDS);
        assertEquals(size, clientSide.text().length(), "what was written before close() arrives");
        assertTrue(UcxTransportStats.rendezvousReceived() > rendezvous, "the data came as a rendezvous message");
        assertEquals(List.of("active", "inactive"), clientSide.events, "a graceful close is no error");
        server.close().sync();
    }

    /**
     * A client's {@code bind()}, and the local address given to {@code connect}, bind the client's socket: the
     * accepted channel's remote address is that address, as with TCP; an address that cannot be bound fails the
     * connect.
     */
    @Test
    void shouldConnectFromTheBoundAddress() throws Exception {
        EventLoopGroup group = group(2, TCP);
        BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
        UcxServerSocketChannel server = server(group, group, accepted::add, null);
        for (boolean viaConnect : new boolean[] {false, true}) {
            int port;
            try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
                port = probe.getLocalPort(); // free a moment ago, bound by no one now
            }
            InetSocketAddress from = new InetSocketAddress(LOOPBACK, port);
            Channel client;
            if (viaConnect) {
                client = client(group, ch -> { }).connect(server.localAddress(), from).sync().channel();
            } else {
                client = client(group, ch -> { }).bind(from).sync().channel();
                assertEquals(from, client.localAddress(), "bound, before the connect");
                client.connect(server.localAddress()).sync();
            }
            Channel child = accepted.poll(10, TimeUnit.SECONDS);
            assertNotNull(child);
            assertEquals(from, client.localAddress());
            assertEquals(from, child.remoteAddress(), "the server sees the bound address");
            client.close().sync();
        }
        try (ServerSocket taken = new ServerSocket(0, 1, LOOPBACK)) {
            ChannelFuture f = client(group, ch -> { })
                    .connect(server.localAddress(), new InetSocketAddress(LOOPBACK, taken.getLocalPort()));
            assertTrue(f.await(10, TimeUnit.SECONDS), "a connect from an address in use ends");
            assertFalse(f.isSuccess(), "a connect from an address in use fails");
            assertInstanceOf(ConnectException.class, f.cause());
        }
        server.close().sync();
    }

    /**
     * A local address the transport cannot use is refused with a clear error: an unresolved one, and one that is not
     * an {@code InetSocketAddress}, by {@code bind()} itself; an IPv6 one by the connect that follows, with the
     * high-level API's message (as for an IPv6 remote address), because UCX binds the socket only when it connects.
     * The channel that failed to connect is closed, and the server stays usable.
     */
    @Test
    void shouldRefuseLocalAddressesItCannotUse() throws Exception {
        EventLoopGroup group = group(1, TCP);
        BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
        UcxServerSocketChannel server = server(group, group, accepted::add, null);

        ChannelFuture unresolved = client(group, ch -> { })
                .bind(InetSocketAddress.createUnresolved("no-such-host.invalid", 0)).await();
        assertInstanceOf(UnresolvedAddressException.class, unresolved.cause());
        ChannelFuture notInet = client(group, ch -> { }).bind(new SocketAddress() { }).await();
        assertInstanceOf(IllegalArgumentException.class, notInet.cause());

        Channel client = client(group, ch -> { })
                .bind(new InetSocketAddress(InetAddress.getByName("::1"), 0)).sync().channel();
        ChannelFuture connect = client.connect(server.localAddress()).await();
        assertFalse(connect.isSuccess(), "a connect from an IPv6 local address fails");
        Throwable cause = connect.cause();
        assertInstanceOf(IllegalArgumentException.class, cause);
        assertTrue(cause.getMessage().contains("local address") && cause.getMessage().contains("IPv6"),
                cause.getMessage());
        assertTrue(client.closeFuture().await(10, TimeUnit.SECONDS), "the failed channel is closed");

        Channel ok = client(group, ch -> { }).connect(server.localAddress()).sync().channel();
        assertNotNull(accepted.poll(10, TimeUnit.SECONDS), "the server still accepts");
        ok.close().sync();
        server.close().sync();
    }

    /**
     * An accepted channel answers its client's hello inside the worker's callback and becomes active after it: the
     * client's connect completes even when the accepted side's {@code channelActive} then holds its loop, and what
     * that {@code channelActive} writes goes out at once (the peer is known), as on a TCP connection the kernel
     * completed.
     */
    @Test
    void shouldCompleteTheConnectWhileTheAcceptedChannelHoldsItsLoopInChannelActive() throws Exception {
        EventLoopGroup serverGroup = group(1, TCP);
        EventLoopGroup clientGroup = group(1, TCP);
        CountDownLatch release = new CountDownLatch(1);
        List<Boolean> activeWhenActive = new CopyOnWriteArrayList<>();
        UcxServerSocketChannel server = server(serverGroup, serverGroup, ch -> ch.pipeline().addLast(
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) throws Exception {
                        activeWhenActive.add(ctx.channel().isActive());
                        ctx.writeAndFlush(ascii(ctx.channel(), "hello"));
                        release.await(); // the loop is held until the client read what was written above
                    }
                }), null);
        CompletableFuture<String> read = new CompletableFuture<>();
        try {
            ChannelFuture connect = client(clientGroup, ch -> ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    read.complete(((ByteBuf) msg).toString(StandardCharsets.US_ASCII));
                    ((ByteBuf) msg).release();
                }
            })).connect(server.localAddress());
            assertTrue(connect.await(10, TimeUnit.SECONDS), "the connect completes while the server's loop is held");
            assertTrue(connect.isSuccess(), () -> "connect failed: " + connect.cause());
            assertEquals("hello", read.get(10, TimeUnit.SECONDS),
                    "what channelActive wrote arrives while the loop is held");
        } finally {
            release.countDown();
        }
        assertEquals(List.of(true), activeWhenActive);
        server.close().sync();
    }

    /**
     * An accepted channel that closes in its {@code channelActive} (as a handler that fails there does): the client
     * is connected by then and sees the close as end of stream, as with TCP, not a failed connect.
     */
    @Test
    void shouldGiveEndOfStreamWhenTheAcceptedChannelClosesInChannelActive() throws Exception {
        EventLoopGroup group = group(2, TCP);
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        ctx.close();
                    }
                }), null);
        Recorder clientSide = new Recorder();
        Channel client = client(group, ch -> ch.pipeline().addLast(clientSide))
                .option(ChannelOption.ALLOW_HALF_CLOSURE, true).connect(server.localAddress()).sync().channel();
        clientSide.inputShutdown.get(10, TimeUnit.SECONDS);
        client.close().sync();
        clientSide.inactive.get(10, TimeUnit.SECONDS);
        assertEquals(List.of("active", "inputShutdown:", "inputShutdownReadComplete", "inactive"), clientSide.events);
        server.close().sync();
    }

    @Test
    void shouldRefuseAConnectionToAPortWithoutListener() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, LOOPBACK)) {
            port = s.getLocalPort(); // free once closed
        }
        EventLoopGroup group = group(1, TCP);
        ChannelFuture f = client(group, ch -> { }).connect(new InetSocketAddress(LOOPBACK, port)).await();
        assertInstanceOf(ConnectException.class, f.cause(), () -> String.valueOf(f.cause()));
        assertFalse(f.channel().isOpen());
    }

    @Test
    void shouldTimeOutAConnectionThatIsNeverAnswered() throws Exception {
        // A TCP listener that never speaks UCX: the kernel accepts the connection, nobody answers the handshake.
        try (ServerSocket silent = new ServerSocket(0, 8, LOOPBACK)) {
            EventLoopGroup group = group(1, TCP);
            long start = System.nanoTime();
            ChannelFuture f = client(group, ch -> { }).option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 300)
                    .connect(silent.getLocalSocketAddress()).await();
            assertInstanceOf(ConnectTimeoutException.class, f.cause(), () -> String.valueOf(f.cause()));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300));
            assertFalse(f.channel().isOpen());
        }
    }

    @Test
    void shouldFailUnsentWritesOnClose() throws Exception {
        UcxTransportConfig small = UcxTransportConfig.builder().config("TLS", "tcp,self").windowBytes(16 << 10)
                .maxMessageBytes(4 << 10).build();
        EventLoopGroup group = group(2, small);
        Recorder serverSide = new Recorder();
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(serverSide),
                b -> b.childOption(ChannelOption.AUTO_READ, false));
        Channel client = client(group, ch -> { }).connect(server.localAddress()).sync().channel();
        // More than the window with a reader that reads nothing: some writes stay in the outbound buffer.
        ChannelFuture last = client.eventLoop().submit(() -> {
            ChannelFuture w = null;
            for (int i = 0; i < 16; i++) {
                w = client.writeAndFlush(client.alloc().directBuffer(4096).writeZero(4096));
            }
            client.close();
            return w;
        }).get();
        assertInstanceOf(ClosedChannelException.class, last.await().cause(), "an unsent write fails on close");
        assertTrue(client.closeFuture().await(10, TimeUnit.SECONDS));
        server.close().sync();
    }

    @Test
    void shouldReportAPeerThatDiesAsIOExceptionThenInactive() throws Exception {
        // Two contexts (names differ): the endpoint of one is closed by force without a word to the other.
        EventLoopGroup serverGroup = group(1, UcxTransportConfig.builder().config("TLS", "tcp,self").name("a")
                .build());
        EventLoopGroup clientGroup = group(1, UcxTransportConfig.builder().config("TLS", "tcp,self").name("b")
                .build());
        AtomicReference<UcxSocketChannel> accepted = new AtomicReference<>();
        CountDownLatch active = new CountDownLatch(1);
        UcxServerSocketChannel server = server(serverGroup, serverGroup, ch -> {
            accepted.set((UcxSocketChannel) ch);
            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ((ByteBuf) msg).release();
                    active.countDown();
                }
            });
        }, null);
        Recorder clientSide = new Recorder();
        Channel client = client(clientGroup, ch -> ch.pipeline().addLast(clientSide)).connect(server.localAddress())
                .sync().channel();
        client.writeAndFlush(ascii(client, "hello")).sync();
        assertTrue(active.await(10, TimeUnit.SECONDS));
        UcxSocketChannel victim = accepted.get();
        victim.eventLoop().submit(victim::killEndpointForTest).sync();
        clientSide.inactive.get(30, TimeUnit.SECONDS);
        assertInstanceOf(IOException.class, clientSide.error.get(), () -> String.valueOf(clientSide.error.get()));
        assertEquals(List.of("active", "exception:IOException", "inactive"), clientSide.events);
        victim.close().sync();
        server.close().sync();
    }

    @Test
    void shouldWakeAnIdleLoopForATaskFromAnotherThread() throws Exception {
        EventLoopGroup group = group(1, TCP);
        EventLoop loop = group.next();
        // A channel registered, so that the loop has its worker and sleeps on its event descriptor.
        UcxServerSocketChannel server = server(group, group, ch -> { }, null);
        Thread loopThread = loop.submit(Thread::currentThread).get();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread.sleep(200);
        long cpuBefore = mx.getThreadCpuTime(loopThread.threadId());
        long worst = 0;
        for (int i = 0; i < 10; i++) {
            Thread.sleep(50); // idle: the loop sleeps (its poll timeout is Netty's one-second default)
            long start = System.nanoTime();
            loop.submit(() -> { }).get(5, TimeUnit.SECONDS);
            worst = Math.max(worst, System.nanoTime() - start);
        }
        long cpu = mx.getThreadCpuTime(loopThread.threadId()) - cpuBefore;
        // Without a wakeup the task would wait for the poll timeout (about a second); 500 ms leaves room for a
        // busy machine.
        assertTrue(worst < TimeUnit.MILLISECONDS.toNanos(500), "a task waited " + worst / 1_000_000 + " ms");
        assertTrue(cpu < TimeUnit.MILLISECONDS.toNanos(300), "an idle loop must sleep, used " + cpu / 1_000_000
                + " ms of CPU in about a second");
        assertNotNull(server.localAddress());
        server.close().sync();
    }

    @Test
    void shouldRefuseABindToABusyAddress() throws Exception {
        EventLoopGroup group = group(1, TCP);
        UcxServerSocketChannel first = server(group, group, ch -> { }, null);
        ExecutionException e = assertThrows(ExecutionException.class, () -> new io.netty.bootstrap.ServerBootstrap()
                .group(group).channel(UcxServerSocketChannel.class).childHandler(initializer(ch -> { }))
                .bind(first.localAddress()).get());
        assertInstanceOf(java.net.BindException.class, e.getCause());
        first.close().sync();
    }

    @Test
    void shouldReportAPeerProcessKilledAsIOExceptionThenInactive() throws Exception {
        try (ChildProcess peer = ChildProcess.java(EchoServerMain.class).name("echo server").start()) {
            int port = Integer.parseInt(peer.expect("PORT ", 30));
            EventLoopGroup group = group(1, TCP);
            Recorder clientSide = new Recorder();
            Channel client = client(group, ch -> ch.pipeline().addLast(clientSide))
                    .connect(new InetSocketAddress(LOOPBACK, port)).sync().channel();
            client.writeAndFlush(ascii(client, "are you there")).sync();
            awaitText(clientSide, "are you there"); // the peer process echoes
            peer.kill(); // SIGKILL: no close, no goodbye
            clientSide.inactive.get(40, TimeUnit.SECONDS);
            assertInstanceOf(IOException.class, clientSide.error.get(), () -> String.valueOf(clientSide.error.get()));
            assertEquals(List.of("active", "exception:IOException", "inactive"), clientSide.events);
        }
    }

    /**
     * A peer that is frozen (SIGSTOP), not dead: UCX reports nothing (its kernel still acknowledges TCP, its shared
     * memory stays mapped), as a kernel TCP socket reports nothing. What a Netty application relies on then must
     * hold: writes stop at the peer's window and the channel turns unwritable instead of queueing without bound, an
     * {@link IdleStateHandler} notices the silence, its {@code close()} completes and ends every write, and the
     * event loop goes on serving its other channels throughout (a close waits for the frozen peer only as long as its
     * bound, on the loop's own schedule).
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldCloseAChannelWhosePeerIsFrozenWithoutHoldingItsLoop(String kind) throws Exception {
        UcxTransportConfig config = kind.equals("shm") ? SHM : TCP;
        try (ChildProcess peer = ChildProcess.java(EchoServerMain.class).args(kind).name("echo server").start()) {
            int port = Integer.parseInt(peer.expect("PORT ", 30));
            EventLoopGroup group = group(1, config); // one loop: the frozen peer's channel and the other share it
            UcxServerSocketChannel local = server(group, group, ch -> ch.pipeline().addLast(new EchoTest.Echo()),
                    null);
            Recorder otherSide = new Recorder();
            Channel other = client(group, ch -> ch.pipeline().addLast(otherSide)).connect(local.localAddress())
                    .sync().channel();
            Recorder frozenSide = new Recorder();
            CompletableFuture<Void> idleAfterFreeze = new CompletableFuture<>();
            boolean[] frozen = new boolean[1]; // read and written on the loop
            Channel client = client(group, ch -> ch.pipeline().addLast(new IdleStateHandler(2, 0, 0),
                    new ChannelInboundHandlerAdapter() {
                        @Override
                        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                            if (evt instanceof IdleStateEvent && frozen[0]) {
                                idleAfterFreeze.complete(null);
                                ctx.close();
                            }
                        }
                    }, frozenSide)).connect(new InetSocketAddress(LOOPBACK, port)).sync().channel();
            client.writeAndFlush(ascii(client, "are you there")).sync();
            awaitText(frozenSide, "are you there");
            echoes(other, otherSide, "1");

            peer.stop();
            long window = config.windowBytes();
            long markHigh = client.config().getWriteBufferHighWaterMark();
            int chunk = 64 << 10;
            List<ChannelFuture> writes = new CopyOnWriteArrayList<>();
            long taken = client.eventLoop().submit(() -> {
                frozen[0] = true;
                long n = 0;
                while (client.isWritable() && n < 4 * (window + markHigh)) {
                    ByteBuf b = client.alloc().directBuffer(chunk);
                    b.writerIndex(chunk);
                    writes.add(client.writeAndFlush(b));
                    n += chunk;
                }
                return n;
            }).get(10, TimeUnit.SECONDS);
            assertFalse(client.isWritable(), "writes to a frozen peer must turn the channel unwritable");
            assertTrue(taken <= window + markHigh + chunk, "took " + taken + " bytes for a frozen peer with a window"
                    + " of " + window + " and a high water mark of " + markHigh);
            echoes(other, otherSide, "2"); // the loop serves its other channel while the first one is stuck

            idleAfterFreeze.get(20, TimeUnit.SECONDS); // 2 s after the last read, which came before the freeze
            frozenSide.inactive.get(10, TimeUnit.SECONDS);
            assertTrue(client.closeFuture().isSuccess());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (ChannelFuture w : writes) {
                assertTrue(w.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS),
                        "a write to the frozen peer never completed");
            }
            assertTrue(writes.stream().anyMatch(w -> !w.isSuccess()),
                    "the writes queued beyond the window must fail with the close");
            writes.stream().filter(w -> !w.isSuccess()).forEach(w ->
                    assertInstanceOf(ClosedChannelException.class, w.cause(), () -> String.valueOf(w.cause())));
            assertEquals(List.of("active", "inactive"), frozenSide.events, "closed by the application: no error");
            // Past the close's bound for flushing to the frozen peer, the loop still serves its other channel.
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(UcxIoHandler.CLOSE_FLUSH_NANOS) + 500);
            echoes(other, otherSide, "3");
            other.close().sync();
            local.close().sync();
        }
    }

    private static void awaitText(Recorder r, String expected) {
        Await.until(() -> "\"" + expected + "\" read, read so far: \"" + r.text() + "\"", Duration.ofSeconds(20),
                Await::pause, () -> r.text().equals(expected));
    }

    /** Sends {@code s} on {@code ch} and waits for its echo, after what {@code r} read before. */
    private static void echoes(Channel ch, Recorder r, String s) throws Exception {
        String before = r.text();
        ch.writeAndFlush(ascii(ch, s)).get(5, TimeUnit.SECONDS);
        awaitText(r, before + s);
    }

    @Test
    void shouldBehaveAsNettySocketChannelsForApplicationsWrittenForTcp() throws Exception {
        EventLoopGroup group = group(2, TCP);
        UcxServerSocketChannel server = server(group, group, ch -> { },
                b -> b.option(ChannelOption.SO_BACKLOG, 64).childOption(ChannelOption.TCP_NODELAY, false));
        assertInstanceOf(io.netty.channel.socket.ServerSocketChannel.class, server);
        assertEquals(64, server.config().getBacklog());
        CompletableFuture<io.netty.channel.socket.SocketChannel> child = new CompletableFuture<>();
        server.pipeline().addFirst(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                child.complete((io.netty.channel.socket.SocketChannel) msg);
                ctx.fireChannelRead(msg);
            }
        });
        io.netty.channel.socket.SocketChannel client = (io.netty.channel.socket.SocketChannel) client(group,
                ch -> { }).option(ChannelOption.SO_LINGER, 0).option(ChannelOption.SO_KEEPALIVE, true)
                .connect(server.localAddress()).sync().channel();
        assertEquals(0, client.config().getSoLinger());
        assertTrue(client.config().isKeepAlive());
        assertTrue(client.config().isTcpNoDelay(), "the default, as Netty's TCP channels have it");
        io.netty.channel.socket.SocketChannel accepted = child.get(10, TimeUnit.SECONDS);
        assertEquals(server, accepted.parent());
        assertFalse(accepted.config().isTcpNoDelay(), "childOption reaches the accepted channel");
        assertEquals(server.localAddress(), accepted.localAddress());
        assertEquals(LOOPBACK, accepted.remoteAddress().getAddress());
        assertEquals(server.localAddress(), client.remoteAddress());
        client.close().sync();
        server.close().sync();
    }

    @Test
    void shouldDropButCreditWhatArrivesAfterShutdownInput() throws Exception {
        UcxTransportConfig small = UcxTransportConfig.builder().config("TLS", "tcp,self").windowBytes(16 << 10)
                .maxMessageBytes(4 << 10).build();
        EventLoopGroup group = group(2, small);
        Recorder serverSide = new Recorder();
        CountDownLatch shut = new CountDownLatch(1);
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(serverSide)
                .addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        ((UcxSocketChannel) ctx.channel()).shutdownInput().addListener(f -> shut.countDown());
                    }
                }), b -> b.childOption(ChannelOption.AUTO_READ, false)); // not reading, and yet not holding back
        UcxSocketChannel client = (UcxSocketChannel) client(group, ch -> { }).connect(server.localAddress()).sync()
                .channel();
        assertTrue(shut.await(10, TimeUnit.SECONDS));
        int total = 64 << 10; // four windows: goes through only if the dropped bytes are credited
        client.writeAndFlush(client.alloc().directBuffer(total).writeZero(total)).sync();
        Await.until("all " + total + " bytes sent", Duration.ofSeconds(20), () -> client.bytesSent() >= total);
        assertEquals(total, client.bytesSent());
        assertEquals("", serverSide.text(), "nothing reaches a pipeline whose input is shut");
        client.close().sync();
        server.close().sync();
    }
}
