package io.github.ucxffm.bench.perftest;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;

/**
 * Times a run and prints it as {@code ucx_perftest} does: the table header, a progress row about once a second
 * ({@code [thread 0]}), and the {@code Final:} row, in the same columns and units: iterations; the percentile,
 * the average since the previous row and the overall average of the time per iteration, in microseconds; the
 * bandwidth (MB/s, 2^20 bytes) and the message rate (1/s), each as the average since the previous row and overall.
 * <p>
 * The time per iteration is halved for a ping-pong, so a latency is one way; bandwidth and message rate follow from
 * it ({@code size / time}, {@code 1 / time}), as in {@code ucx_perftest}. The percentile is taken over the most
 * recent {@value #QUEUE} iterations, a bounded queue of recent samples like {@code ucx_perftest}'s.
 * <p>
 * {@link #update(long)} is the only call in the measured loop: it stores one sample in a preallocated ring and
 * allocates nothing; a row is formatted (and allocates) only when one is due.
 */
public final class PerfReport {

    /** Samples kept for the percentile; a power of two. */
    public static final int QUEUE = 2048;

    private static final long REPORT_INTERVAL_NANOS = 1_000_000_000L;
    private static final double MB = 1024.0 * 1024.0;

    private static final String RULE =
            "+--------------+--------------+----------+---------+---------+----------+----------+-----------+"
                    + "-----------+";

    private final PrintStream out;
    private final long messageBytes;
    private final double factor;
    private final double rank;
    private final boolean finalOnly;
    private final String rowLabel;
    private final long[] queue = new long[QUEUE];
    private final long[] sorted = new long[QUEUE];

    private long start;
    private long last;
    private long count;
    private long momentStart;
    private long momentCount;
    private long nextReport;

    /**
     * A report for one run.
     *
     * @param out          where rows go
     * @param test         the test (its ping-pong factor and column label)
     * @param messageBytes bytes per iteration
     * @param rank         percentile rank, e.g. 50.0
     * @param finalOnly    print the final row only ({@code -f})
     */
    public PerfReport(PrintStream out, PerfTestType test, long messageBytes, double rank, boolean finalOnly) {
        this(out, test, messageBytes, rank, finalOnly, 0);
    }

    /**
     * A report for one thread of a run ({@code -T}): its progress rows are labelled {@code [thread N]}, as
     * {@code ucx_perftest} labels each thread's.
     *
     * @param out          where rows go
     * @param test         the test (its ping-pong factor and column label)
     * @param messageBytes bytes per iteration
     * @param rank         percentile rank, e.g. 50.0
     * @param finalOnly    print the final row only ({@code -f})
     * @param thread       the thread's number, from 0
     */
    public PerfReport(PrintStream out, PerfTestType test, long messageBytes, double rank, boolean finalOnly,
                      int thread) {
        this.rowLabel = "[thread " + thread + "]";
        this.out = out;
        this.messageBytes = messageBytes;
        this.factor = test.timeFactor();
        this.rank = rank;
        this.finalOnly = finalOnly;
    }

    /**
     * Prints the table header.
     *
     * @param test the test, for the label of the first column group
     */
    public void printHeader(PerfTestType test) {
        String label = test.timeLabel() + " (usec)";
        out.println("+--------------+--------------+------------------------------+---------------------+"
                + "-----------------------+");
        out.println("|              |              |" + center(label, 30) + "|   bandwidth (MB/s)  |"
                + "  message rate (msg/s) |");
        out.println(RULE);
        out.println("|" + center(finalOnly ? "Test" : "Stage", 14) + "| # iterations |"
                + center(String.format(Locale.ROOT, "%.1f%%ile", rank), 10)
                + "| average | overall |  average |  overall |  average  |  overall  |");
        out.println(RULE);
        out.flush();
    }

    private static String center(String s, int width) {
        int left = (width - s.length()) / 2;
        int right = width - s.length() - left;
        return " ".repeat(Math.max(0, left)) + s + " ".repeat(Math.max(0, right));
    }

    /**
     * Starts the clock.
     *
     * @param now {@link System#nanoTime()}
     */
    public void begin(long now) {
        start = now;
        last = now;
        count = 0;
        momentStart = now;
        momentCount = 0;
        nextReport = now + REPORT_INTERVAL_NANOS;
    }

    /**
     * Leaves the time since the last iteration out of the run, as if the next iteration started where the last
     * ended: a paired run ({@code --paired}) times only its binding blocks here, and the native block between two of
     * them is skipped.
     *
     * @param now {@link System#nanoTime()}, where the next iteration starts
     */
    public void skipTo(long now) {
        long gap = now - last;
        start += gap;
        momentStart += gap;
        nextReport += gap;
        last = now;
    }

    /**
     * Records the end of one iteration; prints a progress row when one is due. Allocates nothing unless a row is
     * printed.
     *
     * @param now {@link System#nanoTime()}
     */
    public void update(long now) {
        queue[(int) (count & (QUEUE - 1))] = now - last;
        last = now;
        count++;
        if (now - nextReport >= 0) {
            progressRow(now);
        }
    }

    /**
     * Records the end of {@code n} iterations timed together, each with their average time; prints a progress row
     * when one is due. Allocates nothing unless a row is printed.
     *
     * @param now {@link System#nanoTime()}
     * @param n   iterations since the last update, at least 1
     */
    public void update(long now, int n) {
        long each = (now - last) / n;
        for (int k = 0; k < n; k++) {
            queue[(int) ((count + k) & (QUEUE - 1))] = each;
        }
        last = now;
        count += n;
        if (now - nextReport >= 0) {
            progressRow(now);
        }
    }

