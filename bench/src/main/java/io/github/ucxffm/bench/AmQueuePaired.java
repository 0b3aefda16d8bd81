package io.github.ucxffm.bench;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpWorker;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;

/**
 * The worker's active-message queue against an upcall per message, in one JVM, blocks of each in turn
 * ({@code ./ucx-ffm bench am-queue [BLOCKS [MESSAGES]]}).
 * <p>
 * Two pairs of workers of one context, one made with the queue and one with {@code -Ducxffm.am.queue=false}, each
 * with an endpoint from its sender to its receiver (no peer error handling, so over shared memory, as
 * {@code RmaAmBenchmark}). A block sends MESSAGES 8-byte active messages one at a time, progressing the receiver
 * until its handler ran and the sender until the send completed; blocks of the two pairs alternate (which goes first
 * alternates too), so both meet the same state of the machine, whose speed drifts between runs. Prints the median
 * nanoseconds per message of each and the median and quartiles of the per-turn ratio queue / upcall. A benchmark,
 * not a test: it asserts nothing.
 */
public final class AmQueuePaired {

    private static final int AM_ID = 9;
    /** How long a block may take before the run is given up as stalled (a block takes milliseconds). */
    private static final long STALL_NANOS = 30_000_000_000L;

    private long received;

    private record Pair(UcpWorker sender, UcpWorker receiver, UcpEndpoint endpoint) {
    }

    private Pair pair(UcpContext context, boolean queue) {
        String before = System.getProperty("ucxffm.am.queue");
        System.setProperty("ucxffm.am.queue", String.valueOf(queue));
        try {
            UcpWorker sender = context.newWorker();
            UcpWorker receiver = context.newWorker();
            UcpEndpoint ep = sender.connect(UcpEndpoint.Params.worker(receiver.address()).peerErrorHandling(false)
                    .errorCallback(false));
            receiver.setAmHandler(AM_ID, m -> received += m.dataLength() + 1);
            return new Pair(sender, receiver, ep);
        } finally {
            if (before == null) {
                System.clearProperty("ucxffm.am.queue");
            } else {
                System.setProperty("ucxffm.am.queue", before);
            }
        }
    }

    private long block(Pair p, MemorySegment data, int messages) {
        long start = System.nanoTime();
        long deadline = start + STALL_NANOS;
        for (int i = 0; i < messages; i++) {
            long before = received;
            long token = p.endpoint.sendAm(AM_ID, null, data, 0, data.byteSize(), 0);
            long spins = 0;
            while (received == before) {
                p.receiver.progress();
                // the sender's part: a send UCX could not finish at once needs the sender's progress (on UCX 1.23 a
                // message sometimes did not arrive without it; which one was not found). Once in many turns, so a
                // message that arrives at once is timed as the receiver alone takes it in; and the clock read as seldom
                if ((++spins & 255) == 0) {
                    p.sender.progress();
                    checkStall(deadline, i, messages);
                }
            }
            while (!p.sender.poll(token)) {
                p.sender.progress();
                if ((++spins & 255) == 0) {
                    checkStall(deadline, i, messages);
                }
            }
        }
        return System.nanoTime() - start;
    }

    private static void checkStall(long deadline, int message, int messages) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("a block of " + messages + " messages took more than "
                    + STALL_NANOS / 1_000_000_000 + " s; stalled at message " + message);
        }
    }

    private static double median(double[] sorted) {
        return sorted[sorted.length / 2];
    }

    /**
     * Runs the comparison.
     *
     * @param args {@code [BLOCKS [MESSAGES]]}: turns (default 200) and messages per block (default 20000)
     */
    public static void main(String[] args) {
        int blocks = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int messages = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        if (blocks < 4 || messages < 1) {
            throw new IllegalArgumentException("usage: am-queue [BLOCKS (4 or more) [MESSAGES (1 or more)]]");
        }
        new AmQueuePaired().run(blocks, messages);
    }

    private void run(int blocks, int messages) {
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.AM).build();
             Arena arena = Arena.ofConfined()) {
            Pair queued = pair(context, true);
            Pair upcall = pair(context, false);
            MemorySegment data = arena.allocate(8);
            int warmup = Math.max(10, blocks / 4);
            System.out.printf(Locale.ROOT, "warm-up: %d turns of %d messages each way%n", warmup, messages);
            for (int i = 0; i < warmup; i++) {
                block(queued, data, messages);
                block(upcall, data, messages);
            }
            double[] q = new double[blocks];
            double[] u = new double[blocks];
            double[] ratio = new double[blocks];
            for (int i = 0; i < blocks; i++) {
                long tq;
                long tu;
                if ((i & 1) == 0) {
                    tq = block(queued, data, messages);
                    tu = block(upcall, data, messages);
                } else {
                    tu = block(upcall, data, messages);
                    tq = block(queued, data, messages);
                }
                q[i] = (double) tq / messages;
                u[i] = (double) tu / messages;
                ratio[i] = (double) tq / tu;
                if ((i + 1) % 50 == 0) {
                    System.out.printf(Locale.ROOT, "turn %d of %d: queue %.1f ns, upcall %.1f ns%n", i + 1, blocks,
                            q[i], u[i]);
                }
            }
            Arrays.sort(q);
            Arrays.sort(u);
            Arrays.sort(ratio);
            System.out.printf(Locale.ROOT, "AM queue: %d turns of %d 8-byte messages; send+receive median queue "
                            + "%.1f ns, upcall %.1f ns; queue / upcall per turn median %.3f (quartiles %.3f to %.3f)%n",
                    blocks, messages, median(q), median(u), median(ratio), ratio[blocks / 4],
                    ratio[blocks * 3 / 4]);
        }
    }
}
