package io.github.ucxffm.samples;

import org.HdrHistogram.Histogram;

import java.util.Locale;

/**
 * Round-trip times of a ping-pong, in a histogram: prints percentiles of the round trip and of the one-way latency
 * (half a round trip), the message rate, and one machine-readable {@code RESULT} line.
 */
final class LatencyReport {

    private final Histogram histogram = new Histogram(3_600_000_000_000L, 3);
    private long startNanos;
    private long endNanos;

    void start() {
        histogram.reset();
        startNanos = System.nanoTime();
    }

    /** Records one round trip, allocation-free. */
    void record(long roundTripNanos) {
        histogram.recordValue(Math.max(0, roundTripNanos));
    }

    void stop() {
        endNanos = System.nanoTime();
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }

    void print(String sample, long size, String transports) {
        long n = histogram.getTotalCount();
        double seconds = (endNanos - startNanos) / 1e9;
        double messagesPerSecond = 2 * n / seconds;
        System.out.printf(Locale.ROOT, "%s: %d round trips of %d bytes over %s%n", sample, n, size, transports);
        System.out.printf(Locale.ROOT, "%-12s %9s %9s %9s %9s %9s   (microseconds)%n", "", "p50", "p90", "p99",
                "p99.9", "max");
        for (boolean oneWay : new boolean[] {false, true}) {
            double f = oneWay ? 0.5 : 1.0;
            System.out.printf(Locale.ROOT, "%-12s %9.2f %9.2f %9.2f %9.2f %9.2f%n", oneWay ? "one way" : "round trip",
                    f * micros(histogram.getValueAtPercentile(50)), f * micros(histogram.getValueAtPercentile(90)),
                    f * micros(histogram.getValueAtPercentile(99)), f * micros(histogram.getValueAtPercentile(99.9)),
                    f * micros(histogram.getMaxValue()));
        }
        System.out.printf(Locale.ROOT, "messages/s: %.0f%n", messagesPerSecond);
        System.out.printf(Locale.ROOT, "RESULT sample=%s transport=%s size=%d iterations=%d p50_oneway_us=%.3f "
                        + "p99_oneway_us=%.3f msgs_per_s=%.0f%n", sample, transports, size, n,
                micros(histogram.getValueAtPercentile(50)) / 2, micros(histogram.getValueAtPercentile(99)) / 2,
                messagesPerSecond);
    }
}