    private void progressRow(long now) {
        if (!finalOnly) {
            out.println(row(rowLabel));
            out.flush();
        }
        momentStart = last;
        momentCount = count;
        nextReport = now + REPORT_INTERVAL_NANOS;
    }

    /**
     * Ends the run at {@code now}, which may be later than the last iteration: the time to drain the window and
     * flush counts in the overall average, as the data is only then on its way.
     *
     * @param now {@link System#nanoTime()}
     */
    public void finish(long now) {
        last = Math.max(last, now);
    }

    /**
     * Prints the final row: {@code Final:} and the numbers ({@code -f}: the numbers alone).
     */
    public void printFinal() {
        out.println(row(finalOnly ? "" : "Final:"));
        out.flush();
    }

    /**
     * The final numbers, as the final row shows them.
     *
     * @return the numbers
     */
    public PerfFinal result() {
        double overall = perIterationMicros(last - start, count);
        long mc = count - momentCount;
        double moment = mc > 0 ? perIterationMicros(last - momentStart, mc) : overall;
        return new PerfFinal(count, percentileMicros(), moment, overall, bandwidth(moment), bandwidth(overall),
                rate(moment), rate(overall));
    }

    private String row(String prefix) {
        PerfFinal r = result();
        return formatRow(prefix, r);
    }

    /**
     * One row in {@code ucx_perftest}'s columns.
     *
     * @param prefix {@code Final:}, {@code [thread 0]} or empty
     * @param r      the numbers
     * @return the row
     */
    public static String formatRow(String prefix, PerfFinal r) {
        if (r.isAggregate()) {
            // ucx_perftest's row for several threads: the columns it does not compute stay blank
            return String.format(Locale.ROOT, "%-14s%14d%30.3f%23.2f%24.0f", prefix, r.iterations(),
                    r.overallMicros(), r.bandwidthOverall(), r.rateOverall());
        }
        return String.format(Locale.ROOT, "%-14s%14d%11.3f%10.3f%10.3f%12.2f%11.2f%12.0f%12.0f", prefix,
                r.iterations(), r.percentileMicros(), r.averageMicros(), r.overallMicros(), r.bandwidthAverage(),
                r.bandwidthOverall(), r.rateAverage(), r.rateOverall());
    }

    private double perIterationMicros(long nanos, long iterations) {
        return iterations == 0 ? 0 : nanos / 1000.0 / iterations / factor;
    }

    private double bandwidth(double micros) {
        return micros > 0 ? messageBytes / (micros * 1e-6) / MB : 0;
    }

    private static double rate(double micros) {
        return micros > 0 ? 1e6 / micros : 0;
    }

    private double percentileMicros() {
        int n = (int) Math.min(count, QUEUE);
        if (n == 0) {
            return 0;
        }
        System.arraycopy(queue, 0, sorted, 0, n);
        Arrays.sort(sorted, 0, n);
        int index = (int) Math.min(n - 1, (long) (n * rank / 100.0));
        return sorted[index] / 1000.0 / factor;
    }

    /**
     * Bytes the current thread has allocated so far, to check that a measured loop allocates nothing.
     *
     * @return the count, or {@code -1} when the JVM does not tell
     */
    public static long allocatedBytes() {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        if (bean instanceof com.sun.management.ThreadMXBean sun && sun.isThreadAllocatedMemorySupported()) {
            return sun.getCurrentThreadAllocatedBytes();
        }
        return -1;
    }

    /**
     * The line a runner prints (on its error stream) about what its measured loop allocated.
     *
     * @param runner     the runner's name
     * @param bytes      bytes allocated during the loop, {@code -1} if unknown
     * @param iterations iterations of the loop
     * @return the line
     */
    public static String allocationLine(String runner, long bytes, long iterations) {
        if (bytes < 0) {
            return runner + ": allocation not measurable on this JVM";
        }
        return String.format(Locale.ROOT, "%s: the measured loop allocated %d bytes (%.2f per iteration; the "
                + "progress rows account for some)", runner, bytes,
                iterations == 0 ? 0.0 : (double) bytes / iterations);
    }

    /**
     * The box a {@code ucx_perftest} server prints when the test starts, with a line naming the runner.
     *
     * @param out    where to print
     * @param runner the implementation, e.g. {@code ucx-ffm (Java FFM)}
     * @param test   the test
     * @param size   the message size
     */
    public static void printServerInfo(PrintStream out, String runner, PerfTestType test, long size) {
        printServerInfo(out, "protocol layer", runner, test, "(automatic)", size);
    }

    /**
     * The box a {@code ucx_perftest} server prints when the test starts, for either layer.
     *
     * @param out    where to print
     * @param api    {@code protocol layer} or {@code transport layer}
     * @param runner the implementation
     * @param test   the test
     * @param layout the data layout, e.g. {@code short}
     * @param size   the message size
     */
    public static void printServerInfo(PrintStream out, String api, String runner, PerfTestType test, String layout,
                                       long size) {
        String rule = "+" + "-".repeat(106) + "+";
        out.println(rule);
        out.println(infoLine("API:          " + api));
        out.println(infoLine("Runner:       " + runner));
        out.println(infoLine("Test:         " + test.description()));
        out.println(infoLine("Data layout:  " + layout));
        out.println(infoLine("Send memory:  host"));
        out.println(infoLine("Recv memory:  host"));
        out.println(infoLine("Message size: " + size));
        out.println(rule);
        out.flush();
    }

    private static String infoLine(String text) {
        return String.format(Locale.ROOT, "| %-104s |", text);
    }
}
