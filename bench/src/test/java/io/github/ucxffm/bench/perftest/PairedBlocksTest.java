package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import static io.github.ucxffm.bench.perftest.PairedBlocks.Kind.BINDING;
import static io.github.ucxffm.bench.perftest.PairedBlocks.Kind.FFM;
import static io.github.ucxffm.bench.perftest.PairedBlocks.Kind.NATIVE;

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
    void shouldCycleTheThreeKindsInOrder() {
        PairedBlocks.Kind[] seen = new PairedBlocks.Kind[7];
        for (int i = 0; i < seen.length; i++) {
            seen[i] = PairedBlocks.Kind.ofBlock(i);
        }
        assertArrayEquals(new PairedBlocks.Kind[] {BINDING, NATIVE, FFM, BINDING, NATIVE, FFM, BINDING}, seen);
        assertEquals(FFM, PairedBlocks.Kind.ofBlock(3L * Integer.MAX_VALUE + 2), "a long index");
    }

    @Test
    void shouldPairEachBindingBlockWithTheNativeBlockAfterItAndHalveRoundTrips() {
        PairedBlocks b = new PairedBlocks(5, 1);
        // medians of the round trips: 300 (an outlier does not move it), then 200; 1000 then 250
        b.record(BINDING, 1_000, stamps(1_000, 300, 9_000, 290, 310, 300), 5);
        b.record(NATIVE, 50_000, stamps(50_000, 200, 200, 190, 210, 5_000), 5);
        b.record(FFM, 60_000, stamps(60_000, 240, 240, 240), 3);
        b.record(BINDING, 90_000, stamps(90_000, 1_000, 1_000, 1_000, 990, 1_010), 5);
        assertEquals(1, b.pairs(), "a binding block waits for its native partner");
        b.record(NATIVE, 200_000, stamps(200_000, 250, 250, 250), 3);
        assertEquals(2, b.pairs());
        assertArrayEquals(new double[] {1.5, 4.0}, b.sortedRatios(), 1e-12);
        // one way: half of a round trip, in microseconds; the median of the blocks' medians
        assertEquals(0.5, b.medianMicros(BINDING), 1e-12);
        assertEquals(0.125, b.medianMicros(NATIVE), 1e-12);
        String line = b.line("ucx-ffm");
        assertTrue(line.startsWith(PairedBlocks.LINE + " 2 pairs of 5 round trips; one-way p50 ucx-ffm 0.500 us, "
                + "native 0.125 us; ratio per pair median 4.000"), line);
    }

    @Test
    void shouldSplitTheBindingsDistanceFromCIntoPlainFfmAndTheBindingsOwn() {
        PairedBlocks b = new PairedBlocks(3, 1);
        assertTrue(b.ffmLine("x").contains("no complete turn"), b.ffmLine("x"));
        // turn 1: binding 600, C 400, plain FFM 500 ns round trips; turn 2: 900, 600, 800
        b.record(BINDING, 0, stamps(0, 600, 600, 600), 3);
        b.record(NATIVE, 0, stamps(0, 400, 400, 400), 3);
        b.record(FFM, 0, stamps(0, 500, 500, 500), 3);
        b.record(BINDING, 0, stamps(0, 900, 900, 900), 3);
        b.record(NATIVE, 0, stamps(0, 600, 600, 600), 3);
        assertEquals(1, b.pairs(FFM, NATIVE), "the second turn has no plain FFM block yet");
        b.record(FFM, 0, stamps(0, 800, 800, 800), 3);
        assertEquals(2, b.pairs(FFM, NATIVE));
        assertArrayEquals(new double[] {1.25, 800.0 / 600}, b.sortedRatios(FFM, NATIVE), 1e-12);
        assertArrayEquals(new double[] {900.0 / 800, 1.2}, b.sortedRatios(BINDING, FFM), 1e-12);
        // each turn's two ratios multiply to its binding / C
        double[] direct = b.sortedRatios();
        assertArrayEquals(new double[] {1.5, 1.5}, direct, 1e-12);
        assertEquals(0.4, b.medianMicros(FFM), 1e-12, "the upper median of 0.25 and 0.4");
        String line = b.ffmLine("ucx-ffm");
        PairedBlocks.Figures f = PairedBlocks.parse("Final: ...\n" + b.line("ucx-ffm") + "\n" + line + "\n")
                .orElseThrow();
        assertEquals(new PairedBlocks.Figures(0.45, 0.3, 0.4, 1.5, 1.333, 1.2), f, "read back as printed");
        assertTrue(PairedBlocks.parse(b.line("ucx-ffm")).isEmpty(), "one line alone");
        assertTrue(PairedBlocks.parse(new PairedBlocks(3, 1).line("x") + "\n" + new PairedBlocks(3, 1).ffmLine("x"))
                .isEmpty(), "no complete pair");
        assertEquals(PairedBlocks.FFM_LINE + " 2 turns; one-way p50 plain FFM 0.400 us; plain FFM / native median "
                + "1.333 (quartiles 1.250 to 1.333); ucx-ffm / plain FFM median 1.200 (quartiles 1.125 to 1.200)",
                line);
    }

    @Test
    void shouldGrowPastTheExpectedBlocksAndSaySoWhenNoPairIsComplete() {
        PairedBlocks b = new PairedBlocks(2, 1);
        assertTrue(b.line("x").contains("no complete pair"), b.line("x"));
        for (int i = 0; i < 10; i++) {
            b.record(i % 2 == 1 ? NATIVE : BINDING, 0, stamps(0, 100 * (i + 1), 100 * (i + 1)), 2);
        }
        assertEquals(5, b.pairs());
        // pair k: binding 100(2k+1) against native 100(2k+2)
        double[] r = b.sortedRatios();
        assertEquals(5, r.length);
        assertEquals(0.5, r[0], 1e-12);
        assertEquals(9.0 / 10.0, r[4], 1e-12);
        assertThrows(IllegalArgumentException.class, () -> b.record(BINDING, 0, new long[3], 3));
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
