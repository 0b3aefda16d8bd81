package io.github.ucxffm.samples;

import org.HdrHistogram.Histogram;

import java.util.Locale;

/**
 * Latencies of one kind of operation (a put, a get, an atomic, a block request), in a histogram: what the one-sided
 * and request/response samples report, where {@link LatencyReport}'s half-round-trip view does not apply.
 * <p>
 * It keeps two clocks: the wall time between {@link #start()} and {@link #stop()}, for operations kept in flight
 * together (rate = count / wall time), and the sum of the recorded latencies, for operations done one at a time
 * around untimed work such as filling and checking buffers (rate = count / busy time).
 */
final class OperationLatency {

    private final String name;
    private final Histogram histogram = new Histogram(3_600_000_000_000L, 3);
    private long busyNanos;
    private long startNanos;
    private long endNanos;

    OperationLatency(String name) {
        this.name = name;
    }

    String name() {
        return name;
    }

    void start() {
        histogram.reset();
        busyNanos = 0;
        startNanos = System.nanoTime();
        endNanos = startNanos;
    }

    /** Records one operation, allocation-free. */
    void record(long nanos) {
        long n = Math.max(0, nanos);
        histogram.recordValue(n);
        busyNanos += n;
    }

    void stop() {
        endNanos = System.nanoTime();
    }

    long count() {
        return histogram.getTotalCount();
    }

    double micros(double percentile) {
        return histogram.getValueAtPercentile(percentile) / 1000.0;
    }

    double maxMicros() {
        return histogram.getMaxValue() / 1000.0;
    }

    /** Operations per second of busy time: for operations done one at a time. */
    double busyRate() {
        return busyNanos == 0 ? 0 : count() * 1e9 / busyNanos;
    }

    /** Operations per second of wall time: for operations kept in flight together. */
    double wallRate() {
        long wall = endNanos - startNanos;
        return wall <= 0 ? 0 : count() * 1e9 / wall;
    }

    /** The header of {@link #row}: percentile columns (in microseconds), then a column per rate. */
    static String header(String... rates) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-12s %9s %9s %9s %9s %9s", "", "p50 us",
                "p90 us", "p99 us", "p99.9 us", "max us"));
        for (String r : rates) {
            b.append(String.format(Locale.ROOT, " %12s", r));
        }
        return b.toString();
    }

    /** One table row: the percentiles and {@code rate}. */
    String row(double rate) {
        return String.format(Locale.ROOT, "%-12s %9.2f %9.2f %9.2f %9.2f %9.2f %12.0f", name, micros(50), micros(90),
                micros(99), micros(99.9), maxMicros(), rate);
    }
}
