package io.github.ucxffm.samples;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpWorker;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Ping-pong latency with tag-matched messages.
 * <p>
 * Wire protocol: the client sends {@code --size} bytes with tag {@value #TAG_PING}; the server answers each ping
 * with the same bytes and tag {@value #TAG_PONG}. The client starts, does {@code --warmup} then
 * {@code --iterations} round trips, then sends an empty message with tag {@value #TAG_BYE}, which ends the server.
 * The server posts each receive with the full tag mask and a buffer of {@code --size} bytes (both sides must use
 * the same size). Payload byte {@code i} is {@code (byte) i}; the client checks the last pong.
 */
public final class TagPingPong {

    /** Client to server. */
    public static final long TAG_PING = 0x5049_4E47L;
    /** Server to client. */
    public static final long TAG_PONG = 0x504F_4E47L;
    /** Client to server: end of the run. */
    public static final long TAG_BYE = 0x4259_4520L;

    private TagPingPong() {
    }

    static void run(String[] args) {
        SampleOptions o = SampleOptions.parse(args);
        try (Arena arena = Arena.ofConfined(); // freed last: after the worker, which may still write into it
             Session s = Session.open("tag-pingpong", o, UcpContext.Feature.TAG)) {
            long size = o.size();
            MemorySegment out = arena.allocate(Math.max(1, size));
            MemorySegment in = arena.allocate(Math.max(1, size));
            for (long i = 0; i < size; i++) {
                out.set(JAVA_BYTE, i, (byte) i);
            }
            if (o.server()) {
                serve(s, out, in, size);
            } else {
                ping(s, out, in, size);
            }
        }
    }

    private static void serve(Session s, MemorySegment out, MemorySegment in, long size) {
        UcpWorker w = s.worker;
        long rounds = 0;
        while (true) {
            // Any tag: a ping or the goodbye.
            s.await(w.receiveTag(in, 0, size, 0, 0), rounds == 0 ? "waiting for the first ping" : "waiting for a ping");
            long tag = w.receivedTag();
            if (tag == TAG_BYE) {
                System.out.println("tag-pingpong: served " + rounds + " round trips");
                return;
            }
            if (tag != TAG_PING || w.receivedLength() != size) {
                throw SampleException.failed("unexpected message: tag 0x" + Long.toHexString(tag) + ", "
                        + w.receivedLength() + " bytes (both sides must use the same --size)");
            }
            s.await(s.endpoint.sendTag(in, 0, size, TAG_PONG), "answering a ping");
            rounds++;
        }
    }

    private static void ping(Session s, MemorySegment out, MemorySegment in, long size) {
        UcpWorker w = s.worker;
        LatencyReport report = new LatencyReport();
        long total = s.options.warmup() + s.options.iterations();
        for (long i = 0; i < total; i++) {
            if (i == s.options.warmup()) {
                report.start();
            }
            long t0 = System.nanoTime();
            long recv = w.receiveTag(in, 0, size, TAG_PONG, -1L);
            long send = s.endpoint.sendTag(out, 0, size, TAG_PING);
            s.await(send, "sending a ping");
            s.await(recv, "waiting for a pong");
            if (i >= s.options.warmup()) {
                report.record(System.nanoTime() - t0);
            }
        }
        report.stop();
        Session.checkEcho(in, out, size);
        s.await(s.endpoint.sendTag(out, 0, 0, TAG_BYE), "saying goodbye");
        report.print("tag-pingpong", size, s.transports());
    }
}
