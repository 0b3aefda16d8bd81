package io.github.ucxffm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.github.ucxffm.testsupport.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A reader that does not read holds back the writer, whose memory stays bounded; reading again lets all through. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FlowControlTest extends UcxTestBase {

    private static final int WINDOW = 64 << 10;
    private static final int CHUNK = 16 << 10;
    private static final int HIGH = 128 << 10;

    /** The accepted side: its channel once active, and the bytes it read. */
    @io.netty.channel.ChannelHandler.Sharable
    static final class Reader extends ChannelInboundHandlerAdapter {
        final AtomicReference<Channel> channel = new AtomicReference<>();
        final CountDownLatch active = new CountDownLatch(1);
        final AtomicLong received = new AtomicLong();

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel.set(ctx.channel());
            active.countDown();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            received.addAndGet(((ByteBuf) msg).readableBytes());
            ((ByteBuf) msg).release();
        }
    }

    @Test
    void shouldStopTheWriterWhileTheReaderDoesNotRead() throws Exception {
        UcxTransportConfig config = UcxTransportConfig.builder().config("TLS", "tcp,self").windowBytes(WINDOW)
                .maxMessageBytes(CHUNK).build();
        EventLoopGroup group = group(2, config);
        Reader reader = new Reader();
        AtomicReference<Channel> accepted = reader.channel;
        AtomicLong received = reader.received;
        CountDownLatch acceptedLatch = reader.active;
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(reader),
                b -> b.childOption(ChannelOption.AUTO_READ, false));
        CompletableFuture<Void> unwritable = new CompletableFuture<>();
        Channel client = client(group, ch -> ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                if (!ctx.channel().isWritable()) {
                    unwritable.complete(null);
                }
            }
        })).option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(HIGH / 2, HIGH))
                .connect(server.localAddress()).sync().channel();
        assertTrue(acceptedLatch.await(10, TimeUnit.SECONDS));

        // Write as a well-behaved application does: while writable, from the loop.
        AtomicLong written = new AtomicLong();
        long maxPending = client.eventLoop().submit(() -> {
            long max = 0;
            while (client.isWritable()) {
                client.writeAndFlush(client.alloc().directBuffer(CHUNK).writeZero(CHUNK));
                written.addAndGet(CHUNK);
                max = Math.max(max, client.unsafe().outboundBuffer().totalPendingWriteBytes());
            }
            return max;
        }).get(10, TimeUnit.SECONDS);
        unwritable.get(10, TimeUnit.SECONDS);
        // Let the transport move what the window allows, then check that it stopped.
        Thread.sleep(500);
        UcxSocketChannel c = (UcxSocketChannel) client;
        long sent = c.bytesSent();
        assertTrue(sent <= WINDOW, "sent " + sent + " bytes with nothing read: more than the window " + WINDOW);
        assertEquals(WINDOW, sent, "the writer fills the window while the reader does not read");
        assertFalse(client.isWritable(), "the writer must stay unwritable while the reader reads nothing");
        assertEquals(0, received.get(), "autoRead off: nothing passed up");
        long pending = client.eventLoop().submit(() -> client.unsafe().outboundBuffer().totalPendingWriteBytes())
                .get();
        // Netty counts a small overhead per outbound entry besides the bytes.
        long unsent = written.get() - sent;
        assertTrue(pending >= unsent && pending <= unsent + 128 * (unsent / CHUNK),
                "what was not sent waits in the outbound buffer: " + pending + " pending for " + unsent + " unsent");
        assertTrue(maxPending <= HIGH + CHUNK, "outbound buffer bounded by the high water mark: " + maxPending);
        assertTrue(((UcxSocketChannel) accepted.get()).bytesReceived() <= WINDOW, "the reader holds one window");

        // Reading resumes: everything arrives, and the writer becomes writable again.
        accepted.get().config().setAutoRead(true);
        Await.until("everything written received", Duration.ofSeconds(20), () -> received.get() >= written.get());
        assertEquals(written.get(), received.get());
        assertTrue(client.eventLoop().submit(client::isWritable).get());
        client.close().sync();
        server.close().sync();
    }

    @Test
    void shouldTakeTheReceiveWindowFromSoRcvbuf() throws Exception {
        int rcvbuf = 32 << 10;
        EventLoopGroup group = group(2, UcxTransportConfig.builder().config("TLS", "tcp,self").maxMessageBytes(CHUNK)
                .build());
        Reader reader = new Reader();
        AtomicReference<Channel> accepted = reader.channel;
        CountDownLatch acceptedLatch = reader.active;
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(reader),
                b -> b.childOption(ChannelOption.AUTO_READ, false).childOption(ChannelOption.SO_RCVBUF, rcvbuf));
        Channel client = client(group, ch -> { }).connect(server.localAddress()).sync().channel();
        assertTrue(acceptedLatch.await(10, TimeUnit.SECONDS));
        for (int i = 0; i < 16; i++) {
            client.write(client.alloc().directBuffer(CHUNK).writeZero(CHUNK));
        }
        client.flush();
        Thread.sleep(500);
        assertEquals(rcvbuf, ((UcxSocketChannel) client).bytesSent(), "the accepted channel's SO_RCVBUF is its window");
        assertEquals(rcvbuf, accepted.get().config().getOption(ChannelOption.SO_RCVBUF));
        client.close().sync();
        server.close().sync();
    }
}
