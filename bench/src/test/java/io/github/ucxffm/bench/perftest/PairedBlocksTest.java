package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The figures of a paired run, from clock stamps made up here. */
class PairedBlocksTest {

    /** Stamps of round trips that took {@code durations} ns in turn, from {@code start}. */
    private static long[] stamps(long start, long... durations) {
        long[] s = new long[durations.length];
        long t = start;
        for (int i = 0; i < durations.length; i++) {
            t += durations[i];
            s[i] = t;
        }
        return s;
    }

    @Test
    void shouldPairEachBindingBlockWithTheNativeBlockAfterItAndHalveRoundTrips() {
        PairedBlocks b = new PairedBlocks(5, 1);
        // medians of the round trips: 300 (an outlier does not move it), then 200; 1000 then 250
        b.record(false, 1_000, stamps(1_000, 300, 9_000, 290, 310, 300), 5);
        b.record(true, 50_000, stamps(50_000, 200, 200, 190, 210, 5_000), 5);
        b.record(false, 90_000, stamps(90_000, 1_000, 1_000, 1_000, 990, 1_010), 5);
        assertEquals(1, b.pairs(), "a binding block waits for its native partner");
        b.record(true, 200_000, stamps(200_000, 250, 250, 250), 3);
        assertEquals(2, b.pairs());
        assertArrayEquals(new double[] {1.5, 4.0}, b.sortedRatios(), 1e-12);
        // one way: half of a round trip, in microseconds; the median of the blocks' medians
        assertEquals(0.5, b.medianMicros(false), 1e-12);
        assertEquals(0.125, b.medianMicros(true), 1e-12);
        String line = b.line("ucx-ffm");
        assertTrue(line.startsWith(PairedBlocks.LINE + " 2 pairs of 5 round trips; one-way p50 ucx-ffm 0.500 us, "
                + "native 0.125 us; ratio per pair median 4.000"), line);
    }

    @Test
    void shouldGrowPastTheExpectedBlocksAndSaySoWhenNoPairIsComplete() {
        PairedBlocks b = new PairedBlocks(2, 1);
        assertTrue(b.line("x").contains("no complete pair"), b.line("x"));
        for (int i = 0; i < 10; i++) {
            b.record(i % 2 == 1, 0, stamps(0, 100 * (i + 1), 100 * (i + 1)), 2);
        }
        assertEquals(5, b.pairs());
        // pair k: binding 100(2k+1) against native 100(2k+2)
        double[] r = b.sortedRatios();
        assertEquals(5, r.length);
        assertEquals(0.5, r[0], 1e-12);
        assertEquals(9.0 / 10.0, r[4], 1e-12);
        assertThrows(IllegalArgumentException.class, () -> b.record(false, 0, new long[3], 3));
        assertThrows(IllegalArgumentException.class, () -> new PairedBlocks(0, 1));
    }

    @Test
    void shouldSelectTheKthSmallestAsASortWould() {
        java.util.Random random = new java.util.Random(42);
        for (int round = 0; round < 500; round++) {
            int n = 1 + random.nextInt(40);
            long[] a = new long[n];
            for (int i = 0; i < n; i++) {
                a[i] = random.nextInt(round % 2 == 0 ? 5 : 1000); // with and without many equal values
            }
            long[] sorted = a.clone();
            java.util.Arrays.sort(sorted);
            int k = random.nextInt(n);
            assertEquals(sorted[k], PairedBlocks.select(a.clone(), n, k), java.util.Arrays.toString(a) + " k=" + k);
        }
    }
}
