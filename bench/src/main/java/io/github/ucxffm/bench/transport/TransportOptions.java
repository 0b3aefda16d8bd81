package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.compare.CompareResults;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What {@code bench transport} runs, and for how long.
 *
 * @param transports      the transports, in the order they run (each with its own server process)
 * @param scenarios       the tests
 * @param echoSizes       the echo tests' message sizes
 * @param unarySize       the gRPC unary call's request and response size
 * @param streamSize      the size of each message of the gRPC stream
 * @param window          messages outstanding in {@code echo-window}
 * @param durationSeconds measured seconds per cell (when {@code iterations} is 0)
 * @param warmupSeconds   the least warm-up per cell, before the measurement (when {@code iterations} is 0; see
 *                        {@link TransportBench#warmUp})
 * @param iterations      a fixed count of requests (stream: messages) per cell instead of a duration, with a tenth
 *                        of it (at least 1) as warm-up; 0 for the durations
 * @param timeoutSeconds  how long a cell may take before it is given up
 * @param out             the directory the results directory goes into
 * @param keepLogs        keep the servers' output when nothing failed
 * @param reps            how many times the whole sitting runs, the transports' order reversed every other time
 * @param ucxSpinNanos    how long an idle UCX event loop progresses before it sleeps, or -1 for ucx-ffm-netty's
 *                        default
 * @param nativeCommand   the {@code ucx_perftest} of the native UCX runs ({@link NativeUcx}), or {@code null} for none
 */
record TransportOptions(List<TransportKind> transports, List<Scenario> scenarios, List<Integer> echoSizes,
                        int unarySize, int streamSize, int window, double durationSeconds, double warmupSeconds,
                        long iterations, int timeoutSeconds, Path out, boolean keepLogs, int reps,
                        long ucxSpinNanos, String nativeCommand) {

    /** The largest message: gRPC's default limit on an inbound message is 4 MiB, its framing included. */
    static final int MAX_SIZE = 4 * 1024 * 1024 - 1024;

    /** The smallest message: each echo message starts with its 8-byte sequence number. */
    static final int MIN_SIZE = 8;

    /** The options that take a value. */
    private static final Set<String> VALUED = Set.of("--transports", "--tests", "--sizes", "--unary-size",
            "--stream-size", "--window", "--duration", "--warmup", "--iterations", "--timeout", "--out",
            "--ucx-spin", "--reps", "--native");

    static final String USAGE = """
            usage: ./ucx-ffm bench transport [OPTIONS]

              Netty echo and gRPC over Netty transports, a server process started for each transport and this
              process as the client, on 127.0.0.1: a table of p50 and p99 round-trip latency, requests/s, MB/s and
              CPU seconds per million requests (client + server, from /proc), with ratios against epoll; writes
              table.txt, results.csv, summary.csv, native.csv, environment.txt, transport.png under
              bench/results/transport-DATE/.

              --transports LIST  epoll (Netty epoll, TCP), nio (Netty NIO, TCP), ucx-shm (ucx-ffm-netty over UCX
                                 shared memory), ucx-tcp (ucx-ffm-netty over UCX tcp), ucx-shm-spin and
                                 ucx-tcp-spin (ucx-shm and ucx-tcp whose idle loops spin 50 us, or --ucx-spin,
                                 before sleeping) (all six)
              --tests LIST       echo-pingpong (one message outstanding), echo-window (--window outstanding),
                                 grpc-unary (one call at a time), grpc-stream (server streaming) (all four)
              --sizes LIST       the echo tests' message sizes, e.g. 64,64k (64,65536)
              --unary-size SIZE  gRPC unary request and response size (64)
              --stream-size SIZE gRPC stream message size (64k)
              --window N         messages outstanding in echo-window (32)
              --duration S       measured seconds per cell (5)
              --warmup S         warm-up per cell, not measured: at least S seconds, then on while the request
                                 rate still grows by 5% a half-second or either process's JIT compilers
                                 work, 10 S at most (2)
              --iterations N     N requests (stream: messages) per cell instead of a duration, N/10 warm-up
              --reps N           run the whole sitting N times, the transports in reverse order every other
                                 time; the table has the medians, results.csv every run (1)
              --timeout S        seconds a cell may take before it is given up (120)
              --out DIR          where the results directory goes (bench/results)
              --ucx-spin NS      how long an idle UCX event loop keeps progressing before it sleeps, in ns, on
                                 both sides, for every UCX transport (default: 50000 for ucx-shm-spin and
                                 ucx-tcp-spin; ucx-ffm-netty's own, 0 or the system property
                                 io.github.ucxffm.netty.spinNanos, for the others)
              --native CMD       the ucx_perftest run beside each UCX transport's echo-pingpong cells
                                 (ucp_am_lat, same size, UCX options and way of waiting, same sitting); none:
                                 no native runs (ucx_perftest)
              --keep-logs        keep the servers' and native runs' output (kept anyway when something failed)
              --quick            a short smoke sitting: 1 s per cell after 0.5 to 5 s of warm-up
            """;

    /**
     * Reads the command line.
     *
     * @param root the repository, under which results go by default
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException naming the bad value and what is expected; its message is {@code help} for
     *                                  {@code -h} and {@code --help}
     */
    static TransportOptions parse(Path root, String... args) {
        List<TransportKind> transports = List.of(TransportKind.values());
        List<Scenario> scenarios = List.of(Scenario.values());
        List<Integer> sizes = List.of(64, 65536);
        int unarySize = 64;
        int streamSize = 65536;
        int window = 32;
        Double duration = null;
        Double warmup = null;
        long iterations = 0;
        int timeout = 120;
        Path out = root.resolve("bench").resolve("results");
        boolean keepLogs = false;
        boolean quick = false;
        long spin = -1;
        int reps = 1;
        String nativeCommand = NativeUcx.DEFAULT_COMMAND;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-h", "--help" -> throw new IllegalArgumentException("help");
                case "--quick" -> {
                    quick = true;
                    continue;
                }
                case "--keep-logs" -> {
                    keepLogs = true;
                    continue;
                }
                default -> {
                    // an option with a value
                }
            }
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "' (see --help)");
            }
            if (!VALUED.contains(a)) {
                throw new IllegalArgumentException("unknown option " + a + " (see --help)");
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + a + " needs a value (see --help)");
            }
            String v = args[++i];
            switch (a) {
                case "--transports" -> transports = list(a, v, TransportKind::byLabel);
                case "--tests" -> scenarios = list(a, v, Scenario::byLabel);
                case "--sizes" -> sizes = list(a, v, x -> size(a, x));
                case "--unary-size" -> unarySize = size(a, v);
                case "--stream-size" -> streamSize = size(a, v);
                case "--window" -> window = (int) Math.min(positive(a, v), 1 << 16);
                case "--duration" -> duration = seconds(a, v);
                case "--warmup" -> warmup = seconds(a, v);
                case "--iterations" -> iterations = positive(a, v);
                case "--timeout" -> timeout = (int) Math.min(positive(a, v), Integer.MAX_VALUE);
                case "--out" -> out = root.resolve(v);
                case "--reps" -> reps = (int) Math.min(positive(a, v), 1000);
                case "--ucx-spin" -> spin = v.trim().equals("0") ? 0 : positive(a, v);
                case "--native" -> {
                    if (v.isBlank()) {
                        throw new IllegalArgumentException("--native takes a command, or none");
                    }
                    nativeCommand = v.equals("none") ? null : v;
                }
                default -> throw new IllegalStateException("an option of VALUED without a case: " + a);
            }
        }
        if (window > 1 << 15) {
            throw new IllegalArgumentException("--window takes at most 32768 messages, not " + window);
        }
        if (iterations > 0 && (duration != null || warmup != null)) {
            throw new IllegalArgumentException("give --iterations or --duration/--warmup, not both");
        }
        double d = duration != null ? duration : quick ? 1.0 : 5.0;
        double w = warmup != null ? warmup : quick ? 0.5 : 2.0;
        if (!(d > 0)) {
            throw new IllegalArgumentException("--duration must be positive, not " + d);
        }
        return new TransportOptions(transports, scenarios, sizes, unarySize, streamSize, window, d, w, iterations,
                timeout, out.toAbsolutePath().normalize(), keepLogs, reps, spin, nativeCommand);
    }

    /**
     * The cells, in the order they run over each transport: the echo tests at each size, then the gRPC tests.
     *
     * @return the cells
     */
    List<Cell> cells() {
        List<Cell> cells = new ArrayList<>();
        for (Scenario s : scenarios) {
            switch (s) {
                case ECHO_PINGPONG, ECHO_WINDOW -> echoSizes.forEach(size -> cells.add(new Cell(s, size)));
                case GRPC_UNARY -> cells.add(new Cell(s, unarySize));
                case GRPC_STREAM -> cells.add(new Cell(s, streamSize));
            }
        }
        return cells;
    }

    /**
     * The cells each UCX transport gets native UCX runs of in each repetition: the {@code echo-pingpong} ones; none
     * without {@link #nativeCommand}.
     *
     * @return the cells
     */
    List<Cell> nativeCells() {
        if (nativeCommand == null) {
            return List.of();
        }
        return cells().stream().filter(c -> c.scenario() == Scenario.ECHO_PINGPONG).toList();
    }

    /** Messages outstanding in a cell: {@link #window} for {@code echo-window}, else 1. */
    int windowOf(Cell cell) {
        return cell.scenario() == Scenario.ECHO_WINDOW ? window : 1;
    }

    private interface Parser<T> {
        T parse(String s);
    }

    private static <T> List<T> list(String opt, String v, Parser<T> parser) {
        List<T> l = new ArrayList<>();
        for (String x : v.split(",", -1)) {
            if (x.isBlank()) {
                throw new IllegalArgumentException(opt + " takes a comma-separated list without empty items, not '"
                        + v + "'");
            }
            T t = parser.parse(x.trim());
            if (l.contains(t)) {
                throw new IllegalArgumentException(opt + " names '" + x.trim() + "' twice");
            }
            l.add(t);
        }
        return List.copyOf(l);
    }

    private static int size(String opt, String v) {
        long n;
        try {
            n = CompareResults.parseSize(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(opt + ": " + e.getMessage() + " (e.g. 64, 4k, 64KiB, 1m)");
        }
        if (n < MIN_SIZE || n > MAX_SIZE) {
            throw new IllegalArgumentException(opt + " takes sizes from " + MIN_SIZE + " B to " + MAX_SIZE
                    + " B, not " + v);
        }
        return (int) n;
    }

    private static long positive(String opt, String v) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + " takes a whole number, not '" + v + "'");
        }
        if (n <= 0) {
            throw new IllegalArgumentException(opt + " must be positive, not " + v);
        }
        return n;
    }

    private static double seconds(String opt, String v) {
        double s;
        try {
            s = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + " takes seconds, not '" + v + "'");
        }
        if (!(s >= 0) || Double.isInfinite(s) || s > 3600) {
            throw new IllegalArgumentException(opt + " takes seconds from 0 to 3600, not " + v);
        }
        return s;
    }

    /** {@code 2.0 s}, {@code 200 requests}: how long a cell runs, for the header line. */
    String describeLength() {
        String each = iterations > 0 ? iterations + " requests per cell after " + Math.max(1, iterations / 10)
                + " of warm-up" : String.format(Locale.ROOT, "%.1f s per cell after %.1f s or more of warm-up",
                durationSeconds, warmupSeconds);
        return (reps > 1 ? reps + " times, " : "") + each;
    }
}
