package io.github.ucxffm.bench.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.FixedLengthFrameDecoder;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The Netty echo: a server that writes back whatever it reads, and a client that sends fixed-size messages (an
 * 8-byte sequence number, then {@link Payloads#pattern}) with a window of them outstanding, and checks every byte of
 * every echo.
 */
final class Echo {

    private Echo() {
    }

    /**
     * Starts the echo server.
     *
     * @param t       the transport
     * @param address where to listen
     * @return the listening channel
     * @throws InterruptedException if interrupted while binding
     */
    static Channel serve(NettyTransport t, InetSocketAddress address) throws InterruptedException {
        ServerBootstrap b = new ServerBootstrap().group(t.group()).channel(t.serverChannel())
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(ServerHandler.INSTANCE);
                    }
                });
        if (t.tcpSocket()) {
            b.childOption(ChannelOption.TCP_NODELAY, true);
        }
        return b.bind(address).sync().channel();
    }

    /** Writes back what it reads, flushing when a read is over. */
    @ChannelHandler.Sharable
    static final class ServerHandler extends ChannelInboundHandlerAdapter {
        static final ServerHandler INSTANCE = new ServerHandler();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /**
     * Connects an echo client.
     *
     * @param t       the transport
     * @param address the server
     * @param size    the message size, at least 8
     * @param window  messages outstanding
     * @param seconds how long the connection may take
     * @return the client
     * @throws Exception if it cannot connect
     */
    static Load connect(NettyTransport t, InetSocketAddress address, int size, int window, int seconds)
            throws Exception {
        Client client = new Client(size, window);
        Bootstrap b = new Bootstrap().group(t.group()).channel(t.channel()).handler(new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new FixedLengthFrameDecoder(size), client);
            }
        });
        if (t.tcpSocket()) {
            b.option(ChannelOption.TCP_NODELAY, true);
        }
        var f = b.connect(address);
        if (!f.await(seconds, TimeUnit.SECONDS)) {
            f.cancel(false);
            throw new IllegalStateException("no connection to the echo server at " + address + " within " + seconds
                    + " s");
        }
        f.sync();
        return client;
    }

    /** The client: confined to its channel's event loop, but for {@link #round} and {@link #close}. */
    static final class Client extends ChannelInboundHandlerAdapter implements Load {
        private final int size;
        private final int window;
        private final ByteBuf pattern;
        /** What follows the sequence number in every answer. */
        private final ByteBuffer expected;
        private final long[] sentAt;
        private ChannelHandlerContext ctx;
        // the round, on the event loop
        private CompletableFuture<Round> done;
        private Latencies latencies;
        private long nextSeq;
        private long expectSeq;
        private long sent;
        private long limit;
        private long deadline;
        private long start;
        private long answered;
        private boolean sending;

        Client(int size, int window) {
            if (size < 8) {
                throw new IllegalArgumentException("an echo message carries an 8-byte sequence number: size " + size
                        + " is too small");
            }
            this.size = size;
            this.window = window;
            byte[] bytes = Payloads.pattern(size);
            this.pattern = Unpooled.wrappedBuffer(bytes).asReadOnly();
            this.expected = ByteBuffer.wrap(bytes, 8, size - 8).slice().asReadOnlyBuffer();
            this.sentAt = new long[window];
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public CompletableFuture<Round> round(long count, long nanos, Latencies latencies) {
            CompletableFuture<Round> f = new CompletableFuture<>();
            ctx.executor().execute(() -> begin(f, count, nanos, latencies));
            return f;
        }

        private void begin(CompletableFuture<Round> f, long count, long nanos, Latencies l) {
            if (done != null) {
                f.completeExceptionally(new IllegalStateException("a round is running"));
                return;
            }
            if (!ctx.channel().isActive()) {
                f.completeExceptionally(new IllegalStateException("the echo connection is closed"));
                return;
            }
            done = f;
            latencies = l;
            limit = count;
            sent = 0;
            answered = 0;
            start = System.nanoTime();
            deadline = start + nanos;
            sending = true;
            for (int i = 0; i < window && sending; i++) {
                send(start);
            }
            ctx.flush();
        }

        private void send(long now) {
            ByteBuf b = ctx.alloc().directBuffer(size, size);
            b.writeLong(nextSeq);
            b.writeBytes(pattern, 8, size - 8);
            sentAt[(int) (nextSeq % window)] = now;
            nextSeq++;
            sent++;
            if (sent >= limit) {
                sending = false;
            }
            ctx.write(b, ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            long now = System.nanoTime();
            try {
                if (done == null) {
                    fail(new IllegalStateException("an echo came with no request outstanding"));
                    return;
                }
                int at = frame.readerIndex();
                long seq = frame.readableBytes() == size ? frame.getLong(at) : -1;
                // ByteBuffer.mismatch compares in vector-sized strides; ByteBufUtil.equals against the read-only
                // pattern went a long at a time through wrapper and reference-count checks (about 48 us per 64 KiB
                // answer here, a third of the client's CPU in the 64 KiB cells, whatever the transport)
                if (seq != expectSeq || frame.nioBuffer(at + 8, size - 8).mismatch(expected) != -1) {
                    fail(new IllegalStateException("echo " + expectSeq + " differs from what was sent (sequence "
                            + "number read: " + seq + ")"));
                    return;
                }
            } finally {
                frame.release();
            }
            if (latencies != null) {
                latencies.record(now - sentAt[(int) (expectSeq % window)]);
            }
            expectSeq++;
            answered++;
            if (sending && now - deadline >= 0) {
                sending = false;
            }
            if (sending) {
                send(now);
                if (window == 1) {
                    ctx.flush();
                }
            } else if (expectSeq == nextSeq) {
                CompletableFuture<Round> f = done;
                done = null;
                f.complete(new Round(answered, answered * size, now - start, answered));
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            fail(new IllegalStateException("the server closed the echo connection"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(cause);
            ctx.close();
        }

        private void fail(Throwable cause) {
            sending = false;
            CompletableFuture<Round> f = done;
            done = null;
            if (f != null) {
                f.completeExceptionally(cause);
            }
        }

        @Override
        public void close() {
            ctx.channel().close().awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
