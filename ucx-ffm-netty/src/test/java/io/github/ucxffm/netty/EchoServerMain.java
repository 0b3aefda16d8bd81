package io.github.ucxffm.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * A UCX echo server in a process of its own, for tests that kill it: prints {@code PORT <n>} once listening, then
 * serves until killed.
 */
public final class EchoServerMain {

    private EchoServerMain() {
    }

    /**
     * Runs the server.
     *
     * @param args none
     * @throws Exception if it cannot listen
     */
    public static void main(String[] args) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, UcxIoHandler.newFactory(UcxTestBase.TCP));
        UcxServerSocketChannel server = (UcxServerSocketChannel) new ServerBootstrap().group(group)
                .channel(UcxServerSocketChannel.class).childHandler(new EchoTest.Echo())
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
        System.out.println("PORT " + server.localAddress().getPort());
        server.closeFuture().sync();
    }
}
