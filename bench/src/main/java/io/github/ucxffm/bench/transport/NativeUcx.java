package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.compare.CompareResults;
import io.github.ucxffm.bench.compare.NativePerftest;
import io.github.ucxffm.bench.perftest.PerfFinal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;

/**
 * Native UCX's own ping-pong in the same sitting, beside ucx-ffm-netty's echo ping-pong: {@code ucx_perftest -t
 * ucp_am_lat} between two processes on this machine, with the echo cell's message size and, of the ucx-ffm-netty
 * transport, the way of waiting ({@code -E sleep}: progress, arm the worker, sleep on its event descriptor;
 * {@code -E poll} for the spinning transports, whose loops do not sleep within a round trip), the peer error handling
 * ({@code -e}) and the UCX options of its contexts ({@code UcxTransportConfig.contextOptions()}, as {@code UCX_}
 * variables). An active message each way, with no Netty, no JVM and no copy: what UCX itself takes per round trip
 * used that way. For large messages UCX may choose another protocol than the transport's, so it is a reference, not
 * a bound. A round trip is twice {@code ucx_perftest}'s latency, which is half of one; p50 and p99 are two runs
 * ({@code -R 50}, {@code -R 99}).
 */
final class NativeUcx {

    /**
     * One native run pair of a cell.
     *
     * @param transport the ucx-ffm-netty transport it is the reference of
     * @param size      the message size
     * @param rep       the repetition of the sitting
     * @param p50Micros the median round trip, us; NaN when failed
     * @param p99Micros the 99th percentile round trip, us; NaN when failed
     * @param error     why it failed, or {@code null}
     */
    record Run(TransportKind transport, int size, int rep, double p50Micros, double p99Micros, String error) {

        boolean ok() {
            return error == null;
        }
    }

    /** The command run when {@code --native} does not say. */
    static final String DEFAULT_COMMAND = "ucx_perftest";

    /** Iterations per measured second of {@code --duration}, when the sitting is timed rather than counted. */
    static final long ITERATIONS_PER_SECOND = 10_000;

    /** The fewest measured iterations of a run. */
    static final long MIN_ITERATIONS = 10_000;

    private final String command;
    private final Path logs;
    private final int timeoutSeconds;

    /**
     * @param command        the {@code ucx_perftest} command
     * @param logs           where each run's output goes (deleted with the others when nothing failed)
     * @param timeoutSeconds how long one run may take
     */
    NativeUcx(String command, Path logs, int timeoutSeconds) {
        this.command = command;
        this.logs = logs;
        this.timeoutSeconds = timeoutSeconds;
    }

    /**
     * Whether a transport gets native runs: the ucx-ffm-netty ones.
     *
     * @param t the transport
     * @return whether
     */
    static boolean applies(TransportKind t) {
        return t.isUcx();
    }

    /**
     * The {@code UCX_TLS} of a transport's native runs: that of its ucx-ffm-netty contexts.
     *
     * @param t a UCX transport
     * @return the value
     */
    static String ucxTls(TransportKind t) {
        return UcxTransports.config(t, -1).ucxConfig().get("TLS");
    }

    /**
     * Whether a transport's native endpoints have peer error handling ({@code -e}): as its ucx-ffm-netty ones.
     *
     * @param t a UCX transport
     * @return whether
     */
    static boolean peerErrorHandling(TransportKind t) {
        return UcxTransports.config(t, -1).peerErrorHandling();
    }

    /**
     * {@code ucx_perftest}'s wait mode for a transport: {@code sleep} unless its loops spin.
     *
     * @param t a UCX transport
     * @return {@code sleep} or {@code poll}
     */
    static String waitMode(TransportKind t) {
        return t.spins() ? "poll" : "sleep";
    }

    /**
     * The measured iterations of a run.
     *
     * @param iterations {@code --iterations}, or 0 when the sitting is timed
     * @param seconds    {@code --duration}
     * @return the iterations
     */
    static long iterations(long iterations, double seconds) {
        return iterations > 0 ? iterations : Math.max(MIN_ITERATIONS, Math.round(seconds * ITERATIONS_PER_SECOND));
    }

