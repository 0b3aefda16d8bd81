package io.github.ucxffm.netty;

import io.github.ucxffm.testsupport.Await;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bytes written on one side arrive, in order and intact, on the other, through UCX. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EchoTest extends UcxTestBase {

    /** Echoes what it reads. */
    static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    /** Checks what arrives against the bytes expected, and completes when all came. */
    static final class Expect extends ChannelInboundHandlerAdapter {
        final byte[] expected;
        final CompletableFuture<Long> done = new CompletableFuture<>();
        long received;
        int reads;

        Expect(byte[] expected) {
            this.expected = expected;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                reads++;
                // One bulk read: at PARANOID level every single-byte access would record a stack trace.
                byte[] got = new byte[b.readableBytes()];
                b.readBytes(got);
                if (received + got.length > expected.length) {
                    done.completeExceptionally(new AssertionError("more bytes than sent: " + (received + got.length)));
                    return;
                }
                int at = (int) received;
                int diff = Arrays.mismatch(got, 0, got.length, expected, at, at + got.length);
                if (diff >= 0) {
                    done.completeExceptionally(new AssertionError("byte " + (received + diff) + " differs"));
                    return;
                }
                received += got.length;
                if (received == expected.length) {
                    done.complete(received);
                }
            } finally {
                b.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
        }
    }

    private static final Set<String> SHARED_MEMORY = Set.of("posix", "sysv", "cma", "xpmem", "knem");

    static byte[] pattern(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Echoes {@code payload} in writes of {@code chunk}; returns the transports of the client's endpoint. */
    private Set<String> echo(UcxTransportConfig config, byte[] payload, int chunk) throws Exception {
        // The listener's loop is not the child's: the connection is accepted on another worker than the listener's.
        EventLoopGroup boss = group(1, config);
        EventLoopGroup group = group(2, config);
        UcxServerSocketChannel server = server(boss, group, ch -> ch.pipeline().addLast(new Echo()), null);
        Expect expect = new Expect(payload);
        long sentBefore = UcxTransportStats.bytesSent();
        long openedBefore = UcxTransportStats.channelsOpened();
        Channel client = client(group, ch -> ch.pipeline().addLast(expect)).connect(server.localAddress()).sync()
                .channel();
        assertTrue(client.isActive());
        assertEquals(server.localAddress(), client.remoteAddress());
        for (int off = 0; off < payload.length; off += chunk) {
            int n = Math.min(chunk, payload.length - off);
            ByteBuf b = client.alloc().directBuffer(n).writeBytes(payload, off, n);
            client.write(b);
            if ((off / chunk) % 16 == 15) {
                client.flush();
            }
        }
        client.flush();
        assertEquals(payload.length, expect.done.get(40, TimeUnit.SECONDS));
        UcxSocketChannel c = (UcxSocketChannel) client;
        assertEquals(payload.length, c.bytesSent());
        assertEquals(payload.length, c.bytesReceived());
        assertTrue(c.messagesReceived() > 0 && c.messagesReceived() <= c.bytesReceived());
        // the server's loop counts its echo once its send call has returned, which may be after the echo arrived
        Await.until("both directions to go through UCX active messages", Duration.ofSeconds(10),
                () -> UcxTransportStats.bytesSent() - sentBefore >= 2L * payload.length);
        assertEquals(2, UcxTransportStats.channelsOpened() - openedBefore);
        Set<String> transports = client.eventLoop().submit(c::transports).get();
        client.close().sync();
        server.close().sync();
        return transports;
    }

    @Test
    void shouldEchoOverTcp() throws Exception {
        Set<String> transports = echo(TCP, pattern(100_000, 1), 1000);
        assertTrue(transports.contains("tcp"), "UCX_TLS=tcp: " + transports);
    }

    @Test
    void shouldEchoOverSharedMemory() throws Exception {
        Set<String> transports = echo(SHM, pattern(300_000, 2), 10_000);
        assertTrue(transports.stream().anyMatch(SHARED_MEMORY::contains), "shared memory lanes: " + transports);
    }

    @Test
    void shouldCarryLargeWritesInOrderAndIntact() throws Exception {
        // 6 MiB in writes of 3 MiB against a 2 MiB window and 512 KiB messages: rendezvous fetches racing eager
        // messages on the same endpoint, credit stalls, and buffers cut across messages.
        UcxTransportConfig config = UcxTransportConfig.builder().config("TLS", "tcp,self").windowBytes(2 << 20)
                .maxMessageBytes(512 << 10).dataProtocol(UcxTransportConfig.DataProtocol.BY_SIZE).build();
        byte[] payload = pattern(6 << 20, 3);
        EchoSeen echo = echoWrites(config, payload, client -> {
            int half = payload.length / 2;
            client.write(client.alloc().directBuffer(half).writeBytes(payload, 0, half));
            client.writeAndFlush(Unpooled.wrappedBuffer(payload, half, payload.length - half)); // heap: copied once
        });
        assertTrue(echo.rendezvous() > 0, "messages of 512 KiB go by rendezvous");
    }

    /**
     * Over UCX's tcp transport alone the automatic choice sends every data message eager: 512 KiB messages arrive
     * with no rendezvous, in order and intact, and the client's connection reports tcp lanes only. A protocol forced
     * to {@code EAGER} does the same over shared memory, whose automatic choice is UCX's by size.
     */
    @Test
    void shouldSendDataEagerOverTcpAloneOrWhenTold() throws Exception {
        UcxTransportConfig tcp = UcxTransportConfig.builder().config("TLS", "tcp").name("tcp-eager")
                .windowBytes(2 << 20).maxMessageBytes(512 << 10).build();
        assertEquals(UcxTransportConfig.DataProtocol.AUTOMATIC, tcp.dataProtocol());
        EchoSeen overTcp = largeEcho(tcp);
        assertEquals(0, overTcp.rendezvous(), "no rendezvous over tcp alone");
        assertTrue(UcxSocketChannel.tcpAlone(overTcp.transports()), "lanes " + overTcp.transports());

        UcxTransportConfig shmEager = UcxTransportConfig.builder().config("TLS", "sm,tcp,self").name("shm-eager")
                .peerErrorHandling(false).maxMessageBytes(512 << 10)
                .dataProtocol(UcxTransportConfig.DataProtocol.EAGER).build();
        EchoSeen told = largeEcho(shmEager);
        assertEquals(0, told.rendezvous(), "no rendezvous when told eager");
        assertFalse(UcxSocketChannel.tcpAlone(told.transports()), "lanes " + told.transports());

        UcxTransportConfig shmAuto = UcxTransportConfig.builder().config("TLS", "sm,tcp,self").name("shm-auto")
                .peerErrorHandling(false).maxMessageBytes(512 << 10).build();
        EchoSeen overShm = largeEcho(shmAuto);
        assertTrue(overShm.rendezvous() > 0, "rendezvous over shared memory by default");
        assertFalse(UcxSocketChannel.tcpAlone(overShm.transports()), "lanes " + overShm.transports());
    }

    /**
     * Over shared memory the automatic protocol sends a data message of up to 256 KiB eager, where UCX's own
     * threshold would fetch it by rendezvous: a 200,000-byte write comes back with no rendezvous; a 600,000-byte one
     * still goes by rendezvous; with the limit set to 0 the 200,000 bytes go by rendezvous too (UCX's threshold over
     * shared memory is below that on every release in the matrix).
     */
    @Test
    void shouldSendDataEagerOverSharedMemoryUpToItsLimit() throws Exception {
        UcxTransportConfig shm = UcxTransportConfig.builder().config("TLS", "sm,tcp,self").name("shm-eager-limit")
                .peerErrorHandling(false).build();
        byte[] small = pattern(200_000, 17);
        EchoSeen eager = echoWrites(shm, small,
                client -> client.writeAndFlush(client.alloc().directBuffer(small.length).writeBytes(small)));
        assertFalse(UcxSocketChannel.tcpAlone(eager.transports()), "lanes " + eager.transports());
        assertTrue(eager.transports().stream().anyMatch(SHARED_MEMORY::contains), "lanes " + eager.transports());
        assertEquals(1, eager.messagesSent());
        assertEquals(0, eager.rendezvous(), "200,000 bytes eager over shared memory");

        byte[] large = pattern(600_000, 19);
        EchoSeen fetched = echoWrites(shm, large,
                client -> client.writeAndFlush(client.alloc().directBuffer(large.length).writeBytes(large)));
        assertEquals(1, fetched.messagesSent());
        assertEquals(2, fetched.rendezvous(), "600,000 bytes by rendezvous each way");

        UcxTransportConfig none = UcxTransportConfig.builder().config("TLS", "sm,tcp,self").name("shm-eager-none")
                .peerErrorHandling(false).sharedMemoryEagerBytes(0).build();
        EchoSeen bySize = echoWrites(none, small,
                client -> client.writeAndFlush(client.alloc().directBuffer(small.length).writeBytes(small)));
        assertEquals(2, bySize.rendezvous(), "200,000 bytes by rendezvous each way when UCX chooses");
    }

    /**
     * Over tcp alone, where data goes eager, a write larger than one of UCX's tcp segments is cut into messages that
     * each fit one ({@link UcxTransportConfig#tcpMessageBytes()}), so that UCX sends and delivers each in one piece
     * rather than reassembling it in memory of its own: 300,000 bytes go as three messages of at most 130,560 bytes
     * with the transport's 128K segments, and come back in order and intact. Over shared memory, and over tcp when
     * UCX chooses the protocol by size, the same write is one message.
     */
    @Test
    void shouldCutEagerWritesOverTcpIntoMessagesOfOneUcxSegment() throws Exception {
        byte[] payload = pattern(300_000, 13);
        UcxTransportConfig tcp = UcxTransportConfig.builder().config("TLS", "tcp").name("tcp-cut").build();
        int cut = tcp.tcpMessageBytes();
        EchoSeen overTcp = echoWrites(tcp, payload,
                client -> client.writeAndFlush(client.alloc().directBuffer(payload.length).writeBytes(payload)));
        assertTrue(UcxSocketChannel.tcpAlone(overTcp.transports()), "lanes " + overTcp.transports());
        assertEquals(cut, overTcp.messageLimit(), "the connection's largest message");
        assertEquals((payload.length + cut - 1) / cut, overTcp.messagesSent(), "messages of " + cut + " bytes");
        assertEquals(0, overTcp.rendezvous());

        UcxTransportConfig shm = UcxTransportConfig.builder().config("TLS", "sm,tcp,self").name("shm-cut")
                .peerErrorHandling(false).dataProtocol(UcxTransportConfig.DataProtocol.EAGER).build();
        EchoSeen overShm = echoWrites(shm, payload,
                client -> client.writeAndFlush(client.alloc().directBuffer(payload.length).writeBytes(payload)));
        assertFalse(UcxSocketChannel.tcpAlone(overShm.transports()), "lanes " + overShm.transports());
        assertEquals(shm.maxMessageBytes(), overShm.messageLimit());
        assertEquals(1, overShm.messagesSent(), "one message over shared memory");

        UcxTransportConfig bySize = UcxTransportConfig.builder().config("TLS", "tcp").name("tcp-by-size")
                .dataProtocol(UcxTransportConfig.DataProtocol.BY_SIZE).build();
        EchoSeen tcpBySize = echoWrites(bySize, payload,
                client -> client.writeAndFlush(client.alloc().directBuffer(payload.length).writeBytes(payload)));
        assertEquals(1, tcpBySize.messagesSent(), "one message when UCX chooses (rendezvous)");
    }

    /**
     * What {@link #echoWrites} saw: the rendezvous receives it took, the client connection's lanes, the data messages
     * the client sent, how many of them it sent from a copy of their gathered pieces, and its largest message.
     */
    private record EchoSeen(long rendezvous, Set<String> transports, long messagesSent, long gathersCopied,
                            int messageLimit) {
    }

    /** Echoes 3 MiB, written and flushed at once, over {@code config}. */
    private EchoSeen largeEcho(UcxTransportConfig config) throws Exception {
        byte[] payload = pattern(3 << 20, 5);
        return echoWrites(config, payload,
                client -> client.writeAndFlush(client.alloc().directBuffer(payload.length).writeBytes(payload)));
    }

    /** Echoes {@code payload}, which {@code write} writes and flushes on the client, and checks what comes back. */
    private EchoSeen echoWrites(UcxTransportConfig config, byte[] payload, Consumer<Channel> write) throws Exception {
        EventLoopGroup group = group(2, config);
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(new Echo()), null);
        Expect expect = new Expect(payload);
        Channel client = client(group, ch -> ch.pipeline().addLast(expect)).connect(server.localAddress()).sync()
                .channel();
        long rendezvousBefore = UcxTransportStats.rendezvousReceived();
        write.accept(client);
        assertEquals(payload.length, expect.done.get(40, TimeUnit.SECONDS));
        long rendezvous = UcxTransportStats.rendezvousReceived() - rendezvousBefore;
        UcxSocketChannel c = (UcxSocketChannel) client;
        EchoSeen seen = client.eventLoop().submit(() -> new EchoSeen(rendezvous, c.transports(), c.messagesSent(),
                c.gathersCopied(), c.messageLimit())).get();
        client.close().sync();
        server.close().sync();
        return seen;
    }

    /**
     * Over tcp alone, a flush of many small writes goes to UCX as one buffer (UCX's tcp transport sends a list of
     * pieces six at a time, one socket call each): the bytes come back in order and intact, from one copy per such
     * flush. A flush of a few pieces goes as its pieces, and over shared memory every flush does. Over tcp the
     * flush of 180,000 bytes is larger than one of UCX's tcp segments and goes cut into messages of one segment
     * (two with the transport's 128K segments), each of three pieces or fewer.
     */
    @Test
    void shouldCopyAFlushOfSmallWritesIntoOneBufferOverTcpAlone() throws Exception {
        UcxTransportConfig tcp = UcxTransportConfig.builder().config("TLS", "tcp").name("tcp-gather").build();
        EchoSeen overTcp = smallWritesEcho(tcp);
        assertTrue(UcxSocketChannel.tcpAlone(overTcp.transports()), "lanes " + overTcp.transports());
        int cut = tcp.tcpMessageBytes();
        assertEquals(3 + (3 * 60_000 + cut - 1) / cut, overTcp.messagesSent(),
                "one data message per flush, the flush of 180,000 bytes cut at " + cut);
        assertEquals(2, overTcp.gathersCopied(), "the two flushes of many small pieces copied, the others not");
        UcxTransportConfig shm = UcxTransportConfig.builder().config("TLS", "sm,tcp,self").name("shm-gather")
                .peerErrorHandling(false).build();
        EchoSeen overShm = smallWritesEcho(shm);
        assertFalse(UcxSocketChannel.tcpAlone(overShm.transports()), "lanes " + overShm.transports());
        assertEquals(4, overShm.messagesSent(), "one data message per flush");
        assertEquals(0, overShm.gathersCopied(), "pieces sent as they are");
    }

    /**
     * A writer that writes as much as {@code bytesBeforeUnwritable()} allows and then flushes, as Netty's HTTP/2 flow
     * controller does, sends 640 KiB of 16 KiB writes in one flush and one UCX message under the channel's default
     * water marks; under Netty's default marks (32 to 64 KiB), set as an option, the same writer makes ten to
     * fourteen flushes, each a message.
     */
    @Test
    void shouldLetAWriterThatFillsUpToTheWaterMarkSendLargeFlushes() throws Exception {
        UcxTransportConfig shm = UcxTransportConfig.builder().config("TLS", "sm,tcp,self").name("shm-water-mark")
                .peerErrorHandling(false).build();
        byte[] payload = pattern(640 << 10, 13);
        int[] flushes = {0};
        EchoSeen seen = echoWrites(shm, payload, client -> {
            assertEquals(UcxSocketChannelConfig.DEFAULT_WRITE_BUFFER_WATER_MARK,
                    client.config().getWriteBufferWaterMark());
            flushes[0] = writeUpToTheWaterMark(client, payload, null);
        });
        assertEquals(1, flushes[0], "all of it written before the first flush");
        assertEquals(1, seen.messagesSent(), "one data message for the one flush");

        WriteBufferWaterMark netty = new WriteBufferWaterMark(32 << 10, 64 << 10);
        seen = echoWrites(shm, payload, client -> flushes[0] = writeUpToTheWaterMark(client, payload, netty));
        // Netty counts some bytes per queued write besides its data: three or four writes fit under the mark
        assertTrue(flushes[0] >= 10 && flushes[0] <= 14, "a flush per 48 to 64 KiB, not " + flushes[0]);
        assertEquals(flushes[0], seen.messagesSent(), "a data message per flush");
    }

    /**
     * On the channel's loop, writes {@code payload} in 16 KiB writes while {@code bytesBeforeUnwritable()} allows
     * one, flushing when it does not; {@code mark}, when given, is set first. Returns the number of flushes.
     */
    private static int writeUpToTheWaterMark(Channel client, byte[] payload, WriteBufferWaterMark mark) {
        int piece = 16 << 10;
        try {
            return client.eventLoop().submit(() -> {
                if (mark != null) {
                    client.config().setOption(ChannelOption.WRITE_BUFFER_WATER_MARK, mark);
                }
                int flushes = 0;
                int off = 0;
                while (off < payload.length) {
                    while (off < payload.length && client.bytesBeforeUnwritable() >= piece) {
                        client.write(client.alloc().directBuffer(piece).writeBytes(payload, off, piece));
                        off += piece;
                    }
                    client.flush();
                    flushes++;
                }
                return flushes;
            }).get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Echoes four flushes, each checked on its way back: 60 writes of 100 to 139 bytes, then 3 writes of 60,000
     * bytes, then one composite buffer of 40 pieces, then 4 writes of 50 bytes (as many pieces as one call takes).
     */
    private EchoSeen smallWritesEcho(UcxTransportConfig config) throws Exception {
        int small = 0;
        for (int i = 0; i < 60; i++) {
            small += 100 + i % 40;
        }
        byte[] payload = pattern(small + 3 * 60_000 + 40 * 50 + UcxSocketChannel.TCP_PIECES_PER_CALL * 50, 11);
        return echoWrites(config, payload, client -> {
            int off = 0;
            for (int i = 0; i < 60; i++) {
                int n = 100 + i % 40;
                client.write(client.alloc().directBuffer(n).writeBytes(payload, off, n));
                off += n;
            }
            client.flush();
            for (int i = 0; i < 3; i++) {
                client.write(client.alloc().directBuffer(60_000).writeBytes(payload, off, 60_000));
                off += 60_000;
            }
            client.flush();
            CompositeByteBuf pieces = client.alloc().compositeDirectBuffer(64);
            for (int i = 0; i < 40; i++) {
                pieces.addComponent(true, client.alloc().directBuffer(50).writeBytes(payload, off, 50));
                off += 50;
            }
            client.writeAndFlush(pieces);
            for (int i = 0; i < UcxSocketChannel.TCP_PIECES_PER_CALL; i++) {
                client.write(client.alloc().directBuffer(50).writeBytes(payload, off, 50));
                off += 50;
            }
            client.flush();
        });
    }

    @Test
    void shouldKeepTheOrderOfManySmallWrites() throws Exception {
        int count = 10_000;
        ByteBuf all = Unpooled.buffer(count * 4);
        for (int i = 0; i < count; i++) {
            all.writeInt(i);
        }
        byte[] payload = new byte[count * 4];
        all.readBytes(payload);
        all.release();
        EventLoopGroup group = group(2, TCP);
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(new Echo()), null);
        Expect expect = new Expect(payload);
        Channel client = client(group, ch -> ch.pipeline().addLast(expect)).connect(server.localAddress()).sync()
                .channel();
        for (int i = 0; i < count; i++) {
            client.writeAndFlush(client.alloc().directBuffer(4).writeInt(i));
        }
        assertEquals(payload.length, expect.done.get(40, TimeUnit.SECONDS));
        assertTrue(((UcxSocketChannel) client).messagesSent() > 1);
        client.close().sync();
        server.close().sync();
    }

    @Test
    void shouldKeepConcurrentConnectionsApart() throws Exception {
        // Eight connections over two loops: messages find their channel by connection id, none crosses over.
        EventLoopGroup group = group(2, TCP);
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(new Echo()), null);
        List<Expect> expects = new ArrayList<>();
        List<Channel> clients = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            byte[] payload = pattern(50_000 + i * 1000, 100 + i);
            Expect expect = new Expect(payload);
            Channel client = client(group, ch -> ch.pipeline().addLast(expect)).connect(server.localAddress()).sync()
                    .channel();
            expects.add(expect);
            clients.add(client);
            client.writeAndFlush(client.alloc().directBuffer(payload.length).writeBytes(payload));
        }
        for (int i = 0; i < 8; i++) {
            assertEquals(expects.get(i).expected.length, expects.get(i).done.get(30, TimeUnit.SECONDS));
            clients.get(i).close().sync();
        }
        server.close().sync();
    }

    @Test
    void shouldSendCompositeBuffersGatheredOrCopied() throws Exception {
        byte[] payload = pattern(64_000, 9);
        EventLoopGroup group = group(2, TCP);
        UcxServerSocketChannel server = server(group, group, ch -> ch.pipeline().addLast(new Echo()), null);
        Expect expect = new Expect(payload);
        Channel client = client(group, ch -> ch.pipeline().addLast(expect)).connect(server.localAddress()).sync()
                .channel();
        // Three direct pieces (gathered as they are), then 100 pieces (more than one message gathers: copied).
        CompositeByteBuf few = client.alloc().compositeDirectBuffer();
        for (int off = 0; off < 24_000; off += 8_000) {
            few.addComponent(true, client.alloc().directBuffer(8_000).writeBytes(payload, off, 8_000));
        }
        CompositeByteBuf many = client.alloc().compositeDirectBuffer(128);
        for (int off = 24_000; off < 64_000; off += 400) {
            many.addComponent(true, client.alloc().directBuffer(400).writeBytes(payload, off, 400));
        }
        client.write(few);
        client.writeAndFlush(many);
        assertEquals(payload.length, expect.done.get(30, TimeUnit.SECONDS));
        client.close().sync();
        server.close().sync();
    }
}
