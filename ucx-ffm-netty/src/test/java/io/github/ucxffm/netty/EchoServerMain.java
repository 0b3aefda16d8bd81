package io.github.ucxffm.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * A UCX echo server in a process of its own, for tests that kill or freeze it: prints {@code PORT <n>} once
 * listening, then serves until killed.
 */
public final class EchoServerMain {

    private EchoServerMain() {
    }

    /**
     * Runs the server.
     *
     * @param args {@code shm} for {@link UcxTestBase#SHM}'s settings; none (or {@code tcp}) for
     *             {@link UcxTestBase#TCP}'s
     * @throws Exception if it cannot listen
     */
    public static void main(String[] args) throws Exception {
        UcxTransportConfig config = args.length > 0 && args[0].equals("shm") ? UcxTestBase.SHM
                : UcxTestBase.TCP;
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, UcxIoHandler.newFactory(config));
        UcxServerSocketChannel server = (UcxServerSocketChannel) new ServerBootstrap().group(group)
                .channel(UcxServerSocketChannel.class).childHandler(new EchoTest.Echo())
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
        System.out.println("PORT " + server.localAddress().getPort());
        server.closeFuture().sync();
    }
}
