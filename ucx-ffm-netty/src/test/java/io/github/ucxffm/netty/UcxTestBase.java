package io.github.ucxffm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Event loop groups made per test and shut down after it, with the leak and UCX resource checks. */
abstract class UcxTestBase {

    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    static final UcxTransportConfig TCP = UcxTransportConfig.builder().config("TLS", "tcp,self").build();
    /** Shared memory first; peer error handling off, without which UCX 1.13 keeps shared memory out. */
    static final UcxTransportConfig SHM = UcxTransportConfig.builder().config("TLS", "sm,tcp,self")
            .name("shm").peerErrorHandling(false).build();

    private final List<EventLoopGroup> groups = new ArrayList<>();

    @BeforeEach
    void startLeakCheck() {
        LeakCheck.start();
    }

    @AfterEach
    void shutDownAndCheck() throws Exception {
        for (EventLoopGroup g : groups) {
            g.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        }
        for (EventLoopGroup g : groups) {
            assertTrue(g.terminationFuture().await(20, TimeUnit.SECONDS), "event loops did not terminate");
        }
        groups.clear();
        assertEquals(0, UcxIoHandler.openContexts(), "every UCX context is closed with its last event loop");
        assertEquals(List.of(), LeakCheck.collect(), "Netty reported leaked buffers");
    }

    EventLoopGroup group(int threads, UcxTransportConfig config) {
        EventLoopGroup g = new MultiThreadIoEventLoopGroup(threads, UcxIoHandler.newFactory(config));
        groups.add(g);
        return g;
    }

    /** A server on a loopback port chosen by the system; asserts the port is reported. */
    UcxServerSocketChannel server(EventLoopGroup boss, EventLoopGroup children, Consumer<Channel> init,
                                  Consumer<ServerBootstrap> options) throws InterruptedException {
        ServerBootstrap b = new ServerBootstrap().group(boss, children).channel(UcxServerSocketChannel.class)
                .childHandler(initializer(init));
        if (options != null) {
            options.accept(b);
        }
        UcxServerSocketChannel s = (UcxServerSocketChannel) b.bind(new InetSocketAddress(LOOPBACK, 0)).sync()
                .channel();
        assertNotEquals(0, s.localAddress().getPort(), "port 0 must be replaced by the bound port");
        return s;
    }

    Bootstrap client(EventLoopGroup group, Consumer<Channel> init) {
        return new Bootstrap().group(group).channel(UcxSocketChannel.class).handler(initializer(init));
    }

    static ChannelHandler initializer(Consumer<Channel> init) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                init.accept(ch);
            }
        };
    }
}
