package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.compare.CompareResults;
import io.github.ucxffm.bench.compare.Environment;
import io.github.ucxffm.bench.plot.LogPanel;
import io.netty.util.Version;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.DoubleSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./ucx-ffm bench transport}: the same Netty echo and gRPC calls over each Netty transport, in one sitting.
 * For each transport a server process ({@link TransportServer}) is started, this process connects to it as the
 * client over the same transport and runs every cell (a warm-up round, then the measured one, with the CPU time of
 * both processes read from {@code /proc} around it), and the server is stopped by its PID. Prints a line per cell,
 * then the table ({@link TransportResults}); writes it with the CSVs and a plot under the output directory. With
 * {@code --reps N} the whole sitting runs N times and the table has the medians.
 */
public final class TransportBench {

    /** JVM flags of the server process; the launcher gives the client the same. */
    static final List<String> SERVER_JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED",
            "-Ducxffm.leakDetection=false", "-Dio.netty.leakDetection.level=disabled", "-XX:+UseSerialGC",
            "-Xms256m", "-Xmx512m", "-XX:-UsePerfData");

    private static final Pattern READY = Pattern.compile(Pattern.quote(TransportServer.READY)
            + " echo=(\\d+) grpc=(\\d+)");

    private final TransportOptions options;
    private final PrintStream out;
    private final PrintStream err;
    private final Set<Process> live = ConcurrentHashMap.newKeySet();

    TransportBench(TransportOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the sitting.
     *
     * @param args {@code --root DIR} first (the launcher gives it), then {@link TransportOptions#USAGE}
     */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        Path root = Path.of(".").toAbsolutePath().normalize();
        List<String> rest = new ArrayList<>(List.of(args));
        if (rest.size() >= 2 && rest.getFirst().equals("--root")) {
            root = Path.of(rest.get(1)).toAbsolutePath().normalize();
            rest = rest.subList(2, rest.size());
        }
        TransportOptions o;
        try {
            o = TransportOptions.parse(root, rest.toArray(String[]::new));
        } catch (IllegalArgumentException e) {
            boolean help = "help".equals(e.getMessage());
            (help ? System.out : System.err).print((help ? "" : "bench transport: " + e.getMessage() + "\n\n")
                    + TransportOptions.USAGE);
            System.exit(help ? 0 : 1);
            return;
        }
        TransportBench b = new TransportBench(o, System.out, System.err);
        Runtime.getRuntime().addShutdownHook(new Thread(b::stopAll, "transport-cleanup"));
        int status;
        try {
            status = b.run().failures() == 0 ? 0 : 2;
        } catch (IOException e) {
            System.err.println("bench transport: " + e.getMessage());
            status = 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = 130;
        } finally {
            b.stopAll();
        }
        System.exit(status);
    }

    /**
     * What a sitting produced.
     *
     * @param results  the measurements
     * @param dir      the results directory
     * @param failures cells that failed
     */
    record Outcome(TransportResults results, Path dir, long failures) {
    }

    /**
     * Runs every cell over every transport, prints the table and writes the results directory.
     *
     * @return the outcome
     * @throws IOException          if the results cannot be written
     * @throws InterruptedException if interrupted
     */
    Outcome run() throws IOException, InterruptedException {
        NettyTransport.quietUnknownOptions();
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path dir = options.out().resolve("transport-" + stamp);
        Path logs = dir.resolve("logs");
        Files.createDirectories(logs);
        Map<String, String> compared = new LinkedHashMap<>();
        compared.put("netty", Version.identify().getOrDefault("netty-transport",
                Version.identify().values().iterator().next()).artifactVersion());
        compared.put("grpc", grpcVersion());
        for (TransportKind t : options.transports()) {
            compared.put(t.label(), t.description() + (t.isUcx() ? ": "
                    + UcxTransports.config(t, t.spinNanos(options.ucxSpinNanos())) : ""));
        }
        String environment = Environment.describe(compared);
        out.println(environment);
        List<Cell> cells = options.cells();
        List<Cell> nativeCells = options.nativeCells();
        List<TransportKind> nativeKinds = options.transports().stream().filter(NativeUcx::applies).toList();
        int nativeTotal = nativeCells.size() * nativeKinds.size() * options.reps();
        int total = cells.size() * options.transports().size() * options.reps() + nativeTotal;
        out.println("bench transport: " + total + " cells" + (nativeTotal > 0 ? " (" + nativeTotal
                + " of them native UCX, " + options.nativeCommand() + ")" : "") + ", " + options.describeLength()
                + ", into " + dir);
        out.flush();
        TransportResults results = new TransportResults();
        List<NativeUcx.Run> natives = new ArrayList<>();
        NativeUcx nativeUcx = new NativeUcx(options.nativeCommand(), logs, options.timeoutSeconds());
        long nativeIterations = NativeUcx.iterations(options.iterations(), options.durationSeconds());
        long started = System.nanoTime();
        int n = 0;
        for (int rep = 1; rep <= options.reps(); rep++) {
            for (TransportKind t : order(options.transports(), rep)) {
                n = runTransport(t, rep, cells, results, logs, n, total);
            }
            // after the Netty servers of the repetition have stopped: nothing else runs meanwhile
            for (TransportKind t : nativeKinds) {
                for (Cell cell : nativeCells) {
                    NativeUcx.Run r = nativeUcx.run(t, cell.size(), rep, nativeIterations);
                    natives.add(r);
                    err.println(nativeProgress(++n, total, options.reps() > 1, r));
                    err.flush();
                }
            }
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        long failures = results.measurements().stream().filter(m -> !m.ok()).count()
                + natives.stream().filter(r -> !r.ok()).count();
        if (failures == 0 && !options.keepLogs()) {
            try (var files = Files.list(logs)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(logs);
        }
        String table = results.table() + (natives.isEmpty() ? "" : "\n" + NativeUcx.table(natives, results));
        out.println();
        out.print(table);
        Files.writeString(dir.resolve("table.txt"), table, StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("results.csv"), results.csv(), StandardCharsets.UTF_8);
        if (!natives.isEmpty()) {
            Files.writeString(dir.resolve("native.csv"), NativeUcx.csv(natives), StandardCharsets.UTF_8);
        }
        Files.writeString(dir.resolve("summary.csv"), results.summaryCsv(), StandardCharsets.UTF_8);
        String after = String.format(Locale.ROOT, "finished after %.1f min; load average %s", minutes,
                Environment.loadAverage());
        Files.writeString(dir.resolve("environment.txt"), environment + "\n" + after + "\n", StandardCharsets.UTF_8);
        LogPanel.writeOrTell("bench transport", () -> TransportPlot.render(results), dir.resolve("transport.png"), err);
        out.println();
        out.println(after);
        out.println("results: " + dir);
        return new Outcome(results, dir, failures);
    }

    /**
     * The transports in the order a repetition runs them: as given, and reversed every other time, since the first
     * transport runs with a client JVM that the others find warmer, and so that a change in the machine's load
     * touches the transports alike.
     *
     * @param transports the transports, as given
     * @param rep        the repetition, from 1
     * @return the order
     */
    static List<TransportKind> order(List<TransportKind> transports, int rep) {
        List<TransportKind> order = new ArrayList<>(transports);
        if (rep % 2 == 0) {
            Collections.reverse(order);
        }
        return order;
    }

    /** The server of one transport, then its cells; returns the cells numbered so far. */
    private int runTransport(TransportKind t, int rep, List<Cell> cells, TransportResults results, Path logs, int n,
                             int total) throws IOException, InterruptedException {
        Path log = logs.resolve("server-" + t.label() + (options.reps() > 1 ? "-" + rep : "") + ".log");
        Process server = null;
        NettyTransport client = null;
        String broken = null;
        int[] ports = null;
        try {
            server = startServer(t, log);
            ports = awaitReady(server, log, 60);
            client = t.open(1, t.spinNanos(options.ucxSpinNanos()));
        } catch (IOException | RuntimeException | LinkageError e) {
            // a transport that cannot run here (no epoll, no UCX library) fails its cells, not the sitting
            broken = e.getMessage() == null ? e.toString() : e.getMessage();
        }
        try {
            for (Cell cell : cells) {
                n++;
                Measurement m;
                if (broken != null) {
                    m = Measurement.failed(t, cell, rep, broken);
                } else if (!server.isAlive()) {
                    m = Measurement.failed(t, cell, rep, "the server exited with " + server.exitValue() + " (log: "
                            + log + ")");
                } else {
                    int port = cell.scenario().isEcho() ? ports[0] : ports[1];
                    m = runCell(t, rep, client, new InetSocketAddress("127.0.0.1", port), cell, server.pid());
                }
                results.add(m);
                err.println(progress(n, total, options.reps() > 1, m));
                err.flush();
            }
        } finally {
            if (client != null) {
                client.close();
            }
            if (server != null) {
                stop(server);
            }
        }
        return n;
    }

    /** gRPC's version, as the build wrote it into {@code versions.properties}. */
    private static String grpcVersion() {
        Properties p = new Properties();
        try (InputStream in = TransportBench.class.getResourceAsStream("versions.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // unknown
        }
        return p.getProperty("grpc", "unknown");
    }

    /** The progress line of a cell; with the repetition's number when there are several. */
    static String progress(int n, int total, boolean reps, Measurement m) {
        String head = String.format(Locale.ROOT, "[%d/%d] %-8s %-20s %s", n, total, m.transport().label(),
                m.cell().label(), reps ? "#" + m.rep() + " " : "");
        if (!m.ok()) {
            return head + "FAILED: " + m.error();
        }
        String lat = m.cell().scenario().timesRequests() ? String.format(Locale.ROOT, "p50 %s us, p99 %s us, ",
                TransportResults.number(m.p50Micros()), TransportResults.number(m.p99Micros())) : "";
        return head + lat + String.format(Locale.ROOT, "%s req/s, %s MB/s, cpu %s+%s s, %d verified (%.1f s after "
                        + "%.1f s of warm-up)", TransportResults.number(m.requestsPerSecond()),
                TransportResults.number(m.megabytesPerSecond()), TransportResults.number(m.clientCpu()),
                TransportResults.number(m.serverCpu()), m.verified(), m.seconds(), m.warmupSeconds());
    }

    /** The progress line of a native UCX run. */
    static String nativeProgress(int n, int total, boolean reps, NativeUcx.Run r) {
        String head = String.format(Locale.ROOT, "[%d/%d] %-8s %-20s %s", n, total, "native",
                r.transport().label() + " " + CompareResults.formatSize(r.size()), reps ? "#" + r.rep() + " " : "");
        if (!r.ok()) {
            return head + "FAILED: " + r.error();
        }
        return head + String.format(Locale.ROOT, "ucp_am_lat round trip p50 %s us, p99 %s us",
                TransportResults.number(r.p50Micros()), TransportResults.number(r.p99Micros()));
    }

    /** A warm-up ({@link #warmUp}), then the measured round with the CPU time of both processes around it. */
    private Measurement runCell(TransportKind t, int rep, NettyTransport client, InetSocketAddress address,
                                Cell cell, long serverPid) throws InterruptedException {
        long count = options.iterations() > 0 ? options.iterations() : Long.MAX_VALUE;
        long nanos = options.iterations() > 0 ? Long.MAX_VALUE / 4 : (long) (options.durationSeconds() * 1e9);
        CpuMeter cpu = new CpuMeter(serverPid);
        Load load = null;
        try {
            load = open(t, client, address, cell);
            double warm = warmUp(load, options, cpu::compilerSeconds);
            Latencies latencies = new Latencies();
            CpuMeter.Sample before = cpu.read();
            Load.Round r = await(load.round(count, nanos, cell.scenario().timesRequests() ? latencies : null),
                    options.timeoutSeconds());
            CpuMeter.Sample used = cpu.read().since(before);
            if (r.verified() != r.requests()) {
                return Measurement.failed(t, cell, rep, r.requests() - r.verified() + " answers not verified");
            }
            return new Measurement(t, cell, rep, r.requests(), r.bytes(), r.nanos() / 1e9,
                    latencies.percentileMicros(50), latencies.percentileMicros(99), used.client(), used.server(),
                    r.verified(), null, warm);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            return Measurement.failed(t, cell, rep, c.getMessage() == null ? c.toString() : c.getMessage());
        } catch (TimeoutException e) {
            return Measurement.failed(t, cell, rep, "no end within " + options.timeoutSeconds() + " s");
        } catch (Exception e) {
            return Measurement.failed(t, cell, rep, e.getMessage() == null ? e.toString() : e.getMessage());
        } finally {
            if (load != null) {
                load.close();
            }
        }
    }

    /** A warm-up slice: the request rate is compared from one to the next. */
    static final long WARMUP_SLICE_NANOS = 500_000_000;

    /** The rate growth from one slice to the next under which the warm-up is over. */
    static final double WARMUP_PLATEAU = 1.05;

    /** The longest warm-up, in multiples of {@code --warmup}. */
    static final int WARMUP_MAX_FACTOR = 10;

    /**
     * The share of a slice's time the JIT compilers of both processes together may have used in it for the warm-up
     * to end: 25 ms of a half-second slice (two and a half of the kernel's usual 10 ms ticks).
     */
    static final double WARMUP_COMPILER_SHARE = 0.05;

    /**
     * Warms a connection up: with {@code --iterations N}, N/10 requests; otherwise at least {@code --warmup} seconds,
     * then on in half-second slices while the request rate still grows by more than 5% from one slice to the next or
     * the JIT compilers of either process still work (more than {@link #WARMUP_COMPILER_SHARE} of the slice), ten
     * times {@code --warmup} at most. Both matter: a gRPC call is several times faster once compiled, and on a
     * 2-core machine the compilers share the cores with the two busy event loops, so that the rate can stay flat
     * for a slice while C2 is still compiling the path (gRPC unary over ucx-shm measured 160 us p50 after a 4.8 s
     * warm-up that stopped on the rate alone, 42 us after 15 s).
     *
     * @param load            the connection
     * @param options         {@code --iterations}, {@code --warmup} and {@code --timeout}
     * @param compilerSeconds the CPU seconds the compilers of both processes have used so far; NaN when unknown,
     *                        which lets the rate alone decide
     * @return the seconds it took
     */
    static double warmUp(Load load, TransportOptions options, DoubleSupplier compilerSeconds)
            throws InterruptedException, ExecutionException, TimeoutException {
        long t0 = System.nanoTime();
        if (options.iterations() > 0) {
            await(load.round(Math.max(1, options.iterations() / 10), Long.MAX_VALUE / 4, null),
                    options.timeoutSeconds());
            return (System.nanoTime() - t0) / 1e9;
        }
        long min = (long) (options.warmupSeconds() * 1e9);
        if (min == 0) {
            return 0;
        }
        long max = min * WARMUP_MAX_FACTOR;
        double previous = 0;
        double compiled = compilerSeconds.getAsDouble();
        while (true) {
            Load.Round r = await(load.round(Long.MAX_VALUE, WARMUP_SLICE_NANOS, null), options.timeoutSeconds());
            double rate = r.requests() / (double) Math.max(1, r.nanos());
            double nowCompiled = compilerSeconds.getAsDouble();
            boolean compiling = nowCompiled - compiled > WARMUP_COMPILER_SHARE * r.nanos() / 1e9; // NaN: false
            compiled = nowCompiled;
            long elapsed = System.nanoTime() - t0;
            if (elapsed >= max || elapsed >= min && !compiling && previous > 0 && rate <= previous * WARMUP_PLATEAU) {
                return elapsed / 1e9;
            }
            previous = rate;
        }
    }

    private Load open(TransportKind t, NettyTransport client, InetSocketAddress address, Cell cell)
            throws Exception {
        return switch (cell.scenario()) {
            case ECHO_PINGPONG, ECHO_WINDOW -> Echo.connect(client, address, cell.size(), options.windowOf(cell),
                    options.timeoutSeconds());
            case GRPC_UNARY -> new Grpc.UnaryLoad(Grpc.channel(client, address), cell.size());
            case GRPC_STREAM -> new Grpc.StreamLoad(Grpc.channel(client, address), cell.size());
        };
    }

    private static Load.Round await(java.util.concurrent.CompletableFuture<Load.Round> f, int seconds)
            throws InterruptedException, ExecutionException, TimeoutException {
        try {
            return f.get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw e;
        }
    }

    /** The command of a server process: this JVM's java and class path. */
    static List<String> serverCommand(TransportKind t, long spinNanos) {
        List<String> c = new ArrayList<>();
        c.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        c.addAll(SERVER_JVM_FLAGS);
        if (Runtime.version().feature() >= 23) {
            c.add("--sun-misc-unsafe-memory-access=allow"); // Netty's fast paths, as the launcher gives the client
        }
        c.addAll(List.of("-cp", System.getProperty("java.class.path"), TransportServer.class.getName(),
                "--transport", t.label()));
        if (spinNanos >= 0) {
            c.addAll(List.of("--ucx-spin", Long.toString(spinNanos)));
        }
        return c;
    }

    private Process startServer(TransportKind t, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(serverCommand(t, t.spinNanos(options.ucxSpinNanos())))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("LC_ALL", "C");
        Process p = pb.start();
        live.add(p);
        return p;
    }

    /** Waits for the server's ready line; returns the echo and gRPC ports. */
    private static int[] awaitReady(Process server, Path log, int seconds) throws IOException,
            InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() - deadline < 0) {
            String text = Files.readString(log, StandardCharsets.UTF_8);
            Matcher m = READY.matcher(text);
            if (m.find()) {
                return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))};
            }
            if (!server.isAlive()) {
                throw new IOException("the server exited with " + server.exitValue() + ": " + lastLine(text)
                        + " (log: " + log + ")");
            }
            Thread.sleep(20);
        }
        throw new IOException("the server did not listen within " + seconds + " s (log: " + log + ")");
    }

    private static String lastLine(String text) {
        String[] lines = text.strip().split("\\R");
        for (String line : lines) {
            if (line.contains("Exception") || line.contains("rror")) {
                return line.strip();
            }
        }
        return lines.length == 0 || lines[lines.length - 1].isBlank() ? "(no output)" : lines[lines.length - 1];
    }

    /** Stops a server by its PID: SIGTERM, then SIGKILL after 10 s. */
    private void stop(Process p) throws InterruptedException {
        if (p.isAlive()) {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                err.println("bench transport: server " + p.pid() + " did not stop on SIGTERM; killed");
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        live.remove(p);
    }

    private void stopAll() {
        for (Process p : live) {
            p.destroyForcibly();
        }
        live.clear();
    }
}
