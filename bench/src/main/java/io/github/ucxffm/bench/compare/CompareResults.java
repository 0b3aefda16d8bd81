package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.perftest.PerfFinal;
import io.github.ucxffm.bench.perftest.PerfTestType;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * The runs of one comparison and what is reported from them: per cell (transport, test, size) and implementation,
 * the median over the repetitions of one number: for latency tests the percentile latency (one way for ping-pongs,
 * in microseconds; lower is better), for bandwidth tests the overall bandwidth (MB/s; higher is better). The table
 * gives the medians and the ratios ucx-ffm/native and ucx-ffm/JUCX of those numbers; the CSV files give every run
 * and the medians.
 */
public final class CompareResults {

    /** The implementations compared. */
    public enum Impl {
        /** UCX's own {@code ucx_perftest}. */
        NATIVE("native"),
        /** The ucx-ffm runner. */
        FFM("ucx-ffm"),
        /** The JUCX runner. */
        JUCX("jucx");

        private final String label;

        Impl(String label) {
            this.label = label;
        }

        /**
         * The name in tables, files and options.
         *
         * @return e.g. {@code ucx-ffm}
         */
        public String label() {
            return label;
        }

        /**
         * Looks an implementation up by its label.
         *
         * @param label e.g. {@code jucx}
         * @return the implementation
         */
        public static Impl byLabel(String label) {
            for (Impl i : values()) {
                if (i.label.equals(label)) {
                    return i;
                }
            }
            throw new IllegalArgumentException("unknown implementation '" + label + "' (native, ucx-ffm, jucx)");
        }
    }

    /**
     * One cell of the comparison.
     *
     * @param transport the transport name ({@code shm}, {@code tcp})
     * @param test      the test
     * @param size      the message size
     */
    public record Cell(String transport, PerfTestType test, long size) {
    }

    /**
     * One run of one implementation in one cell.
     *
     * @param impl       the implementation
     * @param cell       the cell
     * @param repetition 1, 2, 3...
     * @param iterations the iterations asked for
     * @param result     the parsed {@code Final:} line, or {@code null} if the run failed
     * @param error      why it failed, or {@code null}
     * @param seconds    wall time of the run, processes included
     */
    public record Run(Impl impl, Cell cell, int repetition, long iterations, PerfFinal result, String error,
                      double seconds) {
        /**
         * Whether the run produced numbers.
         *
         * @return {@code true} when there is a result
         */
        public boolean ok() {
            return result != null;
        }
    }

    private final List<Run> runs = new ArrayList<>();
    private final Set<Cell> cells = new LinkedHashSet<>();

    /**
     * Records a run.
     *
     * @param run the run
     */
    public void add(Run run) {
        runs.add(run);
        cells.add(run.cell());
    }

    /**
     * Every run, in order.
     *
     * @return the runs
     */
    public List<Run> runs() {
        return List.copyOf(runs);
    }

    /**
     * The cells, ordered by transport as first seen, then test, then size.
     *
     * @return the cells
     */
    public List<Cell> cells() {
        List<String> transports = new ArrayList<>();
        for (Cell c : cells) {
            if (!transports.contains(c.transport())) {
                transports.add(c.transport());
            }
        }
        List<Cell> sorted = new ArrayList<>(cells);
        sorted.sort(Comparator.<Cell>comparingInt(c -> transports.indexOf(c.transport()))
                .thenComparing(Cell::test).thenComparingLong(Cell::size));
        return sorted;
    }

    /**
     * Whether a test is reported by its latency (ping-pongs, and one-sided tests with one operation in flight)
     * rather than its bandwidth.
     *
     * @param test the test
     * @return {@code true} for a latency test
     */
    public static boolean isLatency(PerfTestType test) {
        return test.timeLabel().equals("latency");
    }

    /**
     * The number reported for a run.
     *
     * @param test the test
     * @param f    the run's final numbers
     * @return the percentile latency in microseconds, or the overall bandwidth in MB/s
     */
    public static double metric(PerfTestType test, PerfFinal f) {
        return isLatency(test) ? f.percentileMicros() : f.bandwidthOverall();
    }

    /**
     * The unit of {@link #metric}, for headers.
     *
     * @param test the test
     * @return {@code lat us} or {@code MB/s}
     */
    public static String metricLabel(PerfTestType test) {
        return isLatency(test) ? "p50 us" : "MB/s";
    }

