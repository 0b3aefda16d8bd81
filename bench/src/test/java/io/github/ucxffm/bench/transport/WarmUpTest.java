package io.github.ucxffm.bench.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The warm-up: at least --warmup, then on while the request rate grows or the JIT compilers work, ten times --warmup
 * at most.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WarmUpTest {

    /** A connection whose slices take 40 ms and answer at the given rates (requests per slice), then the last. */
    private static final class FakeLoad implements Load {
        private final long[] perSlice;
        final List<Long> asked = new ArrayList<>();
        int slices;

        FakeLoad(long... perSlice) {
            this.perSlice = perSlice;
        }

        @Override
        public CompletableFuture<Round> round(long count, long nanos, Latencies latencies) {
            asked.add(count);
            try {
                Thread.sleep(40);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            long n = Math.min(count, perSlice[Math.min(slices++, perSlice.length - 1)]);
            return CompletableFuture.completedFuture(new Round(n, n, nanos, n));
        }

        @Override
        public void close() {
        }
    }

    /** Compilers that do not work (or cannot be read). */
    private static final DoubleSupplier QUIET = () -> Double.NaN;

    private static TransportOptions options(String... args) {
        return TransportOptions.parse(Path.of("/repo"), args);
    }

    @Test
    void shouldGoOnWhileTheRateGrowsAndStopOnItsPlateau() throws Exception {
        // 0.2 s at least: the rate doubles for four slices, then grows by 2%: the slice after the minimum stops it
        FakeLoad load = new FakeLoad(100, 200, 400, 800, 1600, 1632, 1664);
        double s = TransportBench.warmUp(load, options("--warmup", "0.2"), QUIET);
        assertTrue(s >= 0.2 && s < 1.0, s + " s");
        assertTrue(load.slices >= 6, "not before the rate stopped growing: " + load.slices);
        assertEquals(Long.MAX_VALUE, load.asked.getFirst(), "slices are timed, not counted");
    }

    @Test
    void shouldStopAtTenTimesTheMinimumWhenTheRateKeepsGrowing() throws Exception {
        long[] growing = new long[200];
        for (int i = 0; i < growing.length; i++) {
            growing[i] = 100L << Math.min(i, 40);
        }
        FakeLoad load = new FakeLoad(growing);
        double s = TransportBench.warmUp(load, options("--warmup", "0.1"), QUIET);
        assertTrue(s >= 1.0 && s < 3.0, s + " s");
    }

    @Test
    void shouldGoOnWhileTheCompilersWorkThoughTheRateIsFlat() throws Exception {
        // a flat rate from the start; the compilers use 30 ms in each of the first 12 slices (over the 25 ms that 5%
        // of the half second each slice reports allows), then nothing: the warm-up ends on the slice after they
        // stop, past its 0.2 s minimum and well before its 2 s maximum (room for a slow sleep on a loaded machine)
        FakeLoad load = new FakeLoad(100);
        double[] compiled = {0};
        DoubleSupplier compilers = () -> {
            if (load.slices > 0 && load.slices <= 12) {
                compiled[0] += 0.030;
            }
            return compiled[0];
        };
        double s = TransportBench.warmUp(load, options("--warmup", "0.2"), compilers);
        assertTrue(load.slices >= 13 && load.slices <= 14, "slices: " + load.slices);
        assertTrue(s < 2.0, s + " s: the ten-fold maximum is not what ended it");
        // compilers that never stop: the maximum ends it
        FakeLoad busy = new FakeLoad(100);
        double[] total = {0};
        double t = TransportBench.warmUp(busy, options("--warmup", "0.1"), () -> total[0] += 0.030);
        assertTrue(t >= 1.0 && t < 3.0, t + " s");
    }

    @Test
    void shouldWarmUpATenthOfTheIterationsOrNotAtAll() throws Exception {
        FakeLoad load = new FakeLoad(1_000_000);
        TransportBench.warmUp(load, options("--iterations", "50"), QUIET);
        assertEquals(List.of(5L), load.asked);
        FakeLoad none = new FakeLoad(1);
        assertEquals(0.0, TransportBench.warmUp(none, options("--warmup", "0"), QUIET));
        assertEquals(0, none.slices);
    }
}
