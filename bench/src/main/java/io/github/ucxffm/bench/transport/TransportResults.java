package io.github.ucxffm.bench.transport;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/** The measurements of a sitting: the table with ratios against epoll, the targets, the CSV. */
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

    /** The measurement of a cell over a transport. */
    Optional<Measurement> find(TransportKind transport, Cell cell) {
        return measurements.stream().filter(m -> m.transport() == transport && m.cell().equals(cell)).findFirst();
    }

    /**
     * The ratio of a measurement's number to epoll's in the same cell.
     *
     * @param m      the measurement
     * @param metric the number
     * @return the ratio, or NaN when either is missing
     */
    double ratio(Measurement m, Metric metric) {
        double v = metric.of(m);
        double ref = find(REFERENCE, m.cell()).map(metric::of).orElse(Double.NaN);
        return v >= 0 && ref > 0 ? v / ref : Double.NaN;
    }

    /**
     * The table: a row per cell and transport, each number with its ratio to epoll's, then the targets.
     *
     * @return the text
     */
    String table() {
        StringBuilder b = new StringBuilder();
        b.append("Round-trip latency in us, requests (stream: messages) per second, payload MB/s (2^20 bytes, one\n"
                + "direction), CPU seconds of client and server per million requests (from /proc/PID/stat); (x) is\n"
                + "the ratio to epoll in the same cell: lower is better for latency and CPU, higher for req/s and\n"
                + "MB/s.\n\n");
        String fmt = "%-20s %-9s %-16s %-16s %-18s %-16s %-15s %s%n";
        b.append(String.format(Locale.ROOT, fmt, "cell", "transport", Metric.P50.header(), Metric.P99.header(),
                Metric.RATE.header(), Metric.BANDWIDTH.header(), Metric.CPU.header(), "cpu client+server"));
        for (Cell cell : cells()) {
            boolean first = true;
            for (TransportKind t : transports()) {
                Optional<Measurement> found = find(t, cell);
                if (found.isEmpty()) {
                    continue;
                }
                Measurement m = found.get();
                String name = first ? cell.label() : "";
                first = false;
                if (!m.ok()) {
                    b.append(String.format(Locale.ROOT, "%-20s %-9s FAILED: %s%n", name, t.label(), m.error()));
                    continue;
                }
                List<String> cols = new ArrayList<>();
                for (Metric metric : Metric.values()) {
                    cols.add(withRatio(m, metric));
                }
                b.append(String.format(Locale.ROOT, fmt, name, t.label(), cols.get(0), cols.get(1), cols.get(2),
                        cols.get(3), cols.get(4), number(m.clientCpu() / m.requests() * 1e6) + "+"
                                + number(m.serverCpu() / m.requests() * 1e6)));
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

    private String withRatio(Measurement m, Metric metric) {
        double v = metric.of(m);
        if (Double.isNaN(v)) {
            return "-";
        }
        double r = ratio(m, metric);
        return m.transport() == REFERENCE || Double.isNaN(r) ? number(v)
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
        target(b, "echo 64 B p50 over ucx-shm at most 0.5x epoll", Scenario.ECHO_PINGPONG, 64, Metric.P50, 0.5,
                false);
        target(b, "gRPC unary p50 over ucx-shm below epoll", Scenario.GRPC_UNARY, -1, Metric.P50, 1.0, true);
        target(b, "gRPC streaming MB/s over ucx-shm at least epoll's", Scenario.GRPC_STREAM, -1, Metric.BANDWIDTH,
                1.0, false);
        // ucx-tcp within 10% of epoll in every column: no more than 10% worse, the worst column decides
        String what = "ucx-tcp within 10% of epoll in every column";
        double worst = Double.NaN;
        String where = null;
        for (Measurement m : measurements) {
            if (m.transport() != TransportKind.UCX_TCP) {
                continue;
            }
            if (!m.ok()) {
                worst = Double.POSITIVE_INFINITY;
                where = m.cell().label() + " failed";
                break;
            }
            for (Metric metric : Metric.values()) {
                double r = ratio(m, metric);
                if (Double.isNaN(r)) {
                    continue;
                }
                double worse = metric.higherIsBetter() ? 1 / r : r; // how many times worse than epoll
                if (Double.isNaN(worst) || worse > worst) {
                    worst = worse;
                    where = m.cell().label() + " " + metric.header() + " "
                            + String.format(Locale.ROOT, "%.2fx", r);
                }
            }
        }
        if (where == null) {
            b.append("  ").append(what).append(": not measured (needs ucx-tcp and epoll)\n");
        } else {
            b.append("  ").append(what).append(": worst ").append(where).append(": ")
                    .append(worst <= 1.1 ? "met" : "not met").append('\n');
        }
        return b.toString();
    }

    /**
     * One target: ucx-shm's ratio to epoll in the first cell of a scenario (of a size, or any size when
     * {@code size < 0}) against a bound.
     */
    private void target(StringBuilder b, String what, Scenario scenario, int size, Metric metric, double bound,
                        boolean strict) {
        Optional<Cell> cell = cells().stream()
                .filter(c -> c.scenario() == scenario && (size < 0 || c.size() == size)).findFirst();
        Optional<Measurement> m = cell.flatMap(c -> find(TransportKind.UCX_SHM, c));
        double r = m.map(x -> ratio(x, metric)).orElse(Double.NaN);
        b.append("  ").append(what).append(": ");
        if (Double.isNaN(r)) {
            b.append("not measured (needs ").append(scenario.label()).append(size > 0 ? " " + size + " B" : "")
                    .append(" over ucx-shm and epoll)\n");
            return;
        }
        boolean met = metric.higherIsBetter() ? (strict ? r > bound : r >= bound)
                : (strict ? r < bound : r <= bound);
        b.append(String.format(Locale.ROOT, "%.2fx", r)).append(" in ").append(cell.get().label()).append(": ")
                .append(met ? "met" : "not met").append('\n');
    }

    /** The CSV header. */
    static final String CSV_HEADER = "transport,test,size,requests,bytes,seconds,p50_us,p99_us,requests_per_s,"
            + "mb_per_s,client_cpu_s,server_cpu_s,cpu_s_per_mreq,verified,warmup_s,p50_vs_epoll,p99_vs_epoll,"
            + "requests_per_s_vs_epoll,mb_per_s_vs_epoll,cpu_vs_epoll,error";

    /**
     * The measurements as CSV: a header, then a row per cell and transport, numbers with a dot, empty where there is
     * none.
     *
     * @return the text
     */
    String csv() {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Measurement m : measurements) {
            List<String> f = new ArrayList<>(List.of(m.transport().label(), m.cell().scenario().label(),
                    Integer.toString(m.cell().size()), Long.toString(m.requests()), Long.toString(m.bytes()),
                    csvNumber(m.seconds()), csvNumber(m.p50Micros()), csvNumber(m.p99Micros()),
                    csvNumber(m.requestsPerSecond()), csvNumber(m.megabytesPerSecond()), csvNumber(m.clientCpu()),
                    csvNumber(m.serverCpu()), csvNumber(m.cpuPerMillion()), Long.toString(m.verified()),
                    csvNumber(m.warmupSeconds())));
            for (Metric metric : Metric.values()) {
                f.add(csvNumber(ratio(m, metric)));
            }
            f.add(m.error() == null ? "" : csvText(m.error()));
            b.append(String.join(",", f)).append('\n');
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
