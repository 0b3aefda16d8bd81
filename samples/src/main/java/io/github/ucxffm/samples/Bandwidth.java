package io.github.ucxffm.samples;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * One-way bandwidth with tag messages: the client keeps {@code --window} sends in flight, the server keeps
 * {@code --window} receives posted (each side its own {@code --window}; neither holds more than 1 GiB of buffers:
 * the client refuses, the server posts fewer). Defaults differ from the other samples: {@code --size} 1 MiB,
 * {@code --iterations} {@value SampleConfig#BANDWIDTH_ITERATIONS}, {@code --warmup}
 * {@value SampleConfig#BANDWIDTH_WARMUP}.
 * <p>
 * Wire protocol. Integers are big-endian; every message is sent with {@code ucp_tag_send_nbx} and received with
 * the full tag mask.
 * <ol>
 * <li>The client sends 24 bytes with tag {@code 0x42575354} ({@code "BWST"}): the message size (at least 8), the
 *     number of warm-up messages, the number of measured messages (at least 1), 8 bytes each. The server needs no
 *     {@code --size}.</li>
 * <li>The client sends the warm-up messages, then the measured ones, with tag {@code 0x42574454} ({@code "BWDT"}),
 *     each of the announced size. The first 8 bytes of each are its sequence number: 0, 1, 2, ... across both
 *     phases; the rest is filler the server ignores. The server checks every length and sequence number (tag
 *     messages between two endpoints match receives in order).</li>
 * <li>When the server has all warm-up messages it sends 16 bytes with tag {@code 0x4257414B} ({@code "BWAK"}): the
 *     number of messages and the number of bytes it received in that phase (0 and 0 without warm-up). When it has
 *     all measured messages it sends the same for the measured phase. The client checks both against what it sent,
 *     so that nothing went missing.</li>
 * </ol>
 * The client measures from its first measured send to the arrival of the second acknowledgement, so the time
 * includes one one-way latency; it reports MB/s (10<sup>6</sup> bytes per second) of data and messages per second.
 * The warm-up acknowledgement also makes the measured phase start with the server's receives posted.
 */
public final class Bandwidth {

    /** Client to server: the run's parameters. */
    public static final long TAG_START = 0x4257_5354L;
    /** Client to server: one data message. */
    public static final long TAG_DATA = 0x4257_4454L;
    /** Server to client: what a phase delivered. */
    public static final long TAG_ACK = 0x4257_414BL;
    /** Bytes of the start message. */
    public static final int START = 24;
    /** Bytes of an acknowledgement. */
    public static final int ACK = 16;
    /** At most this many bytes of buffers per side: {@code --window} times the message size. */
    public static final long MAX_BUFFERS = 1L << 30;

    /** How long a failed run waits for its abandoned operations to complete. */
    private static final long ABANDON_NANOS = 1_000_000_000L;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Bandwidth() {
    }

    static void run(String[] args) {
        SampleOptions o = SampleOptions.parse(SampleConfig.BANDWIDTH_SIZE, SampleConfig.BANDWIDTH_ITERATIONS,
                SampleConfig.BANDWIDTH_WARMUP, args);
        if (!o.server()) {
            if (o.size() < 8) {
                throw SampleException.usage("--size must be at least 8: each message starts with its sequence "
                        + "number");
            }
            if (o.size() * o.window() > MAX_BUFFERS) {
                throw SampleException.usage("--size times --window must stay within " + (MAX_BUFFERS >> 20)
                        + " MiB of send buffers");
            }
            if (o.warmup() + o.iterations() > Long.MAX_VALUE / o.size() || o.warmup() + o.iterations() < 0) {
                throw SampleException.usage("--iterations and --warmup make more bytes than a counter holds");
            }
        }
        // The arena outlives the session: no operation can still use a buffer when it is freed.
        try (Arena arena = Arena.ofConfined();
             Session s = Session.open("bandwidth", o, UcpContext.Feature.TAG)) {
            if (o.server()) {
                serve(s, arena);
            } else {
                send(s, arena);
            }
        }
    }

    private static void serve(Session s, Arena arena) {
        UcpWorker w = s.worker;
        MemorySegment control = arena.allocate(START, 8);
        String step = "waiting for the client's parameters";
        long[] receives = {};
        boolean served = false;
        try {
            s.await(w.receiveTag(control, 0, START, TAG_START, -1L), step);
            long size = control.get(LONG, 0);
            long warmup = control.get(LONG, 8);
            long iterations = control.get(LONG, 16);
            if (w.receivedLength() != START || size < 8 || size > 1L << 31 || warmup < 0 || iterations < 1
                    || warmup + iterations < 0 || warmup + iterations > Long.MAX_VALUE / size) {
                throw SampleException.failed("the client does not speak bandwidth: it announced " + warmup + " + "
                        + iterations + " messages of " + size + " bytes in " + w.receivedLength() + " bytes");
            }
            long total = warmup + iterations;
            // Posted receives: --window of them, unless the buffers would exceed the limit.
            int window = (int) Math.max(1, Math.min(s.options.window(), Math.min(total, MAX_BUFFERS / size)));
            MemorySegment[] buffers = new MemorySegment[window];
            receives = new long[window];
            for (int k = 0; k < window; k++) {
                buffers[k] = arena.allocate(size, 64);
                receives[k] = w.receiveTag(buffers[k], 0, size, TAG_DATA, -1L);
            }
            System.out.println("bandwidth: " + warmup + " + " + iterations + " messages of " + size
                    + " bytes announced; " + window + " receives posted");
            MemorySegment ack = arena.allocate(ACK, 8);
            if (warmup == 0) {
                step = "acknowledging the warm-up";
                acknowledge(s, ack, 0, 0, step);
            }
            long phaseMessages = 0;
            long phaseBytes = 0;
            long bytes = 0;
            for (long i = 0; i < total; i++) {
                int slot = (int) (i % window);
                step = i == 0 ? "waiting for the first message" : "waiting for a message";
                long receive = receives[slot];
                receives[slot] = UcpWorker.COMPLETED; // a failed await releases it too
                s.await(receive, step);
                long length = w.receivedLength();
                long sequence = buffers[slot].get(LONG, 0);
                if (length != size || sequence != i) {
                    throw SampleException.failed("message " + i + " has " + length + " bytes and sequence number "
                            + sequence + ": expected " + size + " bytes and " + i);
                }
                phaseMessages++;
                phaseBytes += length;
                bytes += length;
                if (i + window < total) {
                    receives[slot] = w.receiveTag(buffers[slot], 0, size, TAG_DATA, -1L);
                }
                if (i == warmup - 1 || i == total - 1) {
                    step = i == total - 1 ? "acknowledging the run" : "acknowledging the warm-up";
                    acknowledge(s, ack, phaseMessages, phaseBytes, step);
                    phaseMessages = 0;
                    phaseBytes = 0;
                }
            }
            served = true;
            System.out.println("bandwidth: served " + total + " messages, " + bytes + " bytes, sequence numbers in "
                    + "order");
        } catch (UcxException e) {
            throw s.lost(step, e);
        } finally {
            if (!served) {
                abandon(w, receives);
            }
        }
    }

    private static void acknowledge(Session s, MemorySegment ack, long messages, long bytes, String step) {
        ack.set(LONG, 0, messages);
        ack.set(LONG, 8, bytes);
        s.await(s.endpoint.sendTag(ack, 0, ACK, TAG_ACK), step);
    }

    private static void send(Session s, Arena arena) {
        SampleOptions o = s.options;
        UcpWorker w = s.worker;
        long size = o.size();
        int window = (int) Math.min(o.window(), o.warmup() + o.iterations());
        MemorySegment[] buffers = new MemorySegment[window];
        long[] sends = new long[window];
        for (int k = 0; k < window; k++) {
            buffers[k] = arena.allocate(size, 64);
            for (long b = 8; b < size; b++) {
                buffers[k].set(JAVA_BYTE, b, (byte) b);
            }
        }
        MemorySegment control = arena.allocate(START, 8);
        MemorySegment ack = arena.allocate(ACK, 8);
        String step = "announcing the run";
        long elapsed = -1;
        try {
            control.set(LONG, 0, size);
            control.set(LONG, 8, o.warmup());
            control.set(LONG, 16, o.iterations());
            s.await(s.endpoint.sendTag(control, 0, START, TAG_START), step);

            long ackReceive = w.receiveTag(ack, 0, ACK, TAG_ACK, -1L);
            step = "sending the warm-up";
            sendPhase(s, buffers, sends, 0, o.warmup(), step);
            step = "waiting for the warm-up acknowledgement";
            s.await(ackReceive, step);
            checkAck(ack, "warm-up", o.warmup(), size);

            ackReceive = w.receiveTag(ack, 0, ACK, TAG_ACK, -1L);
            long start = System.nanoTime();
            step = "sending";
            sendPhase(s, buffers, sends, o.warmup(), o.iterations(), step);
            step = "waiting for the acknowledgement";
            s.await(ackReceive, step);
            elapsed = System.nanoTime() - start;
            checkAck(ack, "run", o.iterations(), size);
        } catch (UcxException e) {
            throw s.lost(step, e);
        } finally {
            if (elapsed < 0) {
                abandon(w, sends);
            }
        }
        double seconds = Math.max(1, elapsed) / 1e9;
        double bytes = (double) o.iterations() * size;
        double mbPerSecond = bytes / 1e6 / seconds;
        double messagesPerSecond = o.iterations() / seconds;
        String transports = s.transports();
        System.out.printf(Locale.ROOT, "bandwidth: %d messages of %d bytes over %s, window %d, in %.3f s%n",
                o.iterations(), size, transports, window, seconds);
        System.out.printf(Locale.ROOT, "bandwidth: %.3f MB/s (%.3f MiB/s, %.3f Gbit/s), %.0f messages/s%n",
                mbPerSecond, bytes / (1 << 20) / seconds, bytes * 8 / 1e9 / seconds, messagesPerSecond);
        System.out.printf(Locale.ROOT, "RESULT sample=bandwidth transport=%s size=%d iterations=%d mb_per_s=%.3f "
                + "msgs_per_s=%.0f%n", transports, size, o.iterations(), mbPerSecond, messagesPerSecond);
    }

    /** Sends messages {@code first} to {@code first + count - 1}, at most {@code sends.length} in flight. */
    private static void sendPhase(Session s, MemorySegment[] buffers, long[] sends, long first, long count,
                                  String step) {
        int window = sends.length;
        long size = s.options.size();
        for (long i = first; i < first + count; i++) {
            int slot = (int) (i % window);
            // The slot's buffer belongs to its previous send until that completes. The slot is cleared first: a
            // failed await releases the request too.
            long previous = sends[slot];
            sends[slot] = UcpWorker.COMPLETED;
            s.await(previous, step);
            buffers[slot].set(LONG, 0, i);
            sends[slot] = s.endpoint.sendTag(buffers[slot], 0, size, TAG_DATA);
        }
        for (int k = 0; k < window; k++) {
            long previous = sends[k];
            sends[k] = UcpWorker.COMPLETED;
            s.await(previous, step);
        }
    }

    /**
     * After a failure: cancels the operations still in flight and progresses a moment, so that they complete (with
     * an error, on a dead endpoint) before the worker closes. UCX would warn about each request left over.
     */
    private static void abandon(UcpWorker w, long[] requests) {
        long deadline = System.nanoTime() + ABANDON_NANOS;
        for (int k = 0; k < requests.length; k++) {
            long request = requests[k];
            requests[k] = UcpWorker.COMPLETED;
            if (request == UcpWorker.COMPLETED) {
                continue;
            }
            try {
                w.cancel(request);
                while (!w.poll(request) && System.nanoTime() - deadline < 0) {
                    w.progress();
                }
            } catch (RuntimeException expected) {
                // the operation failed or was canceled: what abandoning it means
            }
        }
    }

    private static void checkAck(MemorySegment ack, String phase, long messages, long size) {
        long gotMessages = ack.get(LONG, 0);
        long gotBytes = ack.get(LONG, 8);
        if (gotMessages != messages || gotBytes != messages * size) {
            throw SampleException.failed("the server acknowledges " + gotMessages + " messages, " + gotBytes
                    + " bytes of the " + phase + "; the client sent " + messages + " messages, " + messages * size
                    + " bytes");
        }
    }
}
