package io.github.ucxffm.samples;

import io.github.ucxffm.netty.UcxServerSocketChannel;
import io.github.ucxffm.netty.UcxSocketChannel;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Promise;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Echo over the UCX Netty transport: a plain Netty server that writes back what it reads, and a client that sends
 * {@code --size} bytes, waits for all of them to come back, checks them and sends the next, {@code --warmup} +
 * {@code --iterations} times; it prints the round-trip latencies and the transport's counters. Both are ordinary Netty
 * code; only the event loop group ({@code UcxIoHandler}) and the channel classes say UCX.
 * <p>
 * Wire protocol: none beyond the bytes; ping byte {@code i} of every round is {@code (byte) (i * 31 + 7)}. The
 * server serves {@code --clients} clients (default 1; 0: until stopped).
 */
final class NettyEcho {

    private static final String NAME = "netty-echo";

    private NettyEcho() {
    }

    static void run(String[] args) {
        SampleOptions options = SampleOptions.parse(64, 10_000, 1_000, args);
        if (options.size() < 1) {
            throw SampleException.usage("--size must be at least 1 byte for an echo");
        }
        if (options.server()) {
            serve(options);
        } else {
            ping(options);
        }
    }

    private static void serve(SampleOptions options) {
        EventLoopGroup group = NettyTransport.group(options, 2, NAME);
        try {
            AtomicInteger gone = new AtomicInteger();
            Channel[] listener = new Channel[1];
            ServerBootstrap bootstrap = new ServerBootstrap().group(group).channel(UcxServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            System.out.println(NAME + ": client connected from " + ch.remoteAddress());
                            ch.pipeline().addLast(new Echo());
                            ch.closeFuture().addListener(f -> {
                                int n = gone.incrementAndGet();
                                if (options.clients() > 0 && n >= options.clients()) {
                                    listener[0].close();
                                }
                            });
                        }
                    });
            ChannelFuture bound = bootstrap.bind(options.host(), options.port()).awaitUninterruptibly();
            if (!bound.isSuccess()) {
                throw SampleException.failed("cannot listen on port " + options.port() + " (" + bound.cause() + ")");
            }
            listener[0] = bound.channel();
            System.out.println(NAME + ": listening on " + bound.channel().localAddress().toString().replaceFirst(
                    "^/", ""));
            listener[0].closeFuture().awaitUninterruptibly();
            System.out.println(NAME + ": served " + gone.get() + " client" + (gone.get() == 1 ? "" : "s"));
            System.out.println(NettyTransport.counters());
        } finally {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    /** Writes back what it reads; flushes once per read burst. */
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            System.out.println(NAME + ": client " + ctx.channel().remoteAddress() + " failed: " + cause);
            ctx.close();
        }
    }

    private static void ping(SampleOptions options) {
        EventLoopGroup group = NettyTransport.group(options, 1, NAME + "-client");
        try {
            PingPong pingPong = new PingPong(options);
            ChannelFuture connected = new Bootstrap().group(group).channel(UcxSocketChannel.class).handler(pingPong)
                    .connect(options.serverAddress());
            if (!connected.awaitUninterruptibly(SampleConfig.STEP_TIMEOUT_MILLIS)) {
                throw SampleException.failed("cannot reach " + options.host() + ":" + options.port() + " within "
                        + SampleConfig.STEP_TIMEOUT_MILLIS / 1000 + " s");
            }
            if (!connected.isSuccess()) {
                throw SampleException.failed("cannot reach " + options.host() + ":" + options.port() + " ("
                        + connected.cause() + ")");
            }
            pingPong.await();
            pingPong.report.print(NAME, options.size(), NettyTransport.transports(options));
            System.out.println(NAME + ": " + options.iterations() + " echoes of " + options.size()
                    + " bytes verified");
            System.out.println(NettyTransport.counters());
            connected.channel().close().awaitUninterruptibly();
        } finally {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    /** The client's side: runs the rounds on the event loop, one ping in flight. */
    private static final class PingPong extends ChannelInboundHandlerAdapter {
        final LatencyReport report = new LatencyReport();
        private final Promise<Void> done = new DefaultPromise<>(GlobalEventExecutor.INSTANCE);
        private final long warmup;
        private final long total;
        private final int size;
        private final ByteBuf ping;
        private ByteBuf pong;
        private volatile long round;
        private long sentAt;

        PingPong(SampleOptions options) {
            this.warmup = options.warmup();
            this.total = options.warmup() + options.iterations();
            this.size = (int) options.size();
            byte[] bytes = new byte[size];
            for (int i = 0; i < size; i++) {
                bytes[i] = (byte) (i * 31 + 7);
            }
            this.ping = Unpooled.unreleasableBuffer(Unpooled.directBuffer(size).writeBytes(bytes));
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            pong = ctx.alloc().buffer(size);
            send(ctx);
        }

        private void send(ChannelHandlerContext ctx) {
            if (round == warmup) {
                report.start();
            }
            sentAt = System.nanoTime();
            ctx.writeAndFlush(ping.duplicate());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                if (in.readableBytes() > size - pong.readableBytes()) {
                    done.tryFailure(SampleException.failed("the server sent more than it was sent"));
                    ctx.close();
                    return;
                }
                pong.writeBytes(in);
            } finally {
                in.release();
            }
            if (pong.readableBytes() < size) {
                return;
            }
            long now = System.nanoTime();
            if (round >= warmup) {
                report.record(now - sentAt);
            }
            if (!ByteBufUtil.equals(pong, ping)) {
                done.tryFailure(SampleException.failed("round " + round + ": the echo differs from what was sent"));
                ctx.close();
                return;
            }
            pong.clear();
            round++;
            if (round == total) {
                report.stop();
                done.trySuccess(null);
            } else {
                send(ctx);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (pong != null) {
                pong.release();
            }
            done.tryFailure(SampleException.failed("the server went away after " + round + " round trips"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.tryFailure(SampleException.failed("the connection failed: " + cause));
            ctx.close();
        }

        /** Waits for the last round; fails when no round completes within the step timeout. */
        void await() {
            long seen = -1;
            while (!done.awaitUninterruptibly(SampleConfig.STEP_TIMEOUT_MILLIS)) {
                if (round == seen) {
                    throw SampleException.failed("no echo from the server within "
                            + SampleConfig.STEP_TIMEOUT_MILLIS / 1000 + " s");
                }
                seen = round;
            }
            if (!done.isSuccess()) {
                throw done.cause() instanceof SampleException e ? e
                        : SampleException.failed(String.valueOf(done.cause()));
            }
        }
    }
}
