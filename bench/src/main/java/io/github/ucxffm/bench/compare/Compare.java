package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.compare.CompareResults.Cell;
import io.github.ucxffm.bench.compare.CompareResults.Impl;
import io.github.ucxffm.bench.compare.CompareResults.PairedRun;
import io.github.ucxffm.bench.compare.CompareResults.Run;
import io.github.ucxffm.bench.compare.CompareResults.Section;
import io.github.ucxffm.bench.perftest.PairedBlocks;
import io.github.ucxffm.bench.perftest.PerfFinal;
import io.github.ucxffm.bench.perftest.PerfRunner;
import io.github.ucxffm.bench.perftest.PerfTestType;
import io.github.ucxffm.bench.plot.LogPanel;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code ./ucx-ffm bench compare}: runs UCX's {@code ucx_perftest}, the ucx-ffm runner and the JUCX runner in one
 * sitting, each as a server and a client process on 127.0.0.1, over each transport, for each test and size, a
 * number of times, alternating the implementations within each cell and repeating the whole sweep, so that a
 * change in the machine's load touches all three alike. Prints the table of medians ({@link CompareResults}) and
 * writes it with the runs (CSV) and a plot (PNG) under the output directory.
 * <p>
 * Every process is started by this program and killed by it (by its handle, at exit or on a timeout); a shutdown
 * hook destroys whatever is still running if the program is interrupted.
 */
public final class Compare {

    /** The transports compared when none are given, and the {@code UCX_TLS} each runs with. */
    static final Map<String, String> DEFAULT_TRANSPORTS = Map.of("shm", "shm,tcp", "tcp", "tcp");

    /** The UCT transports that run on shared memory (device {@code memory}); any other runs on device {@code lo}. */
    static final Set<String> UCT_MEMORY_TRANSPORTS = Set.of("posix", "sysv", "cma", "xpmem", "knem");

    /**
     * One UCT test and size of the sweep, run over each UCT transport.
     *
     * @param test the UCT test
     * @param size the message size
     */
    record UctCase(PerfTestType test, long size) {
    }

    /** The UCT cells of the default sweep: the latency tests at 8 B, the bandwidth tests at 8 B and 4 KiB. */
    static final List<UctCase> DEFAULT_UCT = List.of(new UctCase(PerfTestType.AM_LAT, 8),
            new UctCase(PerfTestType.PUT_LAT, 8), new UctCase(PerfTestType.AM_BW, 8),
            new UctCase(PerfTestType.AM_BW, 4096), new UctCase(PerfTestType.PUT_BW, 8),
            new UctCase(PerfTestType.PUT_BW, 4096));

    /** The tests of the paired section, at 8 bytes: the ping-pongs the runner's {@code --paired} has a C loop for. */
    static final List<PerfTestType> PAIRED_TESTS = List.of(PerfTestType.TAG_LAT, PerfTestType.TAG_SYNC_LAT,
            PerfTestType.STREAM_LAT, PerfTestType.UCP_AM_LAT);

    /** The environment variable naming the C loop library of {@code --paired}, which the launcher builds and sets. */
    static final String PAIRED_LIBRARY_VARIABLE = "UCXFFM_PAIRED_LIBRARY";

