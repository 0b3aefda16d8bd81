package io.github.ucxffm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A channel's reads are read loops of its {@code RecvByteBufAllocator}, as a TCP channel's are. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadLoopTest extends UcxTestBase {

    private static final int CHUNK = 16 << 10;

    /** An allocator whose handles record the bytes of each read loop, at its {@code readComplete()}. */
    static final class RecordingAllocator implements RecvByteBufAllocator {
        final RecvByteBufAllocator allocator;
        final List<Integer> loops = new CopyOnWriteArrayList<>();

        RecordingAllocator(RecvByteBufAllocator allocator) {
            this.allocator = allocator;
        }

        @Override
        @SuppressWarnings("deprecation") // Handle is what the channel's unsafe works with
        public Handle newHandle() {
            return new DelegatingHandle(allocator.newHandle()) {
                private int bytes;

                @Override
                public void reset(ChannelConfig config) {
                    bytes = 0;
                    super.reset(config);
                }

                @Override
                public void lastBytesRead(int n) {
                    bytes += Math.max(0, n);
                    super.lastBytesRead(n);
                }

                @Override
                public void readComplete() {
                    loops.add(bytes);
                    super.readComplete();
                }
            };
        }
    }

    /**
     * Credit and other events that reach a channel with nothing to read run no read loop: an empty loop would tell
     * an adaptive allocator "0 bytes read" and shrink its guess, cutting later messages into smaller reads (which
     * made a traffic-shaping reader see one step's writes in several reads).
     */
    @Test
    @SuppressWarnings("deprecation") // RCVBUF_ALLOCATOR: the option the channel's read loop follows
    void shouldRunNoReadLoopWhenNothingArrived() throws Exception {
        int total = 1 << 20;
        EventLoopGroup group = group(2, UcxTransportConfig.builder().config("TLS", "tcp,self").windowBytes(4 * CHUNK)
                .maxMessageBytes(CHUNK).build());
        RecordingAllocator recording = new RecordingAllocator(new io.netty.channel.AdaptiveRecvByteBufAllocator());
        CompletableFuture<Integer> lastByte = new CompletableFuture<>();
        CompletableFuture<Channel> child = new CompletableFuture<>();
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        // many window-sized rounds to the client: its credit comes back to this channel
                        for (int sent = 0; sent < total; sent += CHUNK) {
                            ctx.write(ctx.alloc().directBuffer(CHUNK).writeZero(CHUNK));
                        }
                        ctx.flush();
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf b = (ByteBuf) msg;
                        child.complete(ctx.channel());
                        lastByte.complete((int) b.getByte(b.readerIndex()));
                        b.release();
                    }
                }), b -> b.childOption(ChannelOption.RCVBUF_ALLOCATOR, recording));
        AtomicInteger received = new AtomicInteger();
        Channel client = client(group, ch -> ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf b = (ByteBuf) msg;
                if (received.addAndGet(b.readableBytes()) == total) {
                    ctx.writeAndFlush(ctx.alloc().directBuffer(1).writeByte(7)); // the one read of the server
                }
                b.release();
            }
        })).connect(server.localAddress()).sync().channel();

        assertEquals(7, lastByte.get(20, TimeUnit.SECONDS));
        assertEquals(total, received.get());
        assertTrue(((UcxSocketChannel) client).bytesReceived() >= total);
        // checked on the child's loop, after the read loop that passed the byte up
        List<Integer> loops = child.get().eventLoop().submit(() -> List.copyOf(recording.loops))
                .get(10, TimeUnit.SECONDS);
        assertFalse(loops.isEmpty(), "the byte was read in a read loop");
        assertEquals(List.of(), loops.stream().filter(n -> n == 0).toList(),
                "read loops that read nothing, of " + loops);
        client.close().sync();
        server.close().sync();
    }

    /** Turning {@code AUTO_READ} off in {@code channelRead} ends the read loop: what is left waits for read(). */
    @Test
    @SuppressWarnings("deprecation") // RCVBUF_ALLOCATOR
    void shouldEndTheReadLoopWhenAutoReadIsTurnedOff() throws Exception {
        int piece = 1024;
        EventLoopGroup group = group(2, TCP);
        List<Integer> reads = new CopyOnWriteArrayList<>();
        CompletableFuture<Channel> firstRead = new CompletableFuture<>();
        CompletableFuture<Void> all = new CompletableFuture<>();
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf b = (ByteBuf) msg;
                        reads.add(b.readableBytes());
                        b.release();
                        ctx.channel().config().setAutoRead(false);
                        firstRead.complete(ctx.channel());
                        if (reads.size() == 4) {
                            all.complete(null);
                        }
                    }
                }), b -> b.childOption(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(piece)));
        Channel client = client(group, ch -> { }).connect(server.localAddress()).sync().channel();
        client.writeAndFlush(client.alloc().directBuffer(4 * piece).writeZero(4 * piece)).sync();

        Channel child = firstRead.get(10, TimeUnit.SECONDS);
        // A task on the child's loop runs after the read loop that turned AUTO_READ off: by then one read, no more.
        assertEquals(List.of(piece), child.eventLoop().submit(() -> List.copyOf(reads)).get(10, TimeUnit.SECONDS));
        for (int i = 1; i < 4; i++) {
            int expected = i + 1;
            child.eventLoop().execute(child::read); // one read() asked: one read loop, which stops after one piece
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (reads.size() < expected && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(expected, child.eventLoop().submit(reads::size).get(10, TimeUnit.SECONDS),
                    "one read() gives one read loop: " + reads);
        }
        all.get(10, TimeUnit.SECONDS);
        assertEquals(List.of(piece, piece, piece, piece), reads);
        client.close().sync();
        server.close().sync();
    }
}
