package io.github.ucxffm.bench.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The warm-up: at least --warmup, then on while the request rate grows, five times --warmup at most. */
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

    private static TransportOptions options(String... args) {
        return TransportOptions.parse(Path.of("/repo"), args);
    }

    @Test
    void shouldGoOnWhileTheRateGrowsAndStopOnItsPlateau() throws Exception {
        // 0.2 s at least: the rate doubles for four slices, then grows by 2%: the slice after the minimum stops it
        FakeLoad load = new FakeLoad(100, 200, 400, 800, 1600, 1632, 1664);
        double s = TransportBench.warmUp(load, options("--warmup", "0.2"));
        assertTrue(s >= 0.2 && s < 1.0, s + " s");
        assertTrue(load.slices >= 6, "not before the rate stopped growing: " + load.slices);
        assertEquals(Long.MAX_VALUE, load.asked.getFirst(), "slices are timed, not counted");
    }

    @Test
    void shouldStopAtFiveTimesTheMinimumWhenTheRateKeepsGrowing() throws Exception {
        long[] growing = new long[200];
        for (int i = 0; i < growing.length; i++) {
            growing[i] = 100L << Math.min(i, 40);
        }
        FakeLoad load = new FakeLoad(growing);
        double s = TransportBench.warmUp(load, options("--warmup", "0.1"));
        assertTrue(s >= 0.5 && s < 2.0, s + " s");
    }

    @Test
    void shouldWarmUpATenthOfTheIterationsOrNotAtAll() throws Exception {
        FakeLoad load = new FakeLoad(1_000_000);
        TransportBench.warmUp(load, options("--iterations", "50"));
        assertEquals(List.of(5L), load.asked);
        FakeLoad none = new FakeLoad(1);
        assertEquals(0.0, TransportBench.warmUp(none, options("--warmup", "0")));
        assertEquals(0, none.slices);
    }
}