    private static final String FFM_MAIN = "io.github.ucxffm.bench.perftest.PerfTest";
    private static final List<String> JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED",
            "-Ducxffm.leakDetection=false", "-XX:+UseSerialGC", "-Xms128m", "-Xmx256m", "-XX:-UsePerfData");

    /**
     * What to compare and how long.
     *
     * @param repetitions runs per implementation and cell
     * @param sizes       message sizes
     * @param tests       tests
     * @param transports  transport names ({@code shm}, {@code tcp}, or a {@code UCX_TLS} value)
     * @param impls       implementations
     * @param scale       factor on the default iteration counts
     * @param iterations  a fixed iteration count for every cell, or 0 for the defaults
     * @param out         the directory results go into
     * @param timeout     seconds a run may take before it is killed
     * @param root        the repository, where the runners' jars are
     * @param nativeCmd   the {@code ucx_perftest} command
     * @param keepLogs    keep the output of successful runs too
     * @param retries     how many times a failed run is tried again (a connection the loaded machine let time out)
     * @param ranks       the percentile ranks each latency cell runs with ({@code -R}), one run per rank; 50 first
     * @param sections    the parts of the comparison to run
     * @param uctTransports the UCT transports ({@code -x}) the UCT cells run over
     * @param uct         the UCT tests and sizes, run over each of {@code uctTransports} (JUCX has no UCT)
     */
    record Options(int repetitions, List<Long> sizes, List<PerfTestType> tests, List<String> transports,
                   List<Impl> impls, double scale, long iterations, Path out, int timeout, Path root,
                   String nativeCmd, boolean keepLogs, int retries, List<Double> ranks, List<Section> sections,
                   List<String> uctTransports, List<UctCase> uct) {

        /** The percentile ranks of latency cells when none are given. */
        static final List<Double> DEFAULT_RANKS = List.of(50.0, 99.0, 99.9);

        static Options parse(String... args) {
            int reps = 3;
            List<Long> sizes = List.of(8L, 4096L, 65536L, 1048576L);
            List<PerfTestType> tests = List.of(PerfTestType.TAG_LAT, PerfTestType.TAG_BW, PerfTestType.UCP_PUT_BW,
                    PerfTestType.STREAM_LAT, PerfTestType.UCP_AM_LAT);
            List<String> transports = List.of("shm", "tcp");
            List<Impl> impls = List.of(Impl.NATIVE, Impl.FFM, Impl.JUCX);
            double scale = 1.0;
            long iterations = 0;
            Path root = Path.of(".").toAbsolutePath().normalize();
            Path out = null;
            int timeout = 120;
            String nativeCmd = "ucx_perftest";
            boolean keepLogs = false;
            int retries = 1;
            List<Double> ranks = DEFAULT_RANKS;
            List<Section> sections = List.of(Section.MAIN, Section.WAKEUP, Section.THREADS, Section.PAIRED);
            List<String> uctTransports = List.of("posix", "tcp");
            List<UctCase> uct = DEFAULT_UCT;
            List<PerfTestType> uctTests = null;
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("--quick")) {
                    reps = 1;
                    sizes = List.of(8L, 65536L);
                    tests = List.of(PerfTestType.TAG_LAT, PerfTestType.TAG_BW);
                    uct = List.of();
                    scale = 0.05;
                    sections = List.of(Section.MAIN, Section.WAKEUP, Section.THREADS);
                    continue;
                }
                if (a.equals("--uct")) {
                    tests = List.of(); // the UCT cells alone: no UCP cell, no wakeup or threads section
                    sections = List.of(Section.MAIN);
                    continue;
                }
                if (a.equals("--no-uct")) {
                    uct = List.of();
                    continue;
                }
                if (a.equals("--keep-logs")) {
                    keepLogs = true;
                    continue;
                }
                if (a.equals("-h") || a.equals("--help")) {
                    throw new IllegalArgumentException("help");
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("option " + a + " needs a value (see --help)");
                }
                String v = args[++i];
                switch (a) {
                    case "--reps" -> reps = (int) positive(a, v);
                    case "--sizes" -> {
                        List<Long> s = new ArrayList<>();
                        for (String x : v.split(",")) {
                            s.add(size(x.trim()));
                        }
                        sizes = s;
                    }
                    case "--tests" -> {
                        List<PerfTestType> t = new ArrayList<>();
                        List<PerfTestType> u = new ArrayList<>();
                        for (String x : v.split(",")) {
                            PerfTestType test = PerfTestType.byName(x.trim());
                            (test.isUct() ? u : t).add(test);
                        }
                        tests = t;
                        uctTests = u;
                    }
                    case "--uct-transports" -> uctTransports = List.of(v.split(","));
                    case "--transports" -> transports = List.of(v.split(","));
                    case "--impls" -> {
                        List<Impl> l = new ArrayList<>();
                        for (String x : v.split(",")) {
                            l.add(Impl.byLabel(x.trim()));
                        }
                        impls = l;
                    }
                    case "--scale" -> {
                        scale = Double.parseDouble(v);
                        if (!(scale > 0)) {
                            throw new IllegalArgumentException("--scale must be positive");
                        }
                    }
                    case "--iterations" -> iterations = positive(a, v);
                    case "--out" -> out = Path.of(v);
                    case "--timeout" -> timeout = (int) positive(a, v);
                    case "--root" -> root = Path.of(v).toAbsolutePath().normalize();
                    case "--native" -> nativeCmd = v;
                    case "--ranks" -> {
                        List<Double> r = new ArrayList<>();
                        r.add(50.0); // the main table's number
                        for (String x : v.split(",")) {
                            double d;
                            try {
                                d = Double.parseDouble(x.trim());
                            } catch (NumberFormatException e) {
                                throw new IllegalArgumentException("--ranks takes percentile ranks, not '" + x + "'");
                            }
                            if (!(d >= 0 && d <= 100)) {
                                throw new IllegalArgumentException("--ranks takes ranks in [0, 100], not " + x);
                            }
                            if (r.stream().noneMatch(y -> CompareResults.sameRank(y, d))) {
                                r.add(d);
                            }
                        }
                        ranks = List.copyOf(r);
                    }
                    case "--sections" -> {
                        List<Section> l = new ArrayList<>();
                        for (String x : v.split(",")) {
                            try {
                                l.add(Section.valueOf(x.trim().toUpperCase(Locale.ROOT)));
                            } catch (IllegalArgumentException e) {
                                throw new IllegalArgumentException("--sections takes main, wakeup, threads, paired, "
                                        + "not '" + x + "'");
                            }
                        }
                        sections = List.copyOf(l);
                    }
                    case "--retries" -> {
                        retries = Integer.parseInt(v);
                        if (retries < 0) {
                            throw new IllegalArgumentException("--retries must not be negative");
                        }
                    }
                    default -> throw new IllegalArgumentException("unknown option " + a + " (see --help)");
                }
            }
            if (out == null) {
                out = root.resolve("bench").resolve("results");
            }
            if (uctTests != null) {
                // UCT tests named in --tests run at every size of --sizes
                List<UctCase> c = new ArrayList<>();
                for (PerfTestType t : uctTests) {
                    for (long size : sizes) {
                        c.add(new UctCase(t, size));
                    }
                }
                uct = c;
            }
            return new Options(reps, sizes, tests, transports, impls, scale, iterations, out, timeout, root,
                    nativeCmd, keepLogs, retries, ranks, sections, uctTransports, List.copyOf(uct));
        }

        /** The device a UCT transport runs on here: {@code memory} for shared memory, {@code lo} otherwise. */
        static String uctDevice(String tl) {
            return UCT_MEMORY_TRANSPORTS.contains(tl) ? "memory" : "lo";
        }

        /**
         * The data layout ({@code -D}) of a UCT cell: puts are {@code zcopy} over tcp and cma, which have no short
         * put, {@code short} elsewhere; active messages are {@code short} up to 64 bytes and {@code bcopy} above
         * (posix takes short messages of 100 bytes at most).
         */
        static String uctLayout(String tl, PerfTestType test, long size) {
            if (test.operation() == PerfTestType.Operation.PUT) {
                return tl.equals("tcp") || tl.equals("cma") ? "zcopy" : "short";
            }
            return size <= 64 ? "short" : "bcopy";
        }

        private static long positive(String opt, String v) {
            long n;
            try {
                n = Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(opt + " takes a number, not '" + v + "'");
            }
            if (n <= 0) {
                throw new IllegalArgumentException(opt + " must be positive");
            }
            return n;
        }

        /** {@code 8}, {@code 4k}, {@code 64KiB}, {@code 1m}... ({@link CompareResults#parseSize}). */
        static long size(String v) {
            return CompareResults.parseSize(v);
        }

        /** The {@code UCX_TLS} a transport name runs with. */
        String ucxTls(String transport) {
            return DEFAULT_TRANSPORTS.getOrDefault(transport, transport);
        }

        /**
         * The iterations of a cell: about the same time per run whatever the size, bounded for tiny messages.
         * Shared memory gets four times the count of other transports.
         */
        long iterationsFor(String transport, long size) {
            if (iterations > 0) {
                return iterations;
            }
            double budget = transport.equals("shm") || UCT_MEMORY_TRANSPORTS.contains(transport) ? 2.1e9 : 5.2e8;
            double n = budget / (size + 10_500.0) * scale;
            return Math.max(100, Math.round(n));
        }
    }

    static final String USAGE = """
            usage: ./ucx-ffm bench compare [OPTIONS]

              Runs ucx_perftest (native), the ucx-ffm runner and the JUCX runner, server and client processes on
              127.0.0.1, alternating them, and prints medians with ratios; writes runs.csv, summary.csv, stats.csv,
              table.txt and compare.png under bench/results/compare-DATE/.

              --reps N           runs per implementation and cell (3)
              --sizes LIST       message sizes, e.g. 8,4k,64k,1m (8,4096,65536,1048576)
              --tests LIST       ucx_perftest test names (tag_lat,tag_bw,ucp_put_bw,stream_lat,ucp_am_lat); UCT tests
                                 (am_lat, put_lat, am_bw, put_bw) among them run at every size over --uct-transports
              --transports LIST  shm (UCX_TLS=shm,tcp), tcp (UCX_TLS=tcp), or UCX_TLS values (shm,tcp)
              --uct              the UCT cells alone: am_lat and put_lat at 8 B, am_bw and put_bw at 8 B and 4 KiB
              --no-uct           no UCT cells (the default sweep has those above, native and ucx-ffm only)
              --uct-transports LIST  UCT transports: posix, sysv, cma (device memory), tcp (device lo) (posix,tcp);
                                 puts over tcp and cma are zcopy, active messages above 64 B bcopy, the rest short
              --impls LIST       native,ucx-ffm,jucx (all three)
              --scale F          factor on the default iteration counts (1.0)
              --iterations N     the same iteration count for every cell, instead of the defaults
              --timeout S        seconds a run may take before it is killed (120)
              --out DIR          where results go (bench/results)
              --native CMD       the ucx_perftest command (ucx_perftest)
              --keep-logs        keep the output of successful runs (failed runs' output is always kept)
              --retries N        try a failed run again N times (1)
              --ranks LIST       percentile ranks each latency cell runs with, one run per rank and
                                 implementation (50,99,99.9); 50 is always run
              --sections LIST    main (the sweep), wakeup (8-byte tag_lat polling and sleeping, with CPU
                                 time), threads (8-byte tag_bw with 1 and 2 threads), paired (the ucx-ffm
                                 runner's --paired at 8 B: tag_lat, tag_sync_lat, stream_lat, ucp_am_lat, each
                                 run giving ucx-ffm, C and plain FFM on one endpoint; needs UCXFFM_PAIRED_LIBRARY,
                                 which ./ucx-ffm bench compare builds and sets) (all four)
              --quick            one run each of tag_lat and tag_bw at 8 B and 64 KiB, few iterations, no UCT
            """;

    private final Options options;
    private final PrintStream out;
    private final PrintStream err;
    private final Set<Process> live = ConcurrentHashMap.newKeySet();
    private final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private Compare(Options options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the comparison.
     *
     * @param args see {@link #USAGE}
     */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            boolean help = "help".equals(e.getMessage());
            (help ? System.out : System.err).print((help ? "" : "bench compare: " + e.getMessage() + "\n\n")
                    + USAGE);
            System.exit(help ? 0 : 1);
            return;
        }
        Compare c = new Compare(o, System.out, System.err);
        Thread hook = new Thread(c::killAll, "compare-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        int status;
        try {
            status = c.run();
        } catch (IOException e) {
            System.err.println("bench compare: " + e.getMessage());
            status = 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = 130;
        } finally {
            c.killAll();
        }
        System.exit(status);
    }

    /** The progress line's number: the percentile asked for, or the message rate for threads, else the metric. */
    private static String progressText(Job job, Run r) {
        Cell c = job.cell();
        PerfFinal f = r.result();
        if (c.section() == Section.THREADS) {
            return String.format(Locale.ROOT, "%.0f msg/s", f.rateOverall());
        }
        String text = CompareResults.isLatency(c.test())
                ? String.format(Locale.ROOT, "%.3f p%s us, avg %.3f us", f.percentileMicros(),
                        CompareResults.rankText(job.rank()), f.overallMicros())
                : String.format(Locale.ROOT, "%.3f %s", CompareResults.metric(c.test(), f),
                        CompareResults.metricLabel(c.test()));
        return Double.isFinite(r.cpuSeconds()) ? text + String.format(Locale.ROOT, ", cpu %.2f s", r.cpuSeconds())
                : text;
    }

    private void killAll() {
        for (Process p : live) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        live.clear();
    }

    private int run() throws IOException, InterruptedException {
        Path ffmJar = options.root().resolve("bench/target/benchmarks.jar");
        Path jucxJar = options.root().resolve("bench-jucx/target/ucx-ffm-bench-jucx.jar");
        if (options.impls().contains(Impl.FFM) && !Files.isRegularFile(ffmJar)) {
            throw new IOException("no " + ffmJar + ": build the bench module first");
        }
        if (options.impls().contains(Impl.JUCX) && !Files.isRegularFile(jucxJar)) {
            throw new IOException("no " + jucxJar + ": build the bench-jucx module first");
        }
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path dir = options.out().resolve("compare-" + stamp);
        Path logs = dir.resolve("logs");
        Files.createDirectories(logs);
        Map<String, String> implementations = new LinkedHashMap<>();
        implementations.put("native", options.nativeCmd());
        implementations.put("jucx", "org.openucx:jucx 1.15.0");
        String environment = Environment.describe(implementations);
        out.println(environment);
        List<Job> jobs = plan(options);
        if (jobs.stream().anyMatch(j -> j.cell().section() == Section.PAIRED)) {
            String lib = System.getenv(PAIRED_LIBRARY_VARIABLE);
            if (lib == null || !Files.isRegularFile(Path.of(lib))) {
                throw new IOException("the paired section needs " + PAIRED_LIBRARY_VARIABLE + ", the C loop built "
                        + "from bench/native/ucp_paired.c (./ucx-ffm bench compare builds and sets it), or leave it "
                        + "out with --sections main,wakeup,threads");
            }
        }
        out.println("bench compare: " + jobs.size() + " runs into " + dir);
        out.flush();
        CompareResults results = new CompareResults();
        long started = System.nanoTime();
        int n = 0;
        for (Job job : jobs) {
            n++;
            Outcome o = runOne(job, ffmJar, jucxJar, logs, n, 1);
            for (int attempt = 2; !o.run().ok() && attempt <= options.retries() + 1; attempt++) {
                err.printf(Locale.ROOT, "[%d/%d] %s %s %s %s #%d failed (%s); trying again%n", n, jobs.size(),
                        job.cell().transport(), job.cell().test().testName(),
                        CompareResults.formatSize(job.cell().size()), job.impl().label(), job.repetition(),
                        o.run().error());
                o = runOne(job, ffmJar, jucxJar, logs, n, attempt);
            }
            Run r = o.run();
            String what;
            if (job.cell().section() == Section.PAIRED) {
                results.addPaired(new PairedRun(job.cell(), job.repetition(), o.paired(), r.error(), r.seconds()));
                what = r.ok() ? String.format(Locale.ROOT, "ffm/C %.3f, plainFFM/C %.3f, ffm/plainFFM %.3f",
                        o.paired().bindingOverNative(), o.paired().ffmOverNative(), o.paired().bindingOverFfm())
                        : "FAILED: " + r.error();
            } else {
                results.add(r);
                what = r.ok() ? progressText(job, r) : "FAILED: " + r.error();
            }
            err.printf(Locale.ROOT, "[%d/%d] %-4s %-11s %7s %-5s %-8s #%d: %s (%.1f s)%n", n, jobs.size(),
                    job.cell().transport(), job.cell().test().testName(), CompareResults.formatSize(job.cell().size()),
                    job.cell().mode(), job.impl().label(), job.repetition(), what, r.seconds());
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        try (Stream<Path> left = Files.list(logs)) {
            if (left.findAny().isEmpty()) {
                Files.delete(logs); // only failed runs keep their output
            }
        }
        String table = results.table(options.repetitions()) + results.secondaryTables() + results.pairedTable();
        out.println();
        out.print(table);
        Files.writeString(dir.resolve("table.txt"), table, StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("runs.csv"), results.runsCsv(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("summary.csv"), results.summaryCsv(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("stats.csv"), results.statsCsv(), StandardCharsets.UTF_8);
        if (!results.pairedRuns().isEmpty()) {
            Files.writeString(dir.resolve("paired.csv"), results.pairedCsv(), StandardCharsets.UTF_8);
        }
        String after = String.format(Locale.ROOT, "finished after %.1f min; load average %s", minutes,
                Environment.loadAverage());
        Files.writeString(dir.resolve("environment.txt"), environment + "\n" + after + "\n", StandardCharsets.UTF_8);
        LogPanel.writeOrTell("bench compare", () -> ComparePlot.render(results), dir.resolve("compare.png"), err);
        out.println();
        out.println(after);
        out.println("results: " + dir);
        long failed = results.runs().stream().filter(r -> !r.ok()).count()
                + results.pairedRuns().stream().filter(r -> !r.ok()).count();
        return failed == 0 ? 0 : 2;
    }

    /**
     * One run to do.
     *
     * @param impl       the implementation
     * @param cell       the cell (with its waiting mode and threads)
     * @param repetition 1, 2, 3...
     * @param iterations {@code -n}
     * @param rank       {@code -R}
     */
    record Job(Impl impl, Cell cell, int repetition, long iterations, double rank) {
        Job(Impl impl, Cell cell, int repetition, long iterations) {
            this(impl, cell, repetition, iterations, 50.0);
        }
    }

    /**
     * The runs, in order: repetition outermost, then transport, test, size, and the implementations alternating
     * innermost. Atomic tests run at 8 bytes only; JUCX skips what its API lacks.
     *
     * @param options what to compare
     * @return the runs
     */
    static List<Job> plan(Options options) {
        List<Job> jobs = new ArrayList<>();
        for (int rep = 1; rep <= options.repetitions(); rep++) {
            for (String transport : options.sections().contains(Section.MAIN) ? options.transports()
                    : List.<String>of()) {
                for (PerfTestType test : options.tests()) {
                    for (long size : options.sizes()) {
                        long s = test.operation().isAtomic() ? 8 : size;
                        Cell cell = new Cell(transport, test, s);
                        List<Double> ranks = CompareResults.isLatency(test) ? options.ranks() : List.of(50.0);
                        for (double rank : ranks) {
                            for (Impl impl : options.impls()) {
                                if (impl == Impl.JUCX && (test.operation().isAtomic()
                                        || test.operation() == PerfTestType.Operation.TAG_SYNC)) {
                                    continue; // JUCX 1.15 has no atomics and no synchronous tag send
                                }
                                jobs.add(new Job(impl, cell, rep, options.iterationsFor(transport, s), rank));
                            }
                        }
                        if (test.operation().isAtomic()) {
                            break;
                        }
                    }
                }
            }
            for (String tl : options.sections().contains(Section.MAIN) ? options.uctTransports()
                    : List.<String>of()) {
                for (UctCase c : options.uct()) {
                    if (tl.equals("cma") && c.test().operation() == PerfTestType.Operation.AM) {
                        continue; // cma has no active messages
                    }
                    Cell cell = new Cell(tl, c.test(), c.size());
                    List<Double> ranks = CompareResults.isLatency(c.test()) ? options.ranks() : List.of(50.0);
                    for (double rank : ranks) {
                        for (Impl impl : options.impls()) {
                            if (impl != Impl.JUCX) { // JUCX binds UCP only: its column stays empty
                                jobs.add(new Job(impl, cell, rep, options.iterationsFor(tl, c.size()), rank));
                            }
                        }
                    }
                }
            }
            for (String transport : options.transports()) {
                if (options.sections().contains(Section.WAKEUP)) {
                    for (boolean sleep : new boolean[] {false, true}) {
                        Cell cell = new Cell(transport, PerfTestType.TAG_LAT, 8, Section.WAKEUP, sleep, 1);
                        for (Impl impl : options.impls()) {
                            jobs.add(new Job(impl, cell, rep, options.iterationsFor(transport, 8)));
                        }
                    }
                }
                if (options.sections().contains(Section.PAIRED) && options.impls().contains(Impl.FFM)) {
                    for (PerfTestType test : PAIRED_TESTS) {
                        // three kinds of block share the run: three times a main run's iterations
                        Cell cell = new Cell(transport, test, 8, Section.PAIRED, false, 1);
                        jobs.add(new Job(Impl.FFM, cell, rep, 3 * options.iterationsFor(transport, 8)));
                    }
                }
                if (options.sections().contains(Section.THREADS)) {
                    for (int threads = 1; threads <= 2; threads++) {
                        Cell cell = new Cell(transport, PerfTestType.TAG_BW, 8, Section.THREADS, false, threads);
                        for (Impl impl : options.impls()) {
                            jobs.add(new Job(impl, cell, rep, options.iterationsFor(transport, 8)));
                        }
                    }
                }
            }
        }
        return jobs;
    }

    private List<String> command(Impl impl, Path ffmJar, Path jucxJar, List<String> args) {
        List<String> c = new ArrayList<>();
        switch (impl) {
            case NATIVE -> {
                c.add(options.nativeCmd());
                c.addAll(NativePerftest.mpiOff(options.nativeCmd()));
            }
            case FFM -> {
                c.add(java);
                c.addAll(JVM_FLAGS);
                c.addAll(List.of("-cp", ffmJar.toString(), FFM_MAIN));
            }
            case JUCX -> {
                c.add(java);
                c.addAll(JVM_FLAGS);
                c.addAll(List.of("-jar", jucxJar.toString()));
            }
        }
        c.addAll(args);
        return c;
    }

    private Process start(List<String> command, String tls, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        if (tls != null) {
            pb.environment().put("UCX_TLS", tls);
        } else {
            pb.environment().remove("UCX_TLS"); // a UCT test names its transport with -x
        }
        pb.environment().put("LC_ALL", "C");
        Process p = pb.start();
        live.add(p);
        return p;
    }

    private void stop(Process p) throws InterruptedException {
        if (p.isAlive()) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        live.remove(p);
    }

    /**
     * A run and, for a paired run, its figures.
     *
     * @param run    the run
     * @param paired the paired figures, or {@code null}
     */
    record Outcome(Run run, PairedBlocks.Figures paired) {
    }

    private Outcome runOne(Job job, Path ffmJar, Path jucxJar, Path logs, int number, int attempt)
            throws IOException, InterruptedException {
        Cell cell = job.cell();
        boolean uct = cell.test().isUct();
        String tls = uct ? null : options.ucxTls(cell.transport());
        String id = String.format(Locale.ROOT, "%03d-%s-%s-%s-%d-%s-R%s-r%d-a%d", number, job.impl().label(),
                cell.transport().replace(',', '+'), cell.test().testName(), cell.size(),
                cell.mode().replace(" ", "").replace("-", "main"), CompareResults.rankText(job.rank()),
                job.repetition(), attempt);
        Path serverLog = logs.resolve(id + ".server.log");
        Path clientLog = logs.resolve(id + ".client.log");
        long t0 = System.nanoTime();
        String error = null;
        PerfFinal result = null;
        PairedBlocks.Figures paired = null;
        long warmupDone = 0;
        int port = NativePerftest.freePort();
        // -E sleep and -T go to both sides: the Java servers create their context, which needs the wakeup feature for
        // sleeping and shared workers for threads, before the client tells them the test (ucx_perftest's server
        // takes both from the client and ignores its own)
        List<String> serverArgs = new ArrayList<>(List.of("-p", Integer.toString(port)));
        long warmup = (job.iterations() + 9) / 10;
        List<String> clientArgs = new ArrayList<>(List.of("127.0.0.1", "-p", Integer.toString(port), "-t",
                cell.test().testName(), "-s", Long.toString(cell.size()), "-n", Long.toString(job.iterations()),
                "-w", Long.toString(warmup), "-R", CompareResults.rankText(job.rank())));
        if (uct) {
            String dev = Options.uctDevice(cell.transport());
            clientArgs.addAll(List.of("-x", cell.transport(), "-d", dev, "-D", Options.uctLayout(cell.transport(),
                    cell.test(), cell.size())));
            if (job.impl() == Impl.FFM) {
                serverArgs.addAll(List.of("-d", dev)); // the ucx-ffm server serves UCT clients when given -d
            } else {
                // ucx_perftest 1.23's server refuses a UCT test without its own -d (1.13's takes the client's)
                serverArgs.addAll(List.of("-x", cell.transport(), "-d", dev));
            }
        }
        if (cell.sleep()) {
            serverArgs.addAll(List.of("-E", "sleep"));
            clientArgs.addAll(List.of("-E", "sleep"));
        }
        if (cell.section() == Section.PAIRED) {
            clientArgs.add("--paired"); // client only: the server follows the client's request
        }
        if (cell.threads() > 1) {
            // to the server too: the Java servers' context must allow a worker per thread before the client connects
            serverArgs.addAll(List.of("-T", Integer.toString(cell.threads())));
            clientArgs.addAll(List.of("-T", Integer.toString(cell.threads())));
        }
        List<String> serverCommand = command(job.impl(), ffmJar, jucxJar, serverArgs);
        List<String> clientCommand = command(job.impl(), ffmJar, jucxJar, clientArgs);
        double reapedBefore = ProcessCpu.reapedChildrenSeconds();
        Process server = start(serverCommand, tls, serverLog);
        CpuMark mark = new CpuMark(port, server);
        Thread sampler = Thread.ofPlatform().daemon().name("compare-cpu").start(mark);
        Process client = null;
        try {
            if (!NativePerftest.awaitListening(port, server, 30)) {
                error = server.isAlive() ? "the server did not listen within 30 s" : "the server exited with "
                        + server.exitValue();
            } else {
                client = start(clientCommand, tls, clientLog);
                mark.client = client;
                if (!client.waitFor(options.timeout(), TimeUnit.SECONDS)) {
                    error = "timed out after " + options.timeout() + " s";
                } else {
                    String text = Files.readString(clientLog, StandardCharsets.UTF_8);
                    Optional<PerfFinal> f = PerfFinal.lastIn(text);
                    if (client.exitValue() != 0) {
                        error = "client exited with " + client.exitValue() + ": " + NativePerftest.lastLine(text);
                    } else if (f.isEmpty()) {
                        error = "no Final: line in the client's output";
                    } else if (cell.section() == Section.PAIRED
                            && (paired = PairedBlocks.parse(text).orElse(null)) == null) {
                        error = "no Paired: and Paired FFM: lines in the client's output";
                    } else {
                        result = f.get();
                        warmupDone = warmupDone(text, job.impl(), warmup);
                    }
                }
                if (!server.waitFor(error == null ? 10 : 1, TimeUnit.SECONDS) && error == null) {
                    err.println("bench compare: " + id + ": the server did not exit; killed");
                }
            }
        } finally {
            mark.stop = true;
            if (client != null) {
                stop(client);
            }
            stop(server);
            sampler.join(1000);
        }
        // the children's whole CPU time is exact once both are reaped; what they had used when they connected
        // (the JVM's start, context creation) is taken off
        double cpu = error == null && mark.marked ? ProcessCpu.reapedChildrenSeconds() - reapedBefore
                - mark.serverAtMark - mark.clientAtMark : Double.NaN;
        double loopCpu = error == null ? loopCpu(serverLog) + loopCpu(clientLog) : Double.NaN;
        if (error == null && !options.keepLogs()) {
            Files.deleteIfExists(serverLog);
            Files.deleteIfExists(clientLog);
        }
        return new Outcome(new Run(job.impl(), cell, job.repetition(), job.iterations(), result, error,
                (System.nanoTime() - t0) / 1e9, job.rank(), cpu, warmupDone, loopCpu), paired);
    }

    /** The CPU time of its measured loop a Java runner printed ({@link PerfRunner#CPU_LINE}); NaN if none. */
    static double loopCpu(Path log) {
        try {
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                int at = line.indexOf(PerfRunner.CPU_LINE);
                if (at >= 0) {
                    String v = line.substring(at + PerfRunner.CPU_LINE.length()).replace(" s", "").trim();
                    return Double.parseDouble(v);
                }
            }
        } catch (IOException | RuntimeException e) {
            // no log, or not such a line
        }
        return Double.NaN;
    }

    /** The client's warm-up line of the Java runners: rounds of iterations. */
    private static final Pattern WARMUP_LINE =
            Pattern.compile("warm-up: (\\d+) rounds? of (\\d+) iterations");

    /**
     * The warm-up iterations a client made: what the Java runners print, else what {@code ucx_perftest} runs (the
     * {@code -w} given, at most a tenth of {@code -n}, which Compare asks for).
     */
    static long warmupDone(String clientOutput, Impl impl, long asked) {
        Matcher m = WARMUP_LINE.matcher(clientOutput);
        if (impl != Impl.NATIVE && m.find()) {
            return Long.parseLong(m.group(1)) * Long.parseLong(m.group(2));
        }
        return asked;
    }

    /**
     * Watches a run for the moment client and server connect, and takes the CPU time each has used by then: what
     * is measured is from there to their exit (warm-up, measured loop and teardown), the same for every
     * implementation, so that a JVM's start and a context's creation do not count.
     */
    private static final class CpuMark implements Runnable {
        private final int port;
        private final Process server;
        volatile Process client;
        volatile boolean stop;
        volatile boolean marked;
        volatile double serverAtMark;
        volatile double clientAtMark;

        CpuMark(int port, Process server) {
            this.port = port;
            this.server = server;
        }

        @Override
        public void run() {
            while (!stop && !marked) {
                Process c = client;
                if (c != null && ProcessCpu.connected(port)) {
                    double s = ProcessCpu.seconds(server.pid());
                    double t = ProcessCpu.seconds(c.pid());
                    if (!Double.isNaN(s) && !Double.isNaN(t)) {
                        serverAtMark = s;
                        clientAtMark = t;
                        marked = true;
                    }
                    return;
                }
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
}
