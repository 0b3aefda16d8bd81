package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.perftest.PairedBlocks;
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

    /** The part of the comparison a cell belongs to. */
    public enum Section {
        /** The sweep over transports, tests and sizes, polling, one thread. */
        MAIN,
        /** Waiting: the same cell polling ({@code -E poll}) and sleeping ({@code -E sleep}), with CPU time. */
        WAKEUP,
        /** One worker per thread ({@code -T}). */
        THREADS,
        /**
         * The ucx-ffm runner's {@code --paired} runs: blocks through ucx-ffm, in C and through plain FFM in turn on
         * one endpoint, each run giving all three ({@link PairedRun}); not in the main and secondary tables.
         */
        PAIRED
    }

    /**
     * One cell of the comparison.
     *
     * @param transport the transport name ({@code shm}, {@code tcp})
     * @param test      the test
     * @param size      the message size
     * @param section   the part of the comparison
     * @param sleep     whether the runs wait with {@code -E sleep}
     * @param threads   threads ({@code -T})
     */
    public record Cell(String transport, PerfTestType test, long size, Section section, boolean sleep, int threads) {
        /**
         * A cell of the main sweep.
         *
         * @param transport the transport name
         * @param test      the test
         * @param size      the message size
         */
        public Cell(String transport, PerfTestType test, long size) {
            this(transport, test, size, Section.MAIN, false, 1);
        }

        /**
         * How the cell runs, as the secondary tables show it: {@code poll} or {@code sleep} in the wakeup section,
         * {@code 1 thr}, {@code 2 thr} in the threads section, {@code -} in the main sweep.
         *
         * @return the label
         */
        public String mode() {
            return switch (section) {
                case MAIN -> "-";
                case WAKEUP -> sleep ? "sleep" : "poll";
                case THREADS -> threads + " thr";
                case PAIRED -> "paired";
            };
        }
    }

    /** The numbers the secondary tables report, each a median over the runs of an implementation in a cell. */
    public enum Stat {
        /** The 50th percentile latency, from the runs made with {@code -R 50}. */
        P50("p50 us", 50.0, true),
        /** The overall average time per iteration (latency or overhead), from every run of the cell. */
        AVG("avg us", Double.NaN, true),
        /** The 99th percentile latency, from the runs made with {@code -R 99}. */
        P99("p99 us", 99.0, true),
        /** The 99.9th percentile latency, from the runs made with {@code -R 99.9}. */
        P999("p99.9 us", 99.9, true),
        /** CPU seconds of both processes per million iterations (warm-up included, start-up excluded). */
        CPU("cpu s/M", Double.NaN, true),
        /** CPU seconds of both processes per million iterations of the measured loop ({@link Run#loopCpuPerMillion}). */
        LOOP_CPU("loop cpu/M", Double.NaN, true),
        /** The overall message rate (for several threads, the sum of the threads'). */
        RATE("msg/s", Double.NaN, false);

        private final String label;
        private final double rank;
        private final boolean lowerIsBetter;

        Stat(String label, double rank, boolean lowerIsBetter) {
            this.label = label;
            this.rank = rank;
            this.lowerIsBetter = lowerIsBetter;
        }

        /**
         * The name in tables.
         *
         * @return e.g. {@code p99 us}
         */
        public String label() {
            return label;
        }

        /**
         * Whether a lower value is better.
         *
         * @return {@code true} for times and CPU
         */
        public boolean lowerIsBetter() {
            return lowerIsBetter;
        }

        /**
         * The value of a run, or {@link Double#NaN} when the run does not give this number (a percentile of another
         * rank, an unknown CPU time, a blank column).
         *
         * @param r a successful run
         * @return the value
         */
        public double of(Run r) {
            PerfFinal f = r.result();
            if (!Double.isNaN(rank)) {
                return sameRank(r.rank(), rank) ? f.percentileMicros() : Double.NaN;
            }
            return switch (this) {
                case AVG -> f.overallMicros();
                case CPU -> r.cpuPerMillion();
                case LOOP_CPU -> r.loopCpuPerMillion();
                case RATE -> f.rateOverall();
                default -> throw new IllegalStateException(name());
            };
        }
    }

    /**
     * Whether two percentile ranks are the same ({@code -R} values are decimals such as 99.9).
     *
     * @param a a rank
     * @param b another
     * @return {@code true} if equal within 1e-9
     */
    public static boolean sameRank(double a, double b) {
        return Math.abs(a - b) < 1e-9;
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
     * @param rank       the percentile rank the run was made with ({@code -R})
     * @param cpuSeconds CPU time of the server and client processes from their connection to their exit, or
     *                   {@link Double#NaN} if not measured
     * @param warmup     the warm-up iterations the client made (they count with the measured ones for the CPU per
     *                   iteration)
     * @param loopCpuSeconds CPU time of server and client in their measured loops, as the Java runners report it,
     *                   or {@link Double#NaN} ({@code ucx_perftest} does not report it)
     */
    public record Run(Impl impl, Cell cell, int repetition, long iterations, PerfFinal result, String error,
                      double seconds, double rank, double cpuSeconds, long warmup, double loopCpuSeconds) {

        /**
         * A run without the measured loop's CPU time.
         *
         * @param impl       the implementation
         * @param cell       the cell
         * @param repetition 1, 2, 3...
         * @param iterations the iterations asked for
         * @param result     the parsed {@code Final:} line, or {@code null} if the run failed
         * @param error      why it failed, or {@code null}
         * @param seconds    wall time of the run, processes included
         * @param rank       {@code -R}
         * @param cpuSeconds CPU time of both processes from their connection to their exit
         * @param warmup     the client's warm-up iterations
         */
        public Run(Impl impl, Cell cell, int repetition, long iterations, PerfFinal result, String error,
                   double seconds, double rank, double cpuSeconds, long warmup) {
            this(impl, cell, repetition, iterations, result, error, seconds, rank, cpuSeconds, warmup, Double.NaN);
        }

        /**
         * A run made with {@code -R 50}, without CPU time.
         *
         * @param impl       the implementation
         * @param cell       the cell
         * @param repetition 1, 2, 3...
         * @param iterations the iterations asked for
         * @param result     the parsed {@code Final:} line, or {@code null} if the run failed
         * @param error      why it failed, or {@code null}
         * @param seconds    wall time of the run, processes included
         */
        public Run(Impl impl, Cell cell, int repetition, long iterations, PerfFinal result, String error,
                   double seconds) {
            this(impl, cell, repetition, iterations, result, error, seconds, 50.0, Double.NaN, 0, Double.NaN);
        }

        /**
         * CPU seconds of both processes per million iterations of their measured loops, where the runners report
         * it (the Java runners); for {@code ucx_perftest}, which does not, {@link #cpuPerMillion()}: a C program
         * without a JIT compiler spends from connection to exit what its loop costs per iteration, over its
         * warm-up's tenth too.
         *
         * @return the value, or {@link Double#NaN} if unknown
         */
        public double loopCpuPerMillion() {
            if (Double.isNaN(loopCpuSeconds)) {
                return impl == Impl.NATIVE ? cpuPerMillion() : Double.NaN;
            }
            long n = result != null ? result.iterations() : iterations;
            return n > 0 ? loopCpuSeconds / n * 1e6 : Double.NaN;
        }

        /**
         * CPU seconds of both processes per million iterations, warm-up included: {@code cpuSeconds / (measured +
         * warm-up iterations) * 1e6}.
         *
         * @return the value, or {@link Double#NaN} if the CPU time is unknown
         */
        public double cpuPerMillion() {
            long n = (result != null ? result.iterations() : iterations) + warmup;
            return n > 0 ? cpuSeconds / n * 1e6 : Double.NaN;
        }

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
    private final List<PairedRun> paired = new ArrayList<>();
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
     * One {@code --paired} run of the ucx-ffm runner.
     *
     * @param cell       the cell (section {@link Section#PAIRED})
     * @param repetition 1, 2, 3...
     * @param figures    what its client printed, or {@code null} if it failed
     * @param error      why it failed, or {@code null}
     * @param seconds    wall time of the run
     */
    public record PairedRun(Cell cell, int repetition, PairedBlocks.Figures figures, String error, double seconds) {
        /**
         * Whether the run gave its figures.
         *
         * @return {@code true} when it did
         */
        public boolean ok() {
            return figures != null;
        }
    }

    /**
     * Records a paired run.
     *
     * @param run the run
     */
    public void addPaired(PairedRun run) {
        paired.add(run);
    }

    /**
     * Every paired run, in order.
     *
     * @return the runs
     */
    public List<PairedRun> pairedRuns() {
        return List.copyOf(paired);
    }

    private static final String PAIRED_FORMAT = "%-9s %-12s %8s %9s %9s %9s %9s %12s %14s%n";
    /** The figures of a paired run, in the order of the table's and the CSV's columns. */
    private static final List<java.util.function.ToDoubleFunction<PairedBlocks.Figures>> PAIRED_COLUMNS = List.of(
            PairedBlocks.Figures::bindingMicros, PairedBlocks.Figures::nativeMicros, PairedBlocks.Figures::ffmMicros,
            PairedBlocks.Figures::bindingOverNative, PairedBlocks.Figures::ffmOverNative,
            PairedBlocks.Figures::bindingOverFfm);

    /**
     * The paired table: one row per cell with the medians over its runs of each kind's one-way p50 and of the
     * three ratios; failed runs are left out and counted.
     *
     * @return the table under its caption, or an empty string without paired runs
     */
    public String pairedTable() {
        if (paired.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("""

                Paired (--paired): one run of the ucx-ffm runner per repetition whose ping-pong goes through
                blocks of 1000 round trips of three kinds in turn on one worker and endpoint: ucx-ffm, the same
                loop in C, and the C loop's calls made from Java through plain FFM downcalls. One-way p50 in us
                and ratios of the blocks of a turn, medians over the repetitions; the machine's slow and fast
                modes move the three kinds alike. plainFFM/C: what calling UCX from Java costs at all;
                ffm/plainFFM: the binding's own work.
                """);
        b.append(String.format(Locale.ROOT, PAIRED_FORMAT, "transport", "test", "size", "ucx-ffm", "C",
                "plainFFM", "ffm/C", "plainFFM/C", "ffm/plainFFM"));
        Set<Cell> seen = new LinkedHashSet<>();
        for (PairedRun r : paired) {
            seen.add(r.cell());
        }
        for (Cell c : seen) {
            List<PairedBlocks.Figures> f = paired.stream().filter(r -> r.cell().equals(c) && r.ok())
                    .map(PairedRun::figures).toList();
            long failed = paired.stream().filter(r -> r.cell().equals(c) && !r.ok()).count();
            String suffix = failed == 0 ? "" : "  (" + failed + " failed)";
            if (f.isEmpty()) {
                b.append(String.format(Locale.ROOT, "%-9s %-12s %8s  no run gave its figures%s%n", c.transport(),
                        c.test().testName(), formatSize(c.size()), suffix));
                continue;
            }
            List<Object> row = new ArrayList<>(List.of(c.transport(), c.test().testName(), formatSize(c.size())));
            for (java.util.function.ToDoubleFunction<PairedBlocks.Figures> column : PAIRED_COLUMNS) {
                double m = median(f.stream().mapToDouble(column).toArray()).getAsDouble();
                row.add(String.format(Locale.ROOT, "%.3f", m));
            }
            row.add(suffix);
            b.append(String.format(Locale.ROOT, PAIRED_FORMAT.replace("%n", "") + "%s%n", row.toArray()));
        }
        return b.toString();
    }

    /**
     * The paired runs as CSV: one row per run.
     *
     * @return the CSV, with a header
     */
    public String pairedCsv() {
        StringBuilder b = new StringBuilder("transport,test,size,repetition,ffm_p50_us,native_p50_us,"
                + "plain_ffm_p50_us,ffm_over_native,plain_ffm_over_native,ffm_over_plain_ffm,seconds,error\n");
        for (PairedRun r : paired) {
            PairedBlocks.Figures f = r.figures();
            b.append(r.cell().transport()).append(',').append(r.cell().test().testName()).append(',')
                    .append(r.cell().size()).append(',').append(r.repetition()).append(',');
            for (java.util.function.ToDoubleFunction<PairedBlocks.Figures> column : PAIRED_COLUMNS) {
                b.append(f == null ? "" : String.format(Locale.ROOT, "%.3f", column.applyAsDouble(f))).append(',');
            }
            b.append(String.format(Locale.ROOT, "%.1f,", r.seconds()))
                    .append(r.error() == null ? "" : csvText(r.error())).append('\n');
        }
        return b.toString();
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
     * The cells of the main sweep, ordered by transport as first seen, then test, then size.
     *
     * @return the cells
     */
    public List<Cell> cells() {
        return cells(Section.MAIN);
    }

    /**
     * The cells of a section, ordered by transport as first seen, then test, size, waiting mode and threads.
     *
     * @param section the section
     * @return the cells
     */
    public List<Cell> cells(Section section) {
        List<String> transports = new ArrayList<>();
        for (Cell c : cells) {
            if (!transports.contains(c.transport())) {
                transports.add(c.transport());
            }
        }
        List<Cell> sorted = new ArrayList<>(cells.stream().filter(c -> c.section() == section).toList());
        sorted.sort(Comparator.<Cell>comparingInt(c -> transports.indexOf(c.transport()))
                .thenComparing(Cell::test).thenComparingLong(Cell::size).thenComparing(Cell::sleep)
                .thenComparingInt(Cell::threads));
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
        double[] v = mainRuns(cell, impl).mapToDouble(r -> metric(cell.test(), r.result())).toArray();
        return median(v);
    }

    /** The runs the main metric comes from: successful, and for latency tests made with {@code -R 50}. */
    private java.util.stream.Stream<Run> mainRuns(Cell cell, Impl impl) {
        return runs.stream().filter(r -> r.ok() && r.impl() == impl && r.cell().equals(cell)
                && (!isLatency(cell.test()) || sameRank(r.rank(), 50.0)));
    }

    /**
     * The median of a statistic over the successful runs of an implementation in a cell that give it.
     *
     * @param cell the cell
     * @param impl the implementation
     * @param stat the statistic
     * @return the median, or empty if no run gives it
     */
    public OptionalDouble median(Cell cell, Impl impl, Stat stat) {
        double[] v = runs.stream().filter(r -> r.ok() && r.impl() == impl && r.cell().equals(cell))
                .mapToDouble(stat::of).filter(Double::isFinite).toArray();
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
        java.util.stream.DoubleStream v = mainRuns(cell, impl).mapToDouble(r -> metric(cell.test(), r.result()));
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
     * A message size as written on a command line: {@code 8}, {@code 4k}, {@code 64KiB}, {@code 1m}, {@code 1MiB}.
     *
     * @param v the text
     * @return bytes, positive
     * @throws IllegalArgumentException naming the text when it is not such a size
     */
    public static long parseSize(String v) {
        String s = v.toLowerCase(Locale.ROOT).replace("ib", "").replace("b", "");
        long unit = 1;
        if (s.endsWith("k")) {
            unit = 1024;
            s = s.substring(0, s.length() - 1);
        } else if (s.endsWith("m")) {
            unit = 1024 * 1024;
            s = s.substring(0, s.length() - 1);
        }
        try {
            long n = Math.multiplyExact(Long.parseLong(s.trim()), unit);
            if (n <= 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("not a message size: '" + v + "'");
        }
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
        if (cells().isEmpty() && !paired.isEmpty()) {
            return ""; // a paired section alone: its own table says it all
        }
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
                            .append(r.cell().test().testName()).append(' ').append(formatSize(r.cell().size()));
                    if (r.cell().section() != Section.MAIN) {
                        b.append(' ').append(r.cell().mode());
                    }
                    if (!sameRank(r.rank(), 50.0)) {
                        b.append(" -R ").append(rankText(r.rank()));
                    }
                    b.append(" #").append(r.repetition()).append(": ").append(r.error()).append('\n');
                }
            }
        }
        return b.toString();
    }

    /**
     * The statistics a secondary table shows for a cell: averages and tails in the main sweep (average only for
     * bandwidth tests, whose percentile column is one of batch averages in the Java runners), percentile, average
     * and CPU in the wakeup section, message rate and average in the threads section.
     *
     * @param cell the cell
     * @return the statistics, in order
     */
    public static List<Stat> statsOf(Cell cell) {
        return switch (cell.section()) {
            case MAIN -> isLatency(cell.test()) ? List.of(Stat.AVG, Stat.P99, Stat.P999) : List.of(Stat.AVG);
            case WAKEUP -> List.of(Stat.P50, Stat.AVG, Stat.CPU, Stat.LOOP_CPU);
            case THREADS -> List.of(Stat.RATE, Stat.AVG);
            case PAIRED -> List.of(); // its own table: pairedTable()
        };
    }

    private static final String STATS_FORMAT = "%-9s %-12s %8s %-6s %-10s %10s %10s %10s %11s %9s%n";

    /**
     * A secondary table: one row per cell of the section and statistic of {@link #statsOf}, with the medians of the
     * three implementations and the ratios ucx-ffm / native and ucx-ffm / jucx; rows no run gives are left out.
     *
     * @param section the section
     * @return the rows with a header line, or an empty string when the section has no cells
     */
    public String statsTable(Section section) {
        List<Cell> list = cells(section);
        if (list.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, STATS_FORMAT, "transport", "test", "size", "mode", "stat", "native",
                "ucx-ffm", "jucx", "ffm/native", "ffm/jucx"));
        for (Cell c : list) {
            for (Stat st : statsOf(c)) {
                OptionalDouble n = median(c, Impl.NATIVE, st);
                OptionalDouble f = median(c, Impl.FFM, st);
                OptionalDouble j = median(c, Impl.JUCX, st);
                if (n.isEmpty() && f.isEmpty() && j.isEmpty()) {
                    continue;
                }
                b.append(String.format(Locale.ROOT, STATS_FORMAT, c.transport(), c.test().testName(),
                        formatSize(c.size()), c.mode(), st.label(), number(n), number(f), number(j),
                        ratioText(ratio(f, n)), ratioText(ratio(f, j))));
            }
        }
        return b.toString();
    }

    /**
     * The secondary tables with their captions: averages and tails of the main sweep, waiting (poll against sleep,
     * with CPU), threads; and the notes (what an implementation could not run, and why).
     *
     * @return the text, empty when there is nothing to show
     */
    public String secondaryTables() {
        StringBuilder b = new StringBuilder();
        appendCaptioned(b, Section.MAIN, """
                Averages and tails (medians over the repetitions). avg: overall time per iteration in us (one
                way for ping-pongs, overhead per message for bandwidth tests), from every run of the cell;
                p99, p99.9: from the runs made with -R 99 and -R 99.9, each taken, as ucx_perftest does,
                over the most recent 2048 iterations of its run (p99.9 is the 3rd-highest of those 2048).
                """);
        appendCaptioned(b, Section.WAKEUP, """
                Waiting: poll (-E poll, progress in a loop) against sleep (-E sleep, ucp_worker_wait when
                progress finds nothing). cpu s/M: CPU seconds of server and client together (utime +
                stime from /proc) per million iterations, from their connection to their exit, warm-up
                included (the JVM's compilers work during warm-up); loop cpu/M: the same over the measured
                loop only, as the Java runners report it (native: its cpu s/M, a C program's warm-up costing
                what its loop does). Two spinning processes cost about 2 s per second of run.
                """);
        appendCaptioned(b, Section.THREADS, """
                Threads (-T): one worker and endpoint per thread on each side. msg/s: the sum of the
                threads' overall message rates; avg: the mean of their overall times per message, as
                ucx_perftest aggregates them.
                """);
        for (String note : notes) {
            b.append("\nnote: ").append(note).append('\n');
        }
        return b.toString();
    }

    /** The section's statistics table under its caption (which ends with a newline), if it has any rows. */
    private void appendCaptioned(StringBuilder b, Section section, String caption) {
        String table = statsTable(section);
        if (!table.isEmpty()) {
            b.append('\n').append(caption).append('\n').append(table);
        }
    }

    private final List<String> notes = new ArrayList<>();

    /**
     * Adds a note shown under the secondary tables (once per text).
     *
     * @param note e.g. why a column is empty
     */
    public void note(String note) {
        if (!notes.contains(note)) {
            notes.add(note);
        }
    }

    /** The header of {@link #statsCsv()}. */
    public static final String STATS_HEADER = "section,transport,test,size,mode,stat,native,ucx_ffm,jucx,"
            + "ffm_over_native,ffm_over_jucx";

    /**
     * Every row of the secondary tables as CSV, with empty fields where a value is missing.
     *
     * @return the CSV text with a header line
     */
    public String statsCsv() {
        StringBuilder b = new StringBuilder(STATS_HEADER).append('\n');
        for (Section section : Section.values()) {
            for (Cell c : cells(section)) {
                for (Stat st : statsOf(c)) {
                    OptionalDouble n = median(c, Impl.NATIVE, st);
                    OptionalDouble f = median(c, Impl.FFM, st);
                    OptionalDouble j = median(c, Impl.JUCX, st);
                    if (n.isEmpty() && f.isEmpty() && j.isEmpty()) {
                        continue;
                    }
                    b.append(section.name().toLowerCase(Locale.ROOT)).append(',').append(c.transport()).append(',')
                            .append(c.test().testName()).append(',').append(c.size()).append(',').append(c.mode())
                            .append(',').append(st.label().replace(' ', '_')).append(',').append(opt(n)).append(',')
                            .append(opt(f)).append(',').append(opt(j)).append(',').append(opt(ratio(f, n)))
                            .append(',').append(opt(ratio(f, j))).append('\n');
                }
            }
        }
        return b.toString();
    }

    /** The header of {@link #runsCsv()}. */
    public static final String RUNS_HEADER = "impl,transport,test,size,section,mode,rank,repetition,iterations_asked,ok,"
            + "iterations,percentile_us,avg_us,overall_us,bw_avg_mbs,bw_overall_mbs,msgrate_avg,msgrate_overall,"
            + "seconds,warmup,cpu_s,cpu_s_per_million,loop_cpu_s,error";

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
                    .append(',').append(c.size()).append(',').append(c.section().name().toLowerCase(Locale.ROOT))
                    .append(',').append(c.mode()).append(',').append(rankText(r.rank())).append(',')
                    .append(r.repetition()).append(',')
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
            b.append(num(r.seconds())).append(',').append(r.warmup()).append(',').append(num(r.cpuSeconds()))
                    .append(',').append(r.ok() ? num(r.cpuPerMillion()) : "").append(',')
                    .append(num(r.loopCpuSeconds())).append(',')
                    .append(r.error() == null ? "" : csvText(r.error())).append('\n');
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
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.4f", v) : "";
    }

    /**
     * A rank as {@code -R} takes it.
     *
     * @param rank the percentile rank
     * @return {@code 50}, {@code 99.9}
     */
    public static String rankText(double rank) {
        return rank == Math.rint(rank) ? Long.toString((long) rank) : Double.toString(rank);
    }

    private static String csvText(String s) {
        String t = s.replace('\n', ' ').replace('\r', ' ');
        return "\"" + t.replace("\"", "\"\"") + "\"";
    }
}
