package io.github.ucxffm.samples;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcxException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Ping-pong latency over UCP streams: ordered bytes between two endpoints, with no message boundaries and no tags.
 * <p>
 * Wire protocol. All integers are big-endian. A <em>control frame</em> is 16 bytes: bytes 0-3 a magic number,
 * bytes 4-7 a message size (unsigned), bytes 8-15 a count of round trips (signed, at least 0).
 * <ol>
 * <li>The client sends a control frame with magic {@code 0x53504E47} ({@code "SPNG"}), the size of every ping
 *     and pong ({@code --size}, at least 1), and the number of round trips that follow ({@code --warmup} plus
 *     {@code --iterations}). The server needs no {@code --size} of its own.</li>
 * <li>That many times: the client sends {@code size} bytes (the ping) and the server, once it has all of them,
 *     sends the same {@code size} bytes back (the pong). The client sends the next ping only when it has the whole
 *     pong. Both sides receive with {@code UCP_STREAM_RECV_FLAG_WAITALL}. Ping byte {@code i} is {@code (byte) i};
 *     the client checks the last pong.</li>
 * <li>The client sends a control frame with magic {@code 0x53425945} ({@code "SBYE"}), size 0 and the number of
 *     round trips it completed. The server checks that it equals the announced count, reports, and both close.</li>
 * </ol>
 * A frame with another magic, or a count that differs, ends the server with status 1: the bytes are not framed as
 * this protocol says.
 */
public final class StreamPingPong {

    /** Magic of the client's first control frame: {@code "SPNG"}. */
    public static final int MAGIC_START = 0x53504E47;
    /** Magic of the client's last control frame: {@code "SBYE"}. */
    public static final int MAGIC_BYE = 0x53425945;
    /** Length of a control frame. */
    public static final int FRAME = 16;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private StreamPingPong() {
    }

    static void run(String[] args) {
        SampleOptions o = SampleOptions.parse(args);
        if (!o.server() && o.size() < 1) {
            throw SampleException.usage("--size must be at least 1: a stream carries bytes, an empty ping is "
                    + "nothing");
        }
        // The arena outlives the session: no operation can still use a buffer when it is freed.
        try (Arena arena = Arena.ofConfined();
             Session s = Session.open("stream-pingpong", o, UcpContext.Feature.STREAM)) {
            MemorySegment frame = arena.allocate(FRAME, 8);
            if (o.server()) {
                serve(s, arena, frame);
            } else {
                ping(s, arena, frame);
            }
        }
    }

    private static void serve(Session s, Arena arena, MemorySegment frame) {
        UcpEndpoint ep = s.endpoint;
        String step = "waiting for the client's first frame";
        try {
            s.await(ep.receiveStream(frame, 0, FRAME, true), step);
            int magic = frame.get(INT, 0);
            long size = Integer.toUnsignedLong(frame.get(INT, 4));
            long rounds = frame.get(LONG, 8);
            if (magic != MAGIC_START) {
                throw SampleException.failed("the client does not speak stream-pingpong: first frame has magic 0x"
                        + Integer.toHexString(magic));
            }
            if (size < 1 || size > 1L << 31 || rounds < 0) {
                throw SampleException.failed("the client announced " + rounds + " round trips of " + size
                        + " bytes, outside the protocol's limits");
            }
            MemorySegment buffer = arena.allocate(size, 8);
            System.out.println("stream-pingpong: " + rounds + " round trips of " + size + " bytes announced");
            for (long r = 0; r < rounds; r++) {
                step = r == 0 ? "waiting for the first ping" : "waiting for a ping";
                s.await(ep.receiveStream(buffer, 0, size, true), step);
                step = "answering a ping";
                s.await(ep.sendStream(buffer, 0, size), step);
            }
            step = "waiting for the client's last frame";
            s.await(ep.receiveStream(frame, 0, FRAME, true), step);
            if (frame.get(INT, 0) != MAGIC_BYE || frame.get(LONG, 8) != rounds) {
                throw SampleException.failed("the client's last frame is not a goodbye after " + rounds
                        + " round trips: magic 0x" + Integer.toHexString(frame.get(INT, 0)) + ", count "
                        + frame.get(LONG, 8));
            }
            System.out.println("stream-pingpong: served " + rounds + " round trips");
        } catch (UcxException e) {
            throw s.lost(step, e);
        }
    }

    private static void ping(Session s, Arena arena, MemorySegment frame) {
        UcpEndpoint ep = s.endpoint;
        long size = s.options.size();
        long warmup = s.options.warmup();
        long total = warmup + s.options.iterations();
        MemorySegment out = arena.allocate(size, 8);
        MemorySegment in = arena.allocate(size, 8);
        for (long i = 0; i < size; i++) {
            out.set(JAVA_BYTE, i, (byte) i);
        }
        LatencyReport report = new LatencyReport();
        String step = "announcing the run";
        try {
            frame.set(INT, 0, MAGIC_START);
            frame.set(INT, 4, (int) size);
            frame.set(LONG, 8, total);
            s.await(ep.sendStream(frame, 0, FRAME), step);
            for (long i = 0; i < total; i++) {
                if (i == warmup) {
                    report.start();
                }
                long t0 = System.nanoTime();
                long receive = ep.receiveStream(in, 0, size, true);
                step = "sending a ping";
                s.await(ep.sendStream(out, 0, size), step);
                step = "waiting for a pong";
                s.await(receive, step);
                if (i >= warmup) {
                    report.record(System.nanoTime() - t0);
                }
            }
            report.stop();
            Session.checkEcho(in, out, size);
            step = "saying goodbye";
            frame.set(INT, 0, MAGIC_BYE);
            frame.set(INT, 4, 0);
            frame.set(LONG, 8, total);
            s.await(ep.sendStream(frame, 0, FRAME), step);
        } catch (UcxException e) {
            throw s.lost(step, e);
        }
        report.print("stream-pingpong", size, s.transports());
    }
}