    /**
     * The client's arguments of one run (after the command and its {@link NativePerftest#mpiOff} options).
     *
     * @param t          the transport
     * @param size       the message size
     * @param iterations measured iterations; a tenth of them warm up
     * @param rank       the percentile rank
     * @param port       the server's port
     * @return the arguments
     */
    static List<String> clientArgs(TransportKind t, int size, long iterations, double rank, int port) {
        List<String> a = new ArrayList<>(List.of("127.0.0.1", "-p", Integer.toString(port), "-t", "ucp_am_lat",
                "-s", Integer.toString(size), "-n", Long.toString(iterations), "-w",
                Long.toString(Math.max(1, iterations / 10)), "-E", waitMode(t), "-R", CompareResults.rankText(rank)));
        if (peerErrorHandling(t)) {
            a.add("-e");
        }
        return List.copyOf(a);
    }

    /**
     * Runs a cell's native pair (p50, then p99).
     *
     * @param t          the transport
     * @param size       the echo's message size
     * @param rep        the repetition
     * @param iterations measured iterations of each run
     * @return the result
     * @throws InterruptedException if interrupted
     */
    Run run(TransportKind t, int size, int rep, long iterations) throws InterruptedException {
        double[] rtt = new double[2];
        double[] ranks = {50, 99};
        for (int i = 0; i < ranks.length; i++) {
            String id = "native-" + t.label() + "-" + size + "-R" + CompareResults.rankText(ranks[i]) + "-" + rep;
            try {
                PerfFinal f = runOne(t, size, iterations, ranks[i], id);
                rtt[i] = 2 * f.percentileMicros();
            } catch (IOException e) {
                return new Run(t, size, rep, Double.NaN, Double.NaN, e.getMessage());
            }
        }
        return new Run(t, size, rep, rtt[0], rtt[1], null);
    }

    /** One client and server; the client's {@code Final:} line, or an {@link IOException} saying why not. */
    private PerfFinal runOne(TransportKind t, int size, long iterations, double rank, String id)
            throws IOException, InterruptedException {
        int port = NativePerftest.freePort();
        Path serverLog = logs.resolve(id + ".server.log");
        Path clientLog = logs.resolve(id + ".client.log");
        List<String> server = new ArrayList<>(List.of(command));
        server.addAll(NativePerftest.mpiOff(command));
        server.addAll(List.of("-p", Integer.toString(port)));
        List<String> client = new ArrayList<>(List.of(command));
        client.addAll(NativePerftest.mpiOff(command));
        client.addAll(clientArgs(t, size, iterations, rank, port));
        Process s = start(server, t, serverLog);
        Process c = null;
        try {
            if (!NativePerftest.awaitListening(port, s, 30)) {
                throw new IOException(s.isAlive() ? "ucx_perftest's server did not listen within 30 s"
                        : "ucx_perftest's server exited with " + s.exitValue() + " (log: " + serverLog + ")");
            }
            c = start(client, t, clientLog);
            if (!c.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new IOException("ucx_perftest timed out after " + timeoutSeconds + " s (log: " + clientLog
                        + ")");
            }
            String text = Files.readString(clientLog, StandardCharsets.UTF_8);
            Optional<PerfFinal> f = PerfFinal.lastIn(text);
            if (c.exitValue() != 0) {
                throw new IOException("ucx_perftest exited with " + c.exitValue() + ": "
                        + NativePerftest.lastLine(text) + " (log: " + clientLog + ")");
            }
            if (f.isEmpty()) {
                throw new IOException("no Final: line in ucx_perftest's output (log: " + clientLog + ")");
            }
            s.waitFor(10, TimeUnit.SECONDS);
            return f.get();
        } finally {
            stop(c);
            stop(s);
        }
    }

    private static Process start(List<String> command, TransportKind t, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        UcxTransports.config(t, -1).contextOptions().forEach((k, v) -> pb.environment().put("UCX_" + k, v));
        pb.environment().put("LC_ALL", "C");
        try {
            return pb.start();
        } catch (IOException e) {
            throw new IOException("cannot run " + command.getFirst() + ": " + e.getMessage(), e);
        }
    }

