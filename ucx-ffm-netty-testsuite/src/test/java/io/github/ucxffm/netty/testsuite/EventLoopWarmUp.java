package io.github.ucxffm.netty.testsuite;

import io.github.ucxffm.netty.UcxServerSocketChannel;
import io.github.ucxffm.netty.UcxSocketChannel;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Starts the testsuite's event loops and makes one echo round trip over them when the test JVM's JUnit session
 * opens, before any test runs.
 * <p>
 * Many testsuite methods have a 3-second timeout. The first of a JVM would otherwise also pay for starting the loops
 * (each creates its UCX worker, the first one the UCX context: UCX reads its configuration and opens its transports)
 * and for the first connection through UCX's connection manager, with the JIT compilers still cold: about 2 s on an
 * idle 2-core machine, past 3 s on a loaded one, where that first method then failed on time alone. Epoll's loops
 * cost nothing of the kind. A warm-up that fails is reported and leaves the tests to fail with their own messages.
 */
public final class EventLoopWarmUp implements LauncherSessionListener {

    private static final long TIMEOUT_SECONDS = 60;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        long start = System.nanoTime();
        try {
            warmUp();
            System.out.printf("EventLoopWarmUp: UCX event loops started and one echo made in %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        } catch (Exception e) {
            System.err.println("EventLoopWarmUp: the warm-up of the UCX event loops failed: " + e);
        }
    }

    private static void warmUp() throws Exception {
        startLoops(UcxSocketTestPermutation.BOSS_GROUP);
        startLoops(UcxSocketTestPermutation.WORKER_GROUP);
        Channel server = new ServerBootstrap()
                .group(UcxSocketTestPermutation.BOSS_GROUP, UcxSocketTestPermutation.WORKER_GROUP)
                .channel(UcxServerSocketChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ctx.writeAndFlush(msg);
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        try {
            CompletableFuture<Integer> echoed = new CompletableFuture<>();
            Channel client = new Bootstrap().group(UcxSocketTestPermutation.WORKER_GROUP)
                    .channel(UcxSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            try {
                                echoed.complete(((ByteBuf) msg).readableBytes());
                            } finally {
                                ReferenceCountUtil.release(msg);
                            }
                        }
                    })
                    .connect(server.localAddress()).sync().channel();
            try {
                client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {42})).sync();
                if (echoed.get(TIMEOUT_SECONDS, TimeUnit.SECONDS) != 1) {
                    throw new IllegalStateException("the echo came back with another length");
                }
            } finally {
                client.close().sync();
            }
        } finally {
            server.close().sync();
        }
    }

    /** Runs a task on every loop of the group: each loop's thread starts and makes its UCX worker. */
    private static void startLoops(EventLoopGroup group) throws Exception {
        for (EventExecutor loop : group) {
            loop.submit(() -> { }).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }
}
