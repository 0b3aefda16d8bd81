package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The control messages between client and server. */
class HandshakeTest {

    @Test
    void shouldCarryTheTestParametersAndTheRemoteKey() {
        PerfParams p = PerfParams.parse("t", "h", "-t", "ucp_put_lat", "-s", "123", "-n", "456", "-w", "7", "-O", "9");
        byte[] key = {9, 8, 7, 6, 5};
        byte[] m = Handshake.request(p, key, 0x1122334455L);
        // trailing bytes (a receive buffer larger than the message) do not matter
        Handshake.Request r = Handshake.parseRequest(Arrays.copyOf(m, m.length + 100), m.length + 100);
        assertEquals(PerfTestType.UCP_PUT_LAT, r.test());
        assertEquals(123, r.size());
        assertEquals(456, r.iterations());
        assertEquals(7, r.warmup());
        assertEquals(9, r.window());
        assertEquals(0x1122334455L, r.address());
        assertArrayEquals(key, r.rkey());
        byte[] reply = Handshake.reply(new byte[0], 42);
        Handshake.Reply back = Handshake.parseReply(reply, reply.length);
        assertEquals(0, back.rkey().length);
        assertEquals(42, back.address());
    }

    @Test
    void shouldRefuseForeignTruncatedOrOutOfStepMessages() {
        byte[] m = Handshake.request(PerfParams.parse("t", "h", "-t", "tag_lat"), new byte[16], 1);
        assertThrows(IllegalArgumentException.class, () -> Handshake.parseRequest(m, m.length - 20));
        byte[] foreign = m.clone();
        foreign[0] ^= 1;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Handshake.parseRequest(foreign, m.length))
                .getMessage().contains("magic"));
        assertThrows(IllegalArgumentException.class, () -> Handshake.parseReply(m, m.length));
        byte[] b = Handshake.barrier(2, -7);
        assertEquals(-7, Handshake.checkBarrier(b, b.length, 2));
        assertThrows(IllegalStateException.class, () -> Handshake.checkBarrier(b, b.length, 1));
        assertThrows(IllegalArgumentException.class, () -> Handshake.checkBarrier(b, b.length - 4, 2));
        assertThrows(IllegalArgumentException.class, () -> Handshake.parseRequest(new byte[3], 3));
    }

    @Test
    void shouldCarryWaitModeThreadsAndThePortsOfTheServersThreads() {
        PerfParams p = PerfParams.parse("t", "h", "-t", "tag_bw", "-E", "sleep", "-T", "3");
        byte[] m = Handshake.request(p, new byte[0], 7);
        Handshake.Request r = Handshake.parseRequest(m, m.length);
        assertTrue(r.sleep());
        assertEquals(3, r.threads());
        assertEquals(0, r.paired());
        byte[] paired = Handshake.request(PerfParams.parse("t", "h", "-t", "stream_lat", "--paired=250"), new byte[0],
                7);
        assertEquals(250, Handshake.parseRequest(paired, paired.length).paired());
        byte[] reply = Handshake.reply(new byte[] {1}, 5, new int[] {40001, 40002});
        Handshake.Reply back = Handshake.parseReply(reply, reply.length);
        assertArrayEquals(new int[] {40001, 40002}, back.ports());
        assertArrayEquals(new byte[] {1}, back.rkey());
        byte[] single = Handshake.reply(new byte[0], 5);
        assertEquals(0, Handshake.parseReply(single, single.length).ports().length);
        // a count of ports larger than what follows is refused, not read past the message
        byte[] cut = Arrays.copyOf(reply, reply.length - 4);
        assertThrows(IllegalArgumentException.class, () -> Handshake.parseReply(cut, cut.length));
    }
}