    /** Stops a process this class started, by its PID, if it still runs. */
    private static void stop(Process p) throws InterruptedException {
        if (p != null && p.isAlive()) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    // ---- the table ------------------------------------------------------------------------------------------------

    /**
     * The median over the repetitions of a transport's native runs of a size.
     *
     * @param runs      every native run of the sitting
     * @param t         the transport
     * @param size      the size
     * @param p99       the 99th percentile rather than the median
     * @return the median, NaN when none ran to the end
     */
    static double median(List<Run> runs, TransportKind t, int size, boolean p99) {
        double[] v = runs.stream().filter(r -> r.ok() && r.transport() == t && r.size() == size)
                .mapToDouble(r -> p99 ? r.p99Micros() : r.p50Micros()).toArray();
        OptionalDouble m = CompareResults.median(v);
        return m.isPresent() ? m.getAsDouble() : Double.NaN;
    }

    /**
     * The section of the table: per echo ping-pong cell and UCX transport, native UCX's round trip beside
     * ucx-ffm-netty's, with the ratio of ucx-ffm-netty's to native's.
     *
     * @param runs    every native run of the sitting
     * @param results the Netty measurements of the sitting
     * @return the text; empty when no native run was made
     */
    static String table(List<Run> runs, TransportResults results) {
        if (runs.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("Native UCX in the same sitting: ucx_perftest -t ucp_am_lat at the echo's "
                + "size, with the\ntransport's UCX options and peer error handling (-e), waiting as its event loops "
                + "do (-E sleep;\nucx-shm-spin, ucx-tcp-spin: -E poll); round trip in us (2 x ucx_perftest's "
                + "latency). (x): ucx-ffm-netty's echo-pingpong\nas a multiple of native UCX's.\n\n");
        String fmt = "%-20s %-13s %-22s %-10s %-10s %-16s %s%n";
        b.append(String.format(Locale.ROOT, fmt, "cell", "transport", "native (UCX_TLS, -E)", "p50 us", "p99 us",
                "netty p50 us", "netty p99 us"));
        List<Integer> sizes = runs.stream().map(Run::size).distinct().toList();
        List<TransportKind> kinds = runs.stream().map(Run::transport).distinct().toList();
        for (int size : sizes) {
            boolean first = true;
            for (TransportKind t : kinds) {
                List<Run> mine = runs.stream().filter(r -> r.transport() == t && r.size() == size).toList();
                if (mine.isEmpty()) {
                    continue;
                }
                String name = first ? new Cell(Scenario.ECHO_PINGPONG, size).label() : "";
                first = false;
                String how = ucxTls(t) + ", " + waitMode(t) + (peerErrorHandling(t) ? ", -e" : "");
                if (mine.stream().noneMatch(Run::ok)) {
                    b.append(String.format(Locale.ROOT, "%-20s %-13s FAILED: %s%n", name, t.label(),
                            mine.getFirst().error()));
                    continue;
                }
                double p50 = median(runs, t, size, false);
                double p99 = median(runs, t, size, true);
                Cell cell = new Cell(Scenario.ECHO_PINGPONG, size);
                double n50 = results.value(t, cell, TransportResults.Metric.P50);
                double n99 = results.value(t, cell, TransportResults.Metric.P99);
                b.append(String.format(Locale.ROOT, fmt, name, t.label(), how, TransportResults.number(p50),
                        TransportResults.number(p99), withRatio(n50, p50), withRatio(n99, p99)));
            }
        }
        return b.toString();
    }

    private static String withRatio(double netty, double nat) {
        if (Double.isNaN(netty)) {
            return "-";
        }
        return Double.isNaN(nat) || nat <= 0 ? TransportResults.number(netty)
                : TransportResults.number(netty) + " (" + String.format(Locale.ROOT, "%.2fx", netty / nat) + ")";
    }

    /** The header of {@link #csv}. */
    static final String CSV_HEADER = "transport,ucx_tls,wait,size,rep,p50_us,p99_us,error";

    /**
     * Every native run as CSV.
     *
     * @param runs the runs
     * @return the text
     */
    static String csv(List<Run> runs) {
        StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
        for (Run r : runs) {
            b.append(String.join(",", r.transport().label(), "\"" + ucxTls(r.transport()) + "\"",
                    waitMode(r.transport()), Integer.toString(r.size()), Integer.toString(r.rep()),
                    r.ok() ? String.format(Locale.ROOT, "%.4f", r.p50Micros()) : "",
                    r.ok() ? String.format(Locale.ROOT, "%.4f", r.p99Micros()) : "",
                    r.ok() ? "" : "\"" + r.error().replace("\"", "\"\"").replaceAll("\\R", " ") + "\""))
                    .append('\n');
        }
        return b.toString();
    }
}