    /**
     * The median of the metric over the successful runs of an implementation in a cell.
     *
     * @param cell the cell
     * @param impl the implementation
     * @return the median, or empty if no run succeeded
     */
    public OptionalDouble median(Cell cell, Impl impl) {
        double[] v = runs.stream().filter(r -> r.ok() && r.impl() == impl && r.cell().equals(cell))
                .mapToDouble(r -> metric(cell.test(), r.result())).toArray();
        return median(v);
    }

    /**
     * The best value of the metric over the successful runs of an implementation in a cell: the lowest latency or
     * the highest bandwidth. On a machine whose speed moves between runs (shared cores), the ratio of the bests
     * compares each implementation at its fastest, which the median can miss when the runs of one landed in a slow
     * spell and those of the other did not.
     *
     * @param cell the cell
     * @param impl the implementation
     * @return the best value, or empty if no run succeeded
     */
    public OptionalDouble best(Cell cell, Impl impl) {
        java.util.stream.DoubleStream v = runs.stream()
                .filter(r -> r.ok() && r.impl() == impl && r.cell().equals(cell))
                .mapToDouble(r -> metric(cell.test(), r.result()));
        return isLatency(cell.test()) ? v.min() : v.max();
    }

    /**
     * The median of some values: the middle one, or the mean of the two middle ones.
     *
     * @param values the values
     * @return the median, or empty for none
     */
    public static OptionalDouble median(double... values) {
        if (values.length == 0) {
            return OptionalDouble.empty();
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int m = v.length / 2;
        return OptionalDouble.of(v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2);
    }

    /**
     * {@code a / b} when both exist and {@code b} is not zero.
     *
     * @param a numerator
     * @param b denominator
     * @return the ratio, or empty
     */
    public static OptionalDouble ratio(OptionalDouble a, OptionalDouble b) {
        if (a.isEmpty() || b.isEmpty() || b.getAsDouble() == 0) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(a.getAsDouble() / b.getAsDouble());
    }

    /**
     * A size as the table shows it: {@code 8 B}, {@code 4 KiB}, {@code 1 MiB}.
     *
     * @param size bytes
     * @return the text
     */
    public static String formatSize(long size) {
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return size / (1 << 20) + " MiB";
        }
        if (size >= 1024 && size % 1024 == 0) {
            return size / 1024 + " KiB";
        }
        return size + " B";
    }

    private static String number(OptionalDouble v) {
        if (v.isEmpty()) {
            return "-";
        }
        double d = v.getAsDouble();
        return d >= 1000 ? String.format(Locale.ROOT, "%.0f", d) : d >= 10 ? String.format(Locale.ROOT, "%.1f", d)
                : String.format(Locale.ROOT, "%.3f", d);
    }

    private static String ratioText(OptionalDouble v) {
        if (v.isEmpty()) {
            return "-";
        }
        double d = v.getAsDouble();
        return String.format(Locale.ROOT, d >= 0.1 || d == 0 ? "%.2f" : "%.2g", d); // 0.0016, not 0.00
    }

    /**
     * The table of medians and ratios.
     *
     * @param repetitions the repetitions asked for, for the caption
     * @return the table, lines ending in {@code \n}
     */
    public String table(int repetitions) {
        StringBuilder b = new StringBuilder();
        b.append("Medians of ").append(repetitions).append(repetitions == 1 ? " run" : " runs")
                .append(" per implementation. Latency tests: p50 one-way latency in us (lower is better);\n")
                .append("bandwidth tests: overall MB/s (higher is better). Ratios are ucx-ffm / native and ")
                .append("ucx-ffm / jucx of those numbers;\n")
                .append("best f/n is ucx-ffm / native of each one's best run (lowest latency, highest bandwidth).\n\n");
        String fmt = "%-9s %-12s %8s %7s %10s %10s %10s %11s %9s %9s%n";
        b.append(String.format(Locale.ROOT, fmt, "transport", "test", "size", "metric", "native", "ucx-ffm", "jucx",
                "ffm/native", "ffm/jucx", "best f/n"));
        for (Cell c : cells()) {
            OptionalDouble n = median(c, Impl.NATIVE);
            OptionalDouble f = median(c, Impl.FFM);
            OptionalDouble j = median(c, Impl.JUCX);
            b.append(String.format(Locale.ROOT, fmt, c.transport(), c.test().testName(), formatSize(c.size()),
                    metricLabel(c.test()), number(n), number(f), number(j), ratioText(ratio(f, n)),
                    ratioText(ratio(f, j)), ratioText(ratio(best(c, Impl.FFM), best(c, Impl.NATIVE)))));
        }
        long failed = runs.stream().filter(r -> !r.ok()).count();
        if (failed > 0) {
            b.append('\n').append(failed).append(failed == 1 ? " run" : " runs").append(" failed:\n");
            for (Run r : runs) {
                if (!r.ok()) {
                    b.append("  ").append(r.impl().label()).append(' ').append(r.cell().transport()).append(' ')
                            .append(r.cell().test().testName()).append(' ').append(formatSize(r.cell().size()))
                            .append(" #").append(r.repetition()).append(": ").append(r.error()).append('\n');
                }
            }
        }
        return b.toString();
    }

