package io.github.ucxffm.bench.perftest;

import java.util.Optional;

/**
 * The numbers of a {@code Final:} line, as {@code ucx_perftest} and the Java runners print it:
 * {@code Final: ITERS P50_US AVG_US OVERALL_US BW_AVG_MBS BW_OVERALL_MBS MSGRATE_AVG MSGRATE_OVERALL}; or, for a run
 * of several threads ({@code -T}), the aggregate {@code ucx_perftest} prints with the other columns blank:
 * {@code Final: ITERS OVERALL_US BW_OVERALL_MBS MSGRATE_OVERALL}, where the iterations are those of each thread, the
 * latency is the mean of the threads' overall latencies, and bandwidth and message rate are the threads' sums. The
 * blank columns read as {@link Double#NaN} ({@link #isAggregate()}).
 *
 * @param iterations       measured iterations
 * @param percentileMicros the percentile of the time per iteration (50th unless {@code -R}), microseconds
 * @param averageMicros    the average time per iteration since the previous progress row
 * @param overallMicros    the average time per iteration over the whole run
 * @param bandwidthAverage MB/s (2^20 bytes) since the previous progress row
 * @param bandwidthOverall MB/s over the whole run
 * @param rateAverage      operations per second since the previous progress row
 * @param rateOverall      operations per second over the whole run
 */
public record PerfFinal(long iterations, double percentileMicros, double averageMicros, double overallMicros,
                        double bandwidthAverage, double bandwidthOverall, double rateAverage, double rateOverall) {

    /** The prefix of the line. */
    public static final String PREFIX = "Final:";

    /**
     * Parses one line; {@code ucx_perftest}'s thousands separators ({@code -N}) are accepted.
     *
     * @param line a line of output
     * @return the numbers, if the line is a well-formed {@code Final:} line
     */
    public static Optional<PerfFinal> parse(String line) {
        String t = line.strip();
        if (!t.startsWith(PREFIX)) {
            return Optional.empty();
        }
        return numbers(t.substring(PREFIX.length()));
    }

    /**
     * Parses the numbers of a final row without its prefix (what {@code -f} prints): eight numbers, or the four of
     * an aggregate of threads.
     *
     * @param row the numbers, separated by blanks
     * @return the numbers, if well formed
     */
    public static Optional<PerfFinal> numbers(String row) {
        String[] f = row.strip().split("\\s+");
        if (f.length != 8 && f.length != 4) {
            return Optional.empty();
        }
        try {
            double[] v = new double[f.length];
            for (int i = 0; i < f.length; i++) {
                v[i] = Double.parseDouble(f[i].replace(",", ""));
                if (!Double.isFinite(v[i]) || v[i] < 0) {
                    return Optional.empty();
                }
            }
            if (v[0] != Math.rint(v[0])) {
                return Optional.empty();
            }
            if (f.length == 4) {
                return Optional.of(aggregate((long) v[0], v[1], v[2], v[3]));
            }
            return Optional.of(new PerfFinal((long) v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * The aggregate of a run of several threads, as {@code ucx_perftest} prints it.
     *
     * @param iterations       the iterations of each thread
     * @param overallMicros    the mean of the threads' overall times per iteration
     * @param bandwidthOverall the sum of the threads' overall bandwidths
     * @param rateOverall      the sum of the threads' overall message rates
     * @return the numbers, with the columns {@code ucx_perftest} leaves blank as {@link Double#NaN}
     */
    public static PerfFinal aggregate(long iterations, double overallMicros, double bandwidthOverall,
                                      double rateOverall) {
        return new PerfFinal(iterations, Double.NaN, Double.NaN, overallMicros, Double.NaN, bandwidthOverall,
                Double.NaN, rateOverall);
    }

    /**
     * Whether this is the aggregate of several threads, whose percentile and since-the-last-row columns are blank.
     *
     * @return {@code true} for an aggregate
     */
    public boolean isAggregate() {
        return Double.isNaN(percentileMicros);
    }

    /**
     * The last {@code Final:} line of a program's output.
     *
     * @param output everything the program printed
     * @return the numbers, if some line is a well-formed {@code Final:} line
     */
    public static Optional<PerfFinal> lastIn(String output) {
        Optional<PerfFinal> found = Optional.empty();
        for (String line : output.split("\\R")) {
            Optional<PerfFinal> f = parse(line);
            if (f.isPresent()) {
                found = f;
            }
        }
        return found;
    }
}
