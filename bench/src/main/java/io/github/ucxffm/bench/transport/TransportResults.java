package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.compare.CompareResults;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * The measurements of a sitting, one per transport, cell and repetition: per transport and cell the median of each
 * number over the repetitions that ran to the end, the table with ratios against epoll, the targets, and the CSVs.
 */
final class TransportResults {

    /** A column of the table: a number of a measurement and which way is better. */
    enum Metric {
        P50("p50 us", Measurement::p50Micros, false),
        P99("p99 us", Measurement::p99Micros, false),
        RATE("req/s", Measurement::requestsPerSecond, true),
        BANDWIDTH("MB/s", Measurement::megabytesPerSecond, true),
        CPU("cpu s/Mreq", Measurement::cpuPerMillion, false);

        private final String header;
        private final ToDoubleFunction<Measurement> value;
        private final boolean higherIsBetter;

        Metric(String header, ToDoubleFunction<Measurement> value, boolean higherIsBetter) {
            this.header = header;
            this.value = value;
            this.higherIsBetter = higherIsBetter;
        }

        String header() {
            return header;
        }

        double of(Measurement m) {
            return m.ok() ? value.applyAsDouble(m) : Double.NaN;
        }

        boolean higherIsBetter() {
            return higherIsBetter;
        }
    }

    /** The transport the ratios are taken against. */
    static final TransportKind REFERENCE = TransportKind.EPOLL;

    private final List<Measurement> measurements = new ArrayList<>();

    void add(Measurement m) {
        measurements.add(m);
    }

    List<Measurement> measurements() {
        return List.copyOf(measurements);
    }

    /** The cells, in the order they were first measured. */
    List<Cell> cells() {
        Set<Cell> cells = new LinkedHashSet<>();
        measurements.forEach(m -> cells.add(m.cell()));
        return List.copyOf(cells);
    }

    /** The transports, in the order they were first measured. */
    List<TransportKind> transports() {
        Set<TransportKind> t = new LinkedHashSet<>();
        measurements.forEach(m -> t.add(m.transport()));
        return List.copyOf(t);
    }

    /** The measurements of a cell over a transport, one per repetition, in order. */
    List<Measurement> runs(TransportKind transport, Cell cell) {
        return measurements.stream().filter(m -> m.transport() == transport && m.cell().equals(cell)).toList();
    }

    /**
     * The median of a number over the repetitions of a cell and transport that ran to the end.
     *
     * @param transport the transport
     * @param cell      the cell
     * @param value     the number of a measurement
     * @return the median, or NaN when no repetition has it
     */
    double median(TransportKind transport, Cell cell, ToDoubleFunction<Measurement> value) {
        double[] v = runs(transport, cell).stream().filter(Measurement::ok).mapToDouble(value)
                .filter(x -> !Double.isNaN(x)).toArray();
        OptionalDouble m = CompareResults.median(v);
        return m.isPresent() ? m.getAsDouble() : Double.NaN;
    }

    /**
     * A column's number of a cell and transport: the median over its repetitions.
     *
     * @param transport the transport
     * @param cell      the cell
     * @param metric    the column
     * @return the number, or NaN
     */
    double value(TransportKind transport, Cell cell, Metric metric) {
        return median(transport, cell, metric::of);
    }

    /**
     * The ratio of a transport's number to epoll's in the same cell, medians both.
     *
     * @param transport the transport
     * @param cell      the cell
     * @param metric    the column
     * @return the ratio, or NaN when either is missing
     */
    double ratio(TransportKind transport, Cell cell, Metric metric) {
        double v = value(transport, cell, metric);
        double ref = value(REFERENCE, cell, metric);
        return v >= 0 && ref > 0 ? v / ref : Double.NaN;
    }

    /** The error of the first repetition that failed, or {@code null}. */
    private String firstError(TransportKind transport, Cell cell) {
        return runs(transport, cell).stream().filter(m -> !m.ok()).map(Measurement::error).findFirst()
                .orElse(null);
    }

