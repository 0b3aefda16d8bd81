package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import static io.github.ucxffm.bench.perftest.PerfRunner.WARMUP_COMPILING;
import static io.github.ucxffm.bench.perftest.PerfRunner.WARMUP_QUIET_ITERATIONS;
import static io.github.ucxffm.bench.perftest.PerfRunner.WARMUP_STOP;
import static io.github.ucxffm.bench.perftest.PerfRunner.WARMUP_TOO_SHORT;
import static io.github.ucxffm.bench.perftest.PerfRunner.anotherWarmupRound;
import static io.github.ucxffm.bench.perftest.PerfRunner.quietAfter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When the warm-up ends: both sides decide alike from the flags they exchanged after each round. */
class WarmupRoundsTest {

    /** Plays rounds of {@code iterations} with the given server flags per round; returns how many ran. */
    private static int rounds(long iterations, int... serverFlags) {
        long quiet = 0;
        int round = 0;
        boolean more = true;
        while (more) {
            int server = round < serverFlags.length ? serverFlags[round] : 0;
            quiet = quietAfter(quiet, 0, server, iterations);
            more = anotherWarmupRound(0, server, quiet);
            round++;
            if (round > 1000) {
                throw new AssertionError("the warm-up never ends");
            }
        }
        return round;
    }

    @Test
    void shouldGoOnUntilEnoughIterationsRanWithNoCompilerAtWork() {
        long perRound = 20_000;
        int needed = (int) ((WARMUP_QUIET_ITERATIONS + perRound - 1) / perRound);
        assertEquals(needed, rounds(perRound));
        // a compiling round restarts the count: a quiet round right after a compiling one is not the end
        assertEquals(1 + needed, rounds(perRound, WARMUP_COMPILING));
        assertEquals(3 + needed, rounds(perRound, 0, 0, WARMUP_COMPILING));
    }

    @Test
    void shouldCountQuietIterationsFromTheLastRoundThatCompiledOnEitherSide() {
        assertEquals(0, quietAfter(40_000, WARMUP_COMPILING, 0, 20_000));
        assertEquals(0, quietAfter(40_000, 0, WARMUP_COMPILING, 20_000));
        assertEquals(60_000, quietAfter(40_000, WARMUP_TOO_SHORT, 0, 20_000));
    }

    @Test
    void shouldStopWhenTheClientSaysSoWhateverElseHolds() {
        assertFalse(anotherWarmupRound(WARMUP_STOP | WARMUP_TOO_SHORT, WARMUP_COMPILING, 0));
        assertTrue(anotherWarmupRound(WARMUP_TOO_SHORT, 0, WARMUP_QUIET_ITERATIONS));
        assertTrue(anotherWarmupRound(0, WARMUP_COMPILING, WARMUP_QUIET_ITERATIONS));
        assertFalse(anotherWarmupRound(0, 0, WARMUP_QUIET_ITERATIONS));
    }
}
