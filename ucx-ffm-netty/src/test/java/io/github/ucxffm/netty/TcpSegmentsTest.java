package io.github.ucxffm.netty;

import io.github.ucxffm.UcxVersion;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Over tcp alone the two sides of a connection may have different tcp segments (a user sets them on one side, or the
 * two run different releases of the transport). UCX's tcp transport aborts the process that receives a message larger
 * than its receive segment ("Assertion `hdr->length <= (iface->config.rx_seg_size - sizeof(*hdr))' failed" in
 * {@code tcp_ep.c}, on UCX 1.13.1 and 1.18.1; 1.23.0~rc1 resets the connection), so each side cuts its data messages
 * to what the other said it takes in, in the hello. With that cut taken out, the first test fails on each release here
 * and the second on 1.13.1 (the others were not tried).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpSegmentsTest extends UcxTestBase {

    @Test
    void shouldNotSendALargerSideSegmentToASmallerOne() throws Exception {
        echoBetween(segments("264k", "large-client"), segments("64k", "small-server"));
    }

    @Test
    void shouldNotAnswerWithALargerSideSegmentToASmallerOne() throws Exception {
        echoBetween(segments("64k", "small-client"), segments("264k", "large-server"));
    }

    /**
     * Echoes a mebibyte, written at once, from a client of {@code client} to a server of {@code server}; asserts it
     * comes back intact and that each side's largest data message is what the other takes in, below its own limit on
     * the side with the larger segments.
     */
    private void echoBetween(UcxTransportConfig client, UcxTransportConfig server) throws Exception {
        EventLoopGroup serverGroup = group(1, server);
        EventLoopGroup clientGroup = group(1, client);
        CompletableFuture<UcxSocketChannel> child = new CompletableFuture<>();
        UcxServerSocketChannel s = server(serverGroup, serverGroup, ch -> {
            child.complete((UcxSocketChannel) ch);
            ch.pipeline().addLast(new EchoTest.Echo());
        }, null);
        byte[] payload = EchoTest.pattern(1 << 20, 17);
        EchoTest.Expect expect = new EchoTest.Expect(payload);
        UcxSocketChannel c = (UcxSocketChannel) client(clientGroup, ch -> ch.pipeline().addLast(expect))
                .connect(s.localAddress()).sync().channel();
        c.writeAndFlush(c.alloc().directBuffer(payload.length).writeBytes(payload));
        assertEquals(payload.length, expect.done.get(40, TimeUnit.SECONDS));
        assertTrue(UcxSocketChannel.tcpAlone(c.eventLoop().submit(c::transports).get()), "tcp alone");
        assertEquals(limit(client, server), messageLimit(c), "the client's largest message");
        assertEquals(limit(server, client), messageLimit(child.get()), "the server's largest message");
        UcxTransportConfig larger = client.tcpMessageBytes() > server.tcpMessageBytes() ? client : server;
        UcxTransportConfig smaller = larger == client ? server : client;
        assertTrue(smaller.tcpReceiveBytes() < larger.tcpMessageBytes(),
                "the larger side's own limit is above what the smaller side takes in");
        c.close().sync();
        s.close().sync();
    }

    /** What a side of {@code from} may send to a side of {@code to} in one data message over tcp. */
    private static int limit(UcxTransportConfig from, UcxTransportConfig to) {
        return Math.min(from.maxMessageBytes(), Math.min(from.tcpMessageBytes(), to.tcpReceiveBytes()));
    }

    private static int messageLimit(Channel ch) throws Exception {
        UcxSocketChannel u = (UcxSocketChannel) ch;
        return ch.eventLoop().submit(u::messageLimit).get();
    }

    /** tcp alone with both segments {@code size}, under the names the loaded UCX takes through a context. */
    private static UcxTransportConfig segments(String size, String name) {
        UcxVersion ucx = UcxVersion.runtime();
        String rx = UcxTransportConfig.rxSegmentOption(ucx);
        Assumptions.assumeTrue(rx != null, "UCX " + ucx + ": the transport leaves the segments to UCX there");
        Assumptions.assumeTrue(System.getenv("UCX_TCP_RX_SEG_SIZE") == null
                && System.getenv("UCX_TCP_TX_SEG_SIZE") == null, "a tcp segment is set in the environment");
        String tx = ucx.atLeast(1, 18) ? UcxTransportConfig.TCP_SEGMENT : UcxTransportConfig.TCP_SEGMENT_UNPREFIXED;
        return UcxTransportConfig.builder().config("TLS", "tcp").config(rx, size).config(tx, size).name(name).build();
    }
}
