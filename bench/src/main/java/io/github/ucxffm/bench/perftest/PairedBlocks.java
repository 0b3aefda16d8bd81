package io.github.ucxffm.bench.perftest;

import java.util.Arrays;
import java.util.Locale;

/**
 * The figures of a paired run ({@code --paired}): the client's ping-pong alternates blocks of {@link #blockSize()}
 * round trips through the binding with blocks of the same round trips in C on the same worker and endpoint
 * ({@code bench/native/ucp_paired.c}), binding first. Each block's median round trip is kept; a pair is a binding
 * block and the native block right after it, and its ratio is binding over native. The machine's slow and fast
 * modes last far longer than a pair (a block is well under a second), so they move both halves of a pair alike and
 * cancel in its ratio, which a comparison of separate runs cannot do.
 * <p>
 * Latencies are one way, half the round trip, as {@code ucx_perftest} reports a ping-pong. Not thread-safe: the
 * client's one thread records.
 */
public final class PairedBlocks {

    /** The line a paired client prints after its {@code Final:} line. */
    public static final String LINE = "Paired:";

    private final int blockSize;
    private final long[] block;
    private double[] binding;
    private double[] nativeBlocks;
    private int bindingCount;
    private int nativeCount;

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
        this.binding = new double[expected];
        this.nativeBlocks = new double[expected];
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
     * @param nativeBlock {@code true} for a block of the C loop
     * @param start       the clock before the block's first round trip (ns)
     * @param stamps      the clock after each round trip (ns), in order
     * @param n           round trips in the block, at most {@link #blockSize()}
     */
    public void record(boolean nativeBlock, long start, long[] stamps, int n) {
        if (n < 1 || n > blockSize) {
            throw new IllegalArgumentException("a block of " + n + " round trips, size " + blockSize);
        }
        long last = start;
        for (int i = 0; i < n; i++) {
            block[i] = stamps[i] - last;
            last = stamps[i];
        }
        double oneWayMicros = select(block, n, n / 2) / 2.0 / 1000.0;
        if (nativeBlock) {
            nativeBlocks = grown(nativeBlocks, nativeCount);
            nativeBlocks[nativeCount++] = oneWayMicros;
        } else {
            binding = grown(binding, bindingCount);
            binding[bindingCount++] = oneWayMicros;
        }
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
     * Complete pairs so far: binding blocks each followed by a native block.
     *
     * @return pairs
     */
    public int pairs() {
        return Math.min(bindingCount, nativeCount);
    }

    /**
     * The ratio binding over native of each pair, sorted.
     *
     * @return ratios, one per pair
     */
    public double[] sortedRatios() {
        int n = pairs();
        double[] r = new double[n];
        for (int i = 0; i < n; i++) {
            r[i] = binding[i] / nativeBlocks[i];
        }
        Arrays.sort(r);
        return r;
    }

    /**
     * The median over the blocks of one kind of their median one-way latency.
     *
     * @param nativeBlock which kind
     * @return microseconds, or {@code NaN} without blocks
     */
    public double medianMicros(boolean nativeBlock) {
        int count = nativeBlock ? nativeCount : bindingCount;
        if (count == 0) {
            return Double.NaN;
        }
        double[] v = Arrays.copyOf(nativeBlock ? nativeBlocks : binding, count);
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
                        + "ratio per pair median %.3f (quartiles %.3f to %.3f)", LINE, r.length, blockSize,
                bindingName, medianMicros(false), medianMicros(true), r[r.length / 2], r[r.length / 4],
                r[(3 * r.length) / 4]);
    }
}