    /**
     * The table: a row per cell and transport, each number (a median over the repetitions) with its ratio to epoll's,
     * then how many answers were verified, then the targets.
     *
     * @return the text
     */
    String table() {
        StringBuilder b = new StringBuilder();
        int reps = measurements.stream().mapToInt(Measurement::rep).max().orElse(1);
        b.append("Round-trip latency in us, requests (stream: messages) per second, payload MB/s (2^20 bytes, one\n"
                + "direction), CPU seconds of client and server per million requests (from /proc/PID/stat)")
                .append(reps > 1 ? ", each the\nmedian of " + reps + " repetitions" : "").append("; (x) is the ratio "
                        + "to epoll in the same cell: lower is better for\nlatency and CPU, higher for req/s and "
                        + "MB/s.\n\n");
        String fmt = "%-20s %-12s %-16s %-16s %-18s %-16s %-15s %s%n";
        b.append(String.format(Locale.ROOT, fmt, "cell", "transport", Metric.P50.header(), Metric.P99.header(),
                Metric.RATE.header(), Metric.BANDWIDTH.header(), Metric.CPU.header(), "cpu client+server"));
        for (Cell cell : cells()) {
            boolean first = true;
            for (TransportKind t : transports()) {
                List<Measurement> runs = runs(t, cell);
                if (runs.isEmpty()) {
                    continue;
                }
                String name = first ? cell.label() : "";
                first = false;
                long failed = runs.stream().filter(m -> !m.ok()).count();
                if (failed == runs.size()) {
                    b.append(String.format(Locale.ROOT, "%-20s %-12s FAILED: %s%n", name, t.label(),
                            firstError(t, cell)));
                    continue;
                }
                List<String> cols = new ArrayList<>();
                for (Metric metric : Metric.values()) {
                    cols.add(withRatio(t, cell, metric));
                }
                String split = number(median(t, cell, Measurement::clientCpuPerMillion)) + "+"
                        + number(median(t, cell, Measurement::serverCpuPerMillion));
                if (failed > 0) {
                    split += "  (" + failed + " of " + runs.size() + " failed: " + firstError(t, cell) + ")";
                }
                b.append(String.format(Locale.ROOT, fmt, name, t.label(), cols.get(0), cols.get(1), cols.get(2),
                        cols.get(3), cols.get(4), split));
            }
        }
        b.append('\n').append(verification()).append('\n').append(targets());
        return b.toString();
    }

    /**
     * How many answers were compared byte for byte with what was expected, of those the measured rounds counted
     * (warm-up answers are checked too, and not counted here).
     *
     * @return the line
     */
    String verification() {
        long answers = 0;
        long verified = 0;
        long failed = 0;
        for (Measurement m : measurements) {
            answers += m.requests();
            verified += m.verified();
            failed += m.ok() ? 0 : 1;
        }
        return "Answers compared byte for byte with what was sent or expected: " + verified + " of " + answers
                + (failed > 0 ? "; " + failed + " cells failed" : "") + "\n";
    }

    private String withRatio(TransportKind t, Cell cell, Metric metric) {
        double v = value(t, cell, metric);
        if (Double.isNaN(v)) {
            return "-";
        }
        double r = ratio(t, cell, metric);
        return t == REFERENCE || Double.isNaN(r) ? number(v)
                : number(v) + " (" + String.format(Locale.ROOT, "%.2fx", r) + ")";
    }

    /**
     * The issue's targets, reported and not asserted: each line says the ratio found and whether it meets the
     * target, or why it cannot be told.
     *
     * @return the lines
     */
    String targets() {
        StringBuilder b = new StringBuilder("Targets (reported, not asserted):\n");
        TransportKind shm = TransportKind.UCX_SHM;
        TransportKind spin = TransportKind.UCX_SHM_SPIN;
        target(b, shm, "echo 64 B p50 over ucx-shm at most 0.5x epoll", Scenario.ECHO_PINGPONG, 64, Metric.P50, 0.5,
                false);
        target(b, spin, "echo 64 B p50 over ucx-shm-spin at most 0.5x epoll", Scenario.ECHO_PINGPONG, 64,
                Metric.P50, 0.5, false);
        target(b, shm, "gRPC unary p50 over ucx-shm below epoll", Scenario.GRPC_UNARY, -1, Metric.P50, 1.0, true);
        target(b, spin, "gRPC unary p50 over ucx-shm-spin below epoll", Scenario.GRPC_UNARY, -1, Metric.P50, 1.0,
                true);
        target(b, shm, "gRPC streaming MB/s over ucx-shm at least epoll's", Scenario.GRPC_STREAM, -1,
                Metric.BANDWIDTH, 1.0, false);
        withinTenPercent(b, TransportKind.UCX_TCP);
        withinTenPercent(b, TransportKind.UCX_TCP_SPIN);
        return b.toString();
    }

    /**
     * The target that a transport is within 10% of epoll in every column: no column more than 1.1 times worse, the
     * worst one decides and is named. Nothing for a spinning transport that did not run ({@link #extraNotRun}).
     */
    private void withinTenPercent(StringBuilder b, TransportKind t) {
        if (extraNotRun(t)) {
            return;
        }
        String what = t.label() + " within 10% of epoll in every column";
        double worst = Double.NaN;
        String where = null;
        for (Cell cell : cells()) {
            if (runs(t, cell).isEmpty()) {
                continue;
            }
            if (Double.isNaN(value(t, cell, Metric.RATE))) {
                worst = Double.POSITIVE_INFINITY;
                where = cell.label() + " failed";
                break;
            }
            for (Metric metric : Metric.values()) {
                double r = ratio(t, cell, metric);
                if (Double.isNaN(r)) {
                    continue;
                }
                double worse = metric.higherIsBetter() ? 1 / r : r; // how many times worse than epoll
                if (Double.isNaN(worst) || worse > worst) {
                    worst = worse;
                    where = cell.label() + " " + metric.header() + " " + String.format(Locale.ROOT, "%.2fx", r);
                }
            }
        }
        if (where == null) {
            b.append("  ").append(what).append(": not measured (needs ").append(t.label()).append(" and epoll)\n");
        } else {
            b.append("  ").append(what).append(": worst ").append(where).append(": ")
                    .append(worst <= 1.1 ? "met" : "not met").append('\n');
        }
    }

