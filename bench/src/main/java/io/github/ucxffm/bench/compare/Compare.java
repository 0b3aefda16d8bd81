package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.compare.CompareResults.Cell;
import io.github.ucxffm.bench.compare.CompareResults.Impl;
import io.github.ucxffm.bench.compare.CompareResults.Run;
import io.github.ucxffm.bench.perftest.PerfFinal;
import io.github.ucxffm.bench.perftest.PerfTestType;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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
     */
    record Options(int repetitions, List<Long> sizes, List<PerfTestType> tests, List<String> transports,
                   List<Impl> impls, double scale, long iterations, Path out, int timeout, Path root,
                   String nativeCmd, boolean keepLogs, int retries) {

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
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("--quick")) {
                    reps = 1;
                    sizes = List.of(8L, 65536L);
                    tests = List.of(PerfTestType.TAG_LAT, PerfTestType.TAG_BW);
                    scale = 0.05;
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
                        for (String x : v.split(",")) {
                            t.add(PerfTestType.byName(x.trim()));
                        }
                        tests = t;
                    }
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
            return new Options(reps, sizes, tests, transports, impls, scale, iterations, out, timeout, root,
                    nativeCmd, keepLogs, retries);
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

        /** {@code 8}, {@code 4k}, {@code 64KiB}, {@code 1m}... */
        static long size(String v) {
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
                long n = Long.parseLong(s.trim()) * unit;
                if (n <= 0) {
                    throw new NumberFormatException();
                }
                return n;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a message size: '" + v + "'");
            }
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
            double budget = transport.equals("shm") ? 2.1e9 : 5.2e8;
            double n = budget / (size + 10_500.0) * scale;
            return Math.max(100, Math.round(n));
        }
    }

    static final String USAGE = """
            usage: ./ucx-ffm bench compare [OPTIONS]

              Runs ucx_perftest (native), the ucx-ffm runner and the JUCX runner, server and client processes on
              127.0.0.1, alternating them, and prints medians with ratios; writes runs.csv, summary.csv, table.txt
              and compare.png under bench/results/compare-DATE/.

              --reps N           runs per implementation and cell (3)
              --sizes LIST       message sizes, e.g. 8,4k,64k,1m (8,4096,65536,1048576)
              --tests LIST       ucx_perftest test names (tag_lat,tag_bw,ucp_put_bw,stream_lat,ucp_am_lat)
              --transports LIST  shm (UCX_TLS=shm,tcp), tcp (UCX_TLS=tcp), or UCX_TLS values (shm,tcp)
              --impls LIST       native,ucx-ffm,jucx (all three)
              --scale F          factor on the default iteration counts (1.0)
              --iterations N     the same iteration count for every cell, instead of the defaults
              --timeout S        seconds a run may take before it is killed (120)
              --out DIR          where results go (bench/results)
              --native CMD       the ucx_perftest command (ucx_perftest)
              --keep-logs        keep the output of successful runs (failed runs' output is always kept)
              --retries N        try a failed run again N times (1)
              --quick            one run each of tag_lat and tag_bw at 8 B and 64 KiB, few iterations
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
        String environment = Environment.describe(options.nativeCmd());
        out.println(environment);
        List<Job> jobs = plan(options);
        out.println("bench compare: " + jobs.size() + " runs into " + dir);
        out.flush();
        CompareResults results = new CompareResults();
        long started = System.nanoTime();
        int n = 0;
        for (Job job : jobs) {
            n++;
            Run r = runOne(job, ffmJar, jucxJar, logs, n, 1);
            for (int attempt = 2; !r.ok() && attempt <= options.retries() + 1; attempt++) {
                err.printf(Locale.ROOT, "[%d/%d] %s %s %s %s #%d failed (%s); trying again%n", n, jobs.size(),
                        job.cell().transport(), job.cell().test().testName(),
                        CompareResults.formatSize(job.cell().size()), job.impl().label(), job.repetition(), r.error());
                r = runOne(job, ffmJar, jucxJar, logs, n, attempt);
            }
            results.add(r);
            String what = r.ok() ? String.format(Locale.ROOT, "%.3f %s", CompareResults.metric(job.cell().test(),
                    r.result()), CompareResults.metricLabel(job.cell().test())) : "FAILED: " + r.error();
            err.printf(Locale.ROOT, "[%d/%d] %-4s %-11s %7s %-8s #%d: %s (%.1f s)%n", n, jobs.size(),
                    job.cell().transport(), job.cell().test().testName(), CompareResults.formatSize(job.cell().size()),
                    job.impl().label(), job.repetition(), what, r.seconds());
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        try (Stream<Path> left = Files.list(logs)) {
            if (left.findAny().isEmpty()) {
                Files.delete(logs); // only failed runs keep their output
            }
        }
        String table = results.table(options.repetitions());
        out.println();
        out.print(table);
        Files.writeString(dir.resolve("table.txt"), table, StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("runs.csv"), results.runsCsv(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("summary.csv"), results.summaryCsv(), StandardCharsets.UTF_8);
        String after = String.format(Locale.ROOT, "finished after %.1f min; load average %s", minutes,
                Environment.loadAverage());
        Files.writeString(dir.resolve("environment.txt"), environment + "\n" + after + "\n", StandardCharsets.UTF_8);
        try {
            ComparePlot.write(results, dir.resolve("compare.png"));
        } catch (RuntimeException | Error e) {
            err.println("bench compare: no plot (" + e + "); fonts for java.awt may be missing "
                    + "(Debian: apt-get install fontconfig fonts-dejavu-core)");
        }
        out.println();
        out.println(after);
        out.println("results: " + dir);
        long failed = results.runs().stream().filter(r -> !r.ok()).count();
        return failed == 0 ? 0 : 2;
    }

    /** One run to do. */
    record Job(Impl impl, Cell cell, int repetition, long iterations) {
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
            for (String transport : options.transports()) {
                for (PerfTestType test : options.tests()) {
                    for (long size : options.sizes()) {
                        long s = test.operation().isAtomic() ? 8 : size;
                        Cell cell = new Cell(transport, test, s);
                        for (Impl impl : options.impls()) {
                            if (impl == Impl.JUCX && (test.operation().isAtomic()
                                    || test.operation() == PerfTestType.Operation.TAG_SYNC)) {
                                continue; // JUCX 1.15 has no atomics and no synchronous tag send
                            }
                            jobs.add(new Job(impl, cell, rep, options.iterationsFor(transport, s)));
                        }
                        if (test.operation().isAtomic()) {
                            break;
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
                c.addAll(nativeMpiOff());
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

    /** Cached answer of {@link #nativeMpiOff()}. */
    private List<String> nativeMpiOff;

    /**
     * {@code -P 0} where the native {@code ucx_perftest} has MPI mode (Debian 13's UCX 1.18 is built with MPI and
     * enables it by default, so a lone server exits with "should be run with exactly 2 processes"); nothing where it
     * has no {@code -P} option (1.13, 1.23 as Debian builds them), which would refuse it.
     */
    private List<String> nativeMpiOff() {
        if (nativeMpiOff == null) {
            List<String> off = List.of();
            try {
                Process p = new ProcessBuilder(options.nativeCmd(), "-h").redirectErrorStream(true).start();
                String help = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                p.waitFor(10, TimeUnit.SECONDS);
                if (help.contains("-P <0|1>")) {
                    off = List.of("-P", "0");
                }
            } catch (IOException e) {
                // no such command: the native runs fail and say so
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            nativeMpiOff = off;
        }
        return nativeMpiOff;
    }

    private Process start(List<String> command, String tls, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("UCX_TLS", tls);
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

    private Run runOne(Job job, Path ffmJar, Path jucxJar, Path logs, int number, int attempt) throws IOException,
            InterruptedException {
        Cell cell = job.cell();
        String tls = options.ucxTls(cell.transport());
        String id = String.format(Locale.ROOT, "%03d-%s-%s-%s-%d-r%d-a%d", number, job.impl().label(),
                cell.transport().replace(',', '+'), cell.test().testName(), cell.size(), job.repetition(), attempt);
        Path serverLog = logs.resolve(id + ".server.log");
        Path clientLog = logs.resolve(id + ".client.log");
        long t0 = System.nanoTime();
        String error = null;
        PerfFinal result = null;
        int port = freePort();
        Process server = start(command(job.impl(), ffmJar, jucxJar, List.of("-p", Integer.toString(port))), tls,
                serverLog);
        Process client = null;
        try {
            if (!awaitListening(port, server, 30)) {
                error = server.isAlive() ? "the server did not listen within 30 s" : "the server exited with "
                        + server.exitValue();
            } else {
                long warmup = (job.iterations() + 9) / 10;
                client = start(command(job.impl(), ffmJar, jucxJar, List.of("127.0.0.1", "-p",
                        Integer.toString(port), "-t", cell.test().testName(), "-s", Long.toString(cell.size()),
                        "-n", Long.toString(job.iterations()), "-w", Long.toString(warmup))), tls, clientLog);
                if (!client.waitFor(options.timeout(), TimeUnit.SECONDS)) {
                    error = "timed out after " + options.timeout() + " s";
                } else {
                    String text = Files.readString(clientLog, StandardCharsets.UTF_8);
                    Optional<PerfFinal> f = PerfFinal.lastIn(text);
                    if (client.exitValue() != 0) {
                        error = "client exited with " + client.exitValue() + ": " + lastLine(text);
                    } else if (f.isEmpty()) {
                        error = "no Final: line in the client's output";
                    } else {
                        result = f.get();
                    }
                }
                if (!server.waitFor(error == null ? 10 : 1, TimeUnit.SECONDS) && error == null) {
                    err.println("bench compare: " + id + ": the server did not exit; killed");
                }
            }
        } finally {
            if (client != null) {
                stop(client);
            }
            stop(server);
        }
        if (error == null && !options.keepLogs()) {
            Files.deleteIfExists(serverLog);
            Files.deleteIfExists(clientLog);
        }
        return new Run(job.impl(), cell, job.repetition(), job.iterations(), result, error,
                (System.nanoTime() - t0) / 1e9);
    }

    private static String lastLine(String text) {
        String[] lines = text.strip().split("\\R");
        for (int i = lines.length - 1; i >= 0; i--) {
            if (lines[i].contains("failed") || lines[i].contains("ERROR") || lines[i].contains("error")) {
                return lines[i].strip();
            }
        }
        return lines.length == 0 ? "(no output)" : lines[lines.length - 1].strip();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
            return s.getLocalPort();
        }
    }

    /**
     * Waits until something listens on {@code port}, looking at the kernel's socket tables: a test connection would
     * be taken by {@code ucx_perftest} as its one client.
     */
    private static boolean awaitListening(int port, Process server, int seconds) throws InterruptedException,
            IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        Path tcp = Path.of("/proc/net/tcp");
        if (!Files.isReadable(tcp)) {
            Thread.sleep(2000); // not Linux: give the server time
            return server.isAlive();
        }
        while (System.nanoTime() - deadline < 0) {
            if (!server.isAlive()) {
                return false;
            }
            if (isListening(port, Files.readAllLines(tcp))
                    || Files.isReadable(Path.of("/proc/net/tcp6"))
                    && isListening(port, Files.readAllLines(Path.of("/proc/net/tcp6")))) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    /**
     * Whether a {@code /proc/net/tcp} table has a listening socket on the port.
     *
     * @param port  the port
     * @param table the lines of the table
     * @return {@code true} if some line's local port is {@code port} in state LISTEN ({@code 0A})
     */
    static boolean isListening(int port, List<String> table) {
        String hex = String.format(Locale.ROOT, ":%04X", port);
        for (String line : table) {
            String[] f = line.trim().split("\\s+");
            if (f.length > 3 && f[1].endsWith(hex) && f[3].equals("0A")) {
                return true;
            }
        }
        return false;
    }

    /** What the results were measured on. */
    static final class Environment {
        private Environment() {
        }

        static String describe(String nativeCmd) {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("date", LocalDateTime.now().toString());
            m.put("cpu", cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores");
            m.put("kernel", System.getProperty("os.name") + " " + System.getProperty("os.version"));
            m.put("system", system()); // in a release's root (--release), that release's
            m.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
            m.put("ucx", ucxVersion());
            m.put("native", nativeCmd);
            m.put("jucx", "org.openucx:jucx 1.15.0");
            m.put("load average", loadAverage());
            StringBuilder b = new StringBuilder();
            m.forEach((k, v) -> b.append(String.format(Locale.ROOT, "%-13s %s%n", k + ":", v)));
            return b.toString().stripTrailing();
        }

        static String loadAverage() {
            try {
                String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
                return f[0] + " " + f[1] + " " + f[2];
            } catch (IOException | RuntimeException e) {
                return "unknown";
            }
        }

        private static String cpuModel() {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                    if (line.startsWith("model name")) {
                        return line.substring(line.indexOf(':') + 1).trim();
                    }
                }
            } catch (IOException | RuntimeException e) {
                // fall through
            }
            return System.getProperty("os.arch");
        }

        /** The distribution: {@code PRETTY_NAME} of {@code /etc/os-release}. */
        private static String system() {
            try {
                for (String line : Files.readAllLines(Path.of("/etc/os-release"))) {
                    if (line.startsWith("PRETTY_NAME=")) {
                        return line.substring(line.indexOf('=') + 1).replace("\"", "").trim();
                    }
                }
            } catch (IOException | RuntimeException e) {
                // fall through
            }
            return "unknown";
        }

        private static String ucxVersion() {
            try {
                Process p = new ProcessBuilder("ucx_info", "-v").redirectErrorStream(true).start();
                String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                p.waitFor(10, TimeUnit.SECONDS);
                for (String line : text.split("\\R")) {
                    if (line.contains("Version") || line.contains("version")) {
                        return line.replace("#", "").trim();
                    }
                }
                return "unknown";
            } catch (IOException e) {
                return "unknown (no ucx_info)";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "unknown";
            }
        }
    }
}
