package io.github.ucxffm.bench.transport;

import org.HdrHistogram.Histogram;

/**
 * The round-trip times of a run, in a fixed-size HdrHistogram (3 significant digits, 1 ns to 60 s): recording
 * allocates nothing; a longer time counts as 60 s. Confined to the thread that records, until the run is over.
 */
final class Latencies {

    /** The largest time the histogram holds, in nanoseconds; longer ones are recorded as this. */
    static final long MAX_NANOS = 60_000_000_000L;

    private final Histogram histogram = new Histogram(MAX_NANOS, 3);

    /**
     * Records a round trip.
     *
     * @param nanos its duration; negative values (a clock that stepped back) count as 0
     */
    void record(long nanos) {
        histogram.recordValue(Math.min(Math.max(nanos, 0), MAX_NANOS));
    }

    /** Forgets what was recorded (after the warm-up). */
    void reset() {
        histogram.reset();
    }

    /** How many round trips were recorded. */
    long count() {
        return histogram.getTotalCount();
    }

    /**
     * The time below or at which {@code percentile} percent of the round trips fall, to the histogram's resolution
     * (0.1%).
     *
     * @param percentile 0 to 100
     * @return microseconds, or {@link Double#NaN} when nothing was recorded
     */
    double percentileMicros(double percentile) {
        if (!(percentile >= 0 && percentile <= 100)) {
            throw new IllegalArgumentException("a percentile is in [0, 100], not " + percentile);
        }
        if (histogram.getTotalCount() == 0) {
            return Double.NaN;
        }
        return histogram.getValueAtPercentile(percentile) / 1000.0;
    }
}