    /**
     * One target: a transport's ratio to epoll in the first cell of a scenario (of a size, or any size when
     * {@code size < 0}) against a bound. Nothing for a spinning transport that did not run ({@link #extraNotRun}).
     */
    private void target(StringBuilder b, TransportKind t, String what, Scenario scenario, int size, Metric metric,
                        double bound, boolean strict) {
        if (extraNotRun(t)) {
            return;
        }
        Cell cell = cells().stream().filter(c -> c.scenario() == scenario && (size < 0 || c.size() == size))
                .findFirst().orElse(null);
        double r = cell == null ? Double.NaN : ratio(t, cell, metric);
        b.append("  ").append(what).append(": ");
        if (Double.isNaN(r)) {
            b.append("not measured (needs ").append(scenario.label()).append(size > 0 ? " " + size + " B" : "")
                    .append(" over ").append(t.label()).append(" and epoll)\n");
            return;
        }
        boolean met = metric.higherIsBetter() ? (strict ? r > bound : r >= bound)
                : (strict ? r < bound : r <= bound);
        b.append(String.format(Locale.ROOT, "%.2fx", r)).append(" in ").append(cell.label()).append(": ")
                .append(met ? "met" : "not met").append('\n');
    }

    /** Whether {@code t} is a spinning transport, an extra whose target lines appear only where it ran. */
    private boolean extraNotRun(TransportKind t) {
        return t.spins() && !transports().contains(t);
    }

    /** The header of {@link #csv()}. */
    static final String CSV_HEADER = "transport,test,size,rep,requests,bytes,seconds,p50_us,p99_us,requests_per_s,"
            + "mb_per_s,client_cpu_s,server_cpu_s,cpu_s_per_mreq,verified,warmup_s,error";

    /**
     * Every measurement as CSV: a header, then a row per transport, cell and repetition, numbers with a dot, empty
     * where there is none.
     *
     * @return the text
     */
    String csv() {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Measurement m : measurements) {
            List<String> f = List.of(m.transport().label(), m.cell().scenario().label(),
                    Integer.toString(m.cell().size()), Integer.toString(m.rep()), Long.toString(m.requests()),
                    Long.toString(m.bytes()), csvNumber(m.seconds()), csvNumber(m.p50Micros()),
                    csvNumber(m.p99Micros()), csvNumber(m.requestsPerSecond()), csvNumber(m.megabytesPerSecond()),
                    csvNumber(m.clientCpu()), csvNumber(m.serverCpu()), csvNumber(m.cpuPerMillion()),
                    Long.toString(m.verified()), csvNumber(m.warmupSeconds()),
                    m.error() == null ? "" : csvText(m.error()));
            b.append(String.join(",", f)).append('\n');
        }
        return b.toString();
    }

    /** The header of {@link #summaryCsv()}. */
    static final String SUMMARY_HEADER = "transport,test,size,runs,failed,p50_us,p99_us,requests_per_s,mb_per_s,"
            + "cpu_s_per_mreq,p50_vs_epoll,p99_vs_epoll,requests_per_s_vs_epoll,mb_per_s_vs_epoll,cpu_vs_epoll";

    /**
     * The table as CSV: a row per transport and cell, the medians over the repetitions and their ratios to epoll's.
     *
     * @return the text
     */
    String summaryCsv() {
        StringBuilder b = new StringBuilder(SUMMARY_HEADER).append('\n');
        for (Cell cell : cells()) {
            for (TransportKind t : transports()) {
                List<Measurement> runs = runs(t, cell);
                if (runs.isEmpty()) {
                    continue;
                }
                List<String> f = new ArrayList<>(List.of(t.label(), cell.scenario().label(),
                        Integer.toString(cell.size()), Integer.toString(runs.size()),
                        Long.toString(runs.stream().filter(m -> !m.ok()).count())));
                for (Metric metric : Metric.values()) {
                    f.add(csvNumber(value(t, cell, metric)));
                }
                for (Metric metric : Metric.values()) {
                    f.add(csvNumber(ratio(t, cell, metric)));
                }
                b.append(String.join(",", f)).append('\n');
            }
        }
        return b.toString();
    }

    /** A number with about four significant digits. */
    static String number(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        double a = Math.abs(v);
        String f = a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, f, v);
    }

    private static String csvNumber(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v).replaceAll("(\\.\\d*?)0+($|e)", "$1$2")
                .replaceAll("\\.($|e)", "$1") : "";
    }

    private static String csvText(String s) {
        return "\"" + s.replace("\"", "\"\"").replaceAll("\\R", " ") + "\"";
    }
}
