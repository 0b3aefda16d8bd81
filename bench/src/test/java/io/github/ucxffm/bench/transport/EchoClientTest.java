package io.github.ucxffm.bench.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.FixedLengthFrameDecoder;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The echo client on an in-memory channel: a window of messages, every byte of each echo checked. */
class EchoClientTest {

    private static List<ByteBuf> sent(EmbeddedChannel ch) {
        List<ByteBuf> out = new ArrayList<>();
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            out.add(b);
        }
        return out;
    }

    @Test
    void shouldKeepTheWindowFullAndCountVerifiedEchoes() throws Exception {
        Echo.Client client = new Echo.Client(64, 4);
        EmbeddedChannel ch = new EmbeddedChannel(new FixedLengthFrameDecoder(64), client);
        Latencies l = new Latencies();
        CompletableFuture<Load.Round> f = client.round(10, Long.MAX_VALUE / 4, l);
        ch.runPendingTasks();
        List<ByteBuf> first = sent(ch);
        assertEquals(4, first.size(), "the window");
        assertEquals(0, first.getFirst().getLong(0));
        assertEquals(3, first.getLast().getLong(0));
        int echoed = 0;
        List<ByteBuf> pending = new ArrayList<>(first);
        while (!pending.isEmpty()) {
            ByteBuf b = pending.removeFirst();
            // echo it back in two pieces: the decoder puts the message together again
            ch.writeInbound(b.retainedSlice(0, 10), b.retainedSlice(10, 54));
            b.release();
            echoed++;
            pending.addAll(sent(ch));
        }
        assertEquals(10, echoed, "no more than asked");
        Load.Round r = f.getNow(null);
        assertEquals(new Load.Round(10, 640, r.nanos(), 10), r);
        assertEquals(10, l.count());
        ch.finishAndReleaseAll();
    }

    @Test
    void shouldFailTheRoundOnAChangedByte() {
        Echo.Client client = new Echo.Client(64, 1);
        EmbeddedChannel ch = new EmbeddedChannel(new FixedLengthFrameDecoder(64), client);
        CompletableFuture<Load.Round> f = client.round(5, Long.MAX_VALUE / 4, null);
        ch.runPendingTasks();
        ByteBuf b = sent(ch).getFirst();
        b.setByte(40, b.getByte(40) ^ 1);
        ch.writeInbound(b);
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        assertTrue(e.getCause().getMessage().contains("echo 0 differs from what was sent"), e.getCause().getMessage());
        ch.finishAndReleaseAll();
    }

    @Test
    void shouldFailTheRoundOnAnEchoOutOfOrderOrAClosedConnection() {
        Echo.Client client = new Echo.Client(16, 2);
        EmbeddedChannel ch = new EmbeddedChannel(new FixedLengthFrameDecoder(16), client);
        CompletableFuture<Load.Round> f = client.round(5, Long.MAX_VALUE / 4, null);
        ch.runPendingTasks();
        List<ByteBuf> two = sent(ch);
        ch.writeInbound(two.get(1)); // the second before the first
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        assertTrue(e.getCause().getMessage().contains("sequence number read: 1"), e.getCause().getMessage());
        two.getFirst().release();

        Echo.Client other = new Echo.Client(16, 1);
        EmbeddedChannel ch2 = new EmbeddedChannel(new FixedLengthFrameDecoder(16), other);
        CompletableFuture<Load.Round> g = other.round(5, Long.MAX_VALUE / 4, null);
        ch2.runPendingTasks();
        sent(ch2).forEach(ByteBuf::release);
        assertFalse(g.isDone());
        ch2.close();
        ExecutionException c = assertThrows(ExecutionException.class, g::get);
        assertTrue(c.getCause().getMessage().contains("the server closed the echo connection"));
        ch.finishAndReleaseAll();
    }
}