    /** The header of {@link #runsCsv()}. */
    public static final String RUNS_HEADER = "impl,transport,test,size,repetition,iterations_asked,ok,iterations,"
            + "p50_us,avg_us,overall_us,bw_avg_mbs,bw_overall_mbs,msgrate_avg,msgrate_overall,seconds,error";

    /**
     * Every run as CSV.
     *
     * @return the CSV text with a header line
     */
    public String runsCsv() {
        StringBuilder b = new StringBuilder(RUNS_HEADER).append('\n');
        for (Run r : runs) {
            Cell c = r.cell();
            b.append(r.impl().label()).append(',').append(c.transport()).append(',').append(c.test().testName())
                    .append(',').append(c.size()).append(',').append(r.repetition()).append(',')
                    .append(r.iterations()).append(',').append(r.ok() ? 1 : 0).append(',');
            PerfFinal f = r.result();
            if (f != null) {
                b.append(f.iterations()).append(',').append(num(f.percentileMicros())).append(',')
                        .append(num(f.averageMicros())).append(',').append(num(f.overallMicros())).append(',')
                        .append(num(f.bandwidthAverage())).append(',').append(num(f.bandwidthOverall())).append(',')
                        .append(num(f.rateAverage())).append(',').append(num(f.rateOverall())).append(',');
            } else {
                b.append(",,,,,,,,");
            }
            b.append(num(r.seconds())).append(',').append(r.error() == null ? "" : csvText(r.error())).append('\n');
        }
        return b.toString();
    }

    /** The header of {@link #summaryCsv()}. */
    public static final String SUMMARY_HEADER = "transport,test,size,metric,native,ucx_ffm,jucx,ffm_over_native,"
            + "ffm_over_jucx,native_best,ucx_ffm_best,ffm_over_native_best";

    /**
     * The medians and ratios as CSV, with the best runs of native and ucx-ffm and their ratio; empty fields where a
     * value is missing.
     *
     * @return the CSV text with a header line
     */
    public String summaryCsv() {
        StringBuilder b = new StringBuilder(SUMMARY_HEADER).append('\n');
        for (Cell c : cells()) {
            OptionalDouble n = median(c, Impl.NATIVE);
            OptionalDouble f = median(c, Impl.FFM);
            OptionalDouble j = median(c, Impl.JUCX);
            b.append(c.transport()).append(',').append(c.test().testName()).append(',').append(c.size()).append(',')
                    .append(isLatency(c.test()) ? "p50_latency_us" : "bandwidth_mbs").append(',')
                    .append(opt(n)).append(',').append(opt(f)).append(',').append(opt(j)).append(',')
                    .append(opt(ratio(f, n))).append(',').append(opt(ratio(f, j))).append(',');
            OptionalDouble nb = best(c, Impl.NATIVE);
            OptionalDouble fb = best(c, Impl.FFM);
            b.append(opt(nb)).append(',').append(opt(fb)).append(',').append(opt(ratio(fb, nb))).append('\n');
        }
        return b.toString();
    }

    private static String opt(OptionalDouble v) {
        return v.isEmpty() ? "" : num(v.getAsDouble());
    }

    private static String num(double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }

    private static String csvText(String s) {
        String t = s.replace('\n', ' ').replace('\r', ' ');
        return "\"" + t.replace("\"", "\"\"") + "\"";
    }
}
