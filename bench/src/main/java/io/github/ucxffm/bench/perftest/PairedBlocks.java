package io.github.ucxffm.bench.perftest;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The figures of a paired run ({@code --paired}): the client's ping-pong goes through blocks of {@link #blockSize()}
 * round trips of three kinds in turn, on the same worker and endpoint: through the binding, in C
 * ({@code bench/native/ucp_paired.c}), and through plain FFM downcalls with none of the binding's code
 * ({@link FfmPairedLoop}). Each block's median round trip is kept. The blocks of one turn of the cycle are compared
 * with each other: binding over C (what the line {@link #LINE} reports), plain FFM over C (the price of calling UCX
 * from Java at all) and binding over plain FFM (the binding's own work). The machine's slow and fast modes last far
 * longer than a turn (a block is well under a second), so they move all three alike and cancel in the ratios, which
 * a comparison of separate runs cannot do.
 * <p>
 * Latencies are one way, half the round trip, as {@code ucx_perftest} reports a ping-pong. Not thread-safe: the
 * client's one thread records.
 */
public final class PairedBlocks {

    /** The kinds of block, in the order a turn of the cycle runs them. */
    public enum Kind {
        /** Through the binding. */
        BINDING,
        /** The C loop. */
        NATIVE,
        /** The C loop's calls made from Java through plain downcalls ({@link FfmPairedLoop}). */
        FFM;

        private static final Kind[] CYCLE = values();

        /**
         * The kind of the {@code index}-th block of a paired loop, from 0.
         *
         * @param index the block's place in the loop
         * @return its kind
         */
        public static Kind ofBlock(long index) {
            return CYCLE[(int) (index % CYCLE.length)];
        }
    }

    /** The line a paired client prints after its {@code Final:} line: the binding against C. */
    public static final String LINE = "Paired:";
    /** The line after it: plain FFM against C, and the binding against plain FFM. */
    public static final String FFM_LINE = "Paired FFM:";

    private final int blockSize;
    private final long[] block;
    private final double[][] medians = new double[Kind.CYCLE.length][];
    private final int[] counts = new int[Kind.CYCLE.length];

    /**
     * An empty record.
     *
     * @param blockSize round trips per block, at least 1
     * @param expected  blocks of each kind to make room for, so that recording them allocates nothing (more grow
     *                  the record)
     */
    public PairedBlocks(int blockSize, int expected) {
        if (blockSize < 1 || expected < 1) {
            throw new IllegalArgumentException("block size " + blockSize + ", expected blocks " + expected);
        }
        this.blockSize = blockSize;
        this.block = new long[blockSize];
        for (int k = 0; k < medians.length; k++) {
            medians[k] = new double[expected];
        }
    }

    /**
     * Round trips per block.
     *
     * @return the block size
     */
    public int blockSize() {
        return blockSize;
    }

    /**
     * Records one block.
     *
     * @param kind   what ran the block
     * @param start  the clock before the block's first round trip (ns)
     * @param stamps the clock after each round trip (ns), in order
     * @param n      round trips in the block, at most {@link #blockSize()}
     */
    public void record(Kind kind, long start, long[] stamps, int n) {
        if (n < 1 || n > blockSize) {
            throw new IllegalArgumentException("a block of " + n + " round trips, size " + blockSize);
        }
        long last = start;
        for (int i = 0; i < n; i++) {
            block[i] = stamps[i] - last;
            last = stamps[i];
        }
        double oneWayMicros = select(block, n, n / 2) / 2.0 / 1000.0;
        int k = kind.ordinal();
        medians[k] = grown(medians[k], counts[k]);
        medians[k][counts[k]++] = oneWayMicros;
    }

    /**
     * The {@code k}-th smallest of {@code a[0..n)}, moving its elements (Hoare's selection): in place, where
     * {@link Arrays#sort(long[], int, int)} may allocate a buffer for runs it finds, which the measured loop's
     * allocation count would show.
     */
    static long select(long[] a, int n, int k) {
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            long pivot = a[(lo + hi) >>> 1];
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    long t = a[i];
                    a[i] = a[j];
                    a[j] = t;
                    i++;
                    j--;
                }
            }
            if (k <= j) {
                hi = j;
            } else if (k >= i) {
                lo = i;
            } else {
                return a[k];
            }
        }
        return a[k];
    }

    private static double[] grown(double[] a, int count) {
        return count < a.length ? a : Arrays.copyOf(a, Math.max(1, a.length * 2));
    }

    /**
     * Turns of the cycle so far in which both kinds ran: the {@code i}-th block of one kind is compared with the
     * {@code i}-th of the other.
     *
     * @param a one kind
     * @param b the other
     * @return comparable pairs
     */
    public int pairs(Kind a, Kind b) {
        return Math.min(counts[a.ordinal()], counts[b.ordinal()]);
    }

    /**
     * Pairs of a binding block and the C block after it.
     *
     * @return pairs
     */
    public int pairs() {
        return pairs(Kind.BINDING, Kind.NATIVE);
    }

    /**
     * The ratio {@code over} / {@code under} of each pair, sorted.
     *
     * @param over  the kind on top
     * @param under the kind below
     * @return ratios, one per pair
     */
    public double[] sortedRatios(Kind over, Kind under) {
        int n = pairs(over, under);
        double[] top = medians[over.ordinal()];
        double[] bottom = medians[under.ordinal()];
        double[] r = new double[n];
        for (int i = 0; i < n; i++) {
            r[i] = top[i] / bottom[i];
        }
        Arrays.sort(r);
        return r;
    }

    /**
     * The ratio binding over C of each pair, sorted.
     *
     * @return ratios, one per pair
     */
    public double[] sortedRatios() {
        return sortedRatios(Kind.BINDING, Kind.NATIVE);
    }

    /**
     * The median over the blocks of one kind of their median one-way latency.
     *
     * @param kind which kind
     * @return microseconds, or {@code NaN} without blocks
     */
    public double medianMicros(Kind kind) {
        int count = counts[kind.ordinal()];
        if (count == 0) {
            return Double.NaN;
        }
        double[] v = Arrays.copyOf(medians[kind.ordinal()], count);
        Arrays.sort(v);
        return v[count / 2];
    }

    /**
     * The summary line: {@code Paired: N pairs of B round trips; one-way p50 binding X us, native Y us; ratio per
     * pair median R (quartiles Q1 to Q3)}.
     *
     * @param bindingName what the binding half is called ({@code ucx-ffm})
     * @return the line
     */
    public String line(String bindingName) {
        double[] r = sortedRatios();
        if (r.length == 0) {
            return LINE + " no complete pair: raise -n to at least twice the block size (" + blockSize + ")";
        }
        return String.format(Locale.ROOT, "%s %d pairs of %d round trips; one-way p50 %s %.3f us, native %.3f us; "
                        + "ratio per pair median %s", LINE, r.length, blockSize, bindingName,
                medianMicros(Kind.BINDING), medianMicros(Kind.NATIVE), medianAndQuartiles(r));
    }

    /**
     * The line that splits the binding's distance from C: {@code Paired FFM: N turns; one-way p50 plain FFM X us;
     * plain FFM / native median R (quartiles Q1 to Q3); binding / plain FFM median R (quartiles Q1 to Q3)}.
     *
     * @param bindingName what the binding half is called ({@code ucx-ffm})
     * @return the line
     */
    public String ffmLine(String bindingName) {
        double[] ffm = sortedRatios(Kind.FFM, Kind.NATIVE);
        double[] own = sortedRatios(Kind.BINDING, Kind.FFM);
        if (ffm.length == 0) {
            return FFM_LINE + " no complete turn: raise -n to at least three times the block size (" + blockSize
                    + ")";
        }
        return String.format(Locale.ROOT, "%s %d turns; one-way p50 plain FFM %.3f us; plain FFM / native median %s; "
                        + "%s / plain FFM median %s", FFM_LINE, ffm.length, medianMicros(Kind.FFM),
                medianAndQuartiles(ffm), bindingName, medianAndQuartiles(own));
    }

    /**
     * What a paired client's two lines say ({@link #line}, {@link #ffmLine}): each kind's median one-way p50 and
     * the median ratios of its turns.
     *
     * @param bindingMicros      the binding's one-way p50 (us)
     * @param nativeMicros       the C loop's
     * @param ffmMicros          the plain FFM loop's
     * @param bindingOverNative  median binding / C
     * @param ffmOverNative      median plain FFM / C
     * @param bindingOverFfm     median binding / plain FFM
     */
    public record Figures(double bindingMicros, double nativeMicros, double ffmMicros, double bindingOverNative,
                          double ffmOverNative, double bindingOverFfm) {
    }

    private static final String NUMBER = "([0-9]+(?:\\.[0-9]+)?)";
    private static final Pattern PAIRED_LINE = Pattern.compile(Pattern.quote(LINE) + " \\d+ pairs of \\d+ round "
            + "trips; one-way p50 \\S+ " + NUMBER + " us, native " + NUMBER + " us; ratio per pair median " + NUMBER);
    private static final Pattern FFM_LINE_PATTERN = Pattern.compile(Pattern.quote(FFM_LINE) + " \\d+ turns; "
            + "one-way p50 plain FFM " + NUMBER + " us; plain FFM / native median " + NUMBER + " \\(quartiles "
            + NUMBER + " to " + NUMBER + "\\); \\S+ / plain FFM median " + NUMBER);

    /**
     * Reads the figures of a paired client's output.
     *
     * @param output the client's output
     * @return the figures, or empty when either line is missing or says no pair was complete
     */
    public static Optional<Figures> parse(String output) {
        Matcher p = PAIRED_LINE.matcher(output);
        Matcher f = FFM_LINE_PATTERN.matcher(output);
        if (!p.find() || !f.find()) {
            return Optional.empty();
        }
        return Optional.of(new Figures(Double.parseDouble(p.group(1)), Double.parseDouble(p.group(2)),
                Double.parseDouble(f.group(1)), Double.parseDouble(p.group(3)), Double.parseDouble(f.group(2)),
                Double.parseDouble(f.group(5))));
    }

    private static String medianAndQuartiles(double[] sorted) {
        int n = sorted.length;
        return String.format(Locale.ROOT, "%.3f (quartiles %.3f to %.3f)", sorted[n / 2], sorted[n / 4],
                sorted[(3 * n) / 4]);
    }
}
