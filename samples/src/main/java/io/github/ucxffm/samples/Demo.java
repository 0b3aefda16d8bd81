package io.github.ucxffm.samples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./ucx-ffm demo}: the tag ping-pong sample as a server and a client process of this jar on 127.0.0.1, over
 * shared memory and then over tcp, and one table of the results. The client's report goes to standard error as it
 * comes; the table to standard output. Every process it starts is ended when it returns, also when it fails or is
 * interrupted.
 */
final class Demo {

    /** What the server prints once it listens (see {@link Session}); the port is the last number. */
    static final Pattern LISTENING = Pattern.compile(".*: listening on \\S*:(\\d+)$");

    /** The client's machine-readable line (see {@link LatencyReport}). */
    static final Pattern RESULT = Pattern.compile("^RESULT .*\\btransport=(\\S+) size=(\\d+) .*"
            + "\\bp50_oneway_us=([0-9.]+) p99_oneway_us=([0-9.]+) msgs_per_s=(\\d+).*$");

    private static final long START_SECONDS = 30;
    private static final long RUN_SECONDS = 600;

    /** One row of the table. */
    record Row(String transport, long size, double p50, double p99, long rate) {
    }

    private final List<Process> started = new ArrayList<>();
    private final String java;
    private final String jar;
    private final long iterations;
    private final long warmup;

    private Demo(String java, String jar, long iterations, long warmup) {
        this.java = java;
        this.jar = jar;
        this.iterations = iterations;
        this.warmup = warmup;
    }

    static void run(String[] args) {
        long iterations = 100_000;
        long warmup = 20_000;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--iterations" -> iterations = positive("--iterations", value);
                case "--warmup" -> warmup = positive("--warmup", value);
                default -> throw SampleException.usage("demo: unknown option " + args[i]
                        + " (options: --iterations N, --warmup N)");
            }
            i++;
        }
        Demo demo = new Demo(Path.of(System.getProperty("java.home"), "bin", "java").toString(), ownJar(),
                iterations, warmup);
        Thread stopper = new Thread(demo::stopAll, "demo-stop");
        Runtime.getRuntime().addShutdownHook(stopper); // Ctrl-C ends the pair too
        try {
            System.err.println("ucx-ffm: tag ping-pong, 8-byte messages, two processes on 127.0.0.1 (server and "
                    + "client of the tag-pingpong sample)");
            List<Row> rows = List.of(demo.pair("shm"), demo.pair("tcp"));
            System.out.println();
            System.out.print(table(rows));
        } finally {
            demo.stopAll();
        }
    }

    private static long positive(String option, String value) {
        try {
            long v = Long.parseLong(value == null ? "" : value);
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw SampleException.usage("demo: " + option + " needs a positive number, got " + value);
    }

    private static String ownJar() {
        try {
            Path p = Path.of(Demo.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (!p.toString().endsWith(".jar")) {
                throw SampleException.failed("demo: runs from the samples jar (java -jar ucx-ffm-samples.jar "
                        + "demo), not from " + p);
            }
            return p.toString();
        } catch (URISyntaxException e) {
            throw SampleException.failed("demo: cannot locate the samples jar: " + e.getMessage());
        }
    }

    /** Runs one server and one client over {@code transport} and returns the client's result. */
    private Row pair(String transport) {
        Process server = start("tag-pingpong", "--server", "--port", "0", "--transport", transport);
        StringBuilder serverOutput = new StringBuilder();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("demo-server-output").start(() -> {
            try (BufferedReader r = server.inputReader(StandardCharsets.UTF_8)) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (serverOutput) {
                        serverOutput.append(line).append('\n');
                    }
                    listeningPort(line).ifPresent(port::complete);
                }
            } catch (IOException e) {
                // the server was stopped
            }
            port.complete(-1);
        });
        int serverPort;
        try {
            serverPort = port.get(START_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            serverPort = -1;
        } catch (InterruptedException | ExecutionException e) {
            throw SampleException.failed("demo: waiting for the server: " + e);
        }
        if (serverPort <= 0) {
            throw SampleException.failed("demo: the " + transport + " server did not report its port; its output:\n"
                    + snapshot(serverOutput));
        }
        Process client = start("tag-pingpong", "--client", "127.0.0.1:" + serverPort, "--iterations",
                Long.toString(iterations), "--warmup", Long.toString(warmup), "--transport", transport);
        List<String> clientLines = new ArrayList<>();
        boolean reporting = true;
        AtomicBoolean overdue = new AtomicBoolean();
        Thread.ofPlatform().daemon().name("demo-client-deadline").start(() -> {
            try {
                if (!client.waitFor(RUN_SECONDS, TimeUnit.SECONDS)) {
                    overdue.set(true);
                    client.destroyForcibly(); // ends its output too, so the reading below cannot hang
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try (BufferedReader r = client.inputReader(StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null; ) {
                clientLines.add(line);
                if (reporting) {
                    System.err.println(line); // the report up to the message rate, as the client prints it
                    reporting = !line.startsWith("messages");
                }
            }
            client.waitFor();
            if (overdue.get()) {
                throw SampleException.failed("demo: the " + transport + " client did not finish in " + RUN_SECONDS
                        + " s; its output:\n" + String.join("\n", clientLines));
            }
        } catch (IOException e) {
            throw SampleException.failed("demo: reading the client's output: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw SampleException.failed("demo: interrupted");
        }
        if (client.exitValue() != 0) {
            throw SampleException.failed("demo: the " + transport + " client failed (status " + client.exitValue()
                    + "); its output:\n" + String.join("\n", clientLines));
        }
        try {
            server.waitFor(10, TimeUnit.SECONDS); // it ends after its one client
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return clientLines.stream().map(Demo::result).flatMap(Optional::stream).findFirst()
                .orElseThrow(() -> SampleException.failed("demo: the " + transport + " client printed no RESULT "
                        + "line; its output:\n" + String.join("\n", clientLines)));
    }

    private Process start(String... sampleArgs) {
        List<String> command = new ArrayList<>(List.of(java, "-jar", jar));
        command.addAll(List.of(sampleArgs));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            synchronized (started) {
                started.add(p);
            }
            return p;
        } catch (IOException e) {
            throw SampleException.failed("demo: cannot start " + String.join(" ", command) + ": " + e.getMessage());
        }
    }

    /** Ends every process this demo started that still runs (and what they started), by their handles. */
    private void stopAll() {
        List<Process> all;
        synchronized (started) {
            all = new ArrayList<>(started);
            started.clear();
        }
        for (Process p : all) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (Process p : all) {
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static String snapshot(StringBuilder output) {
        synchronized (output) {
            return output.toString();
        }
    }

    /** The port in a server's "listening on" line. */
    static Optional<Integer> listeningPort(String line) {
        Matcher m = LISTENING.matcher(line);
        return m.matches() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
    }

    /** The row in a client's RESULT line. */
    static Optional<Row> result(String line) {
        Matcher m = RESULT.matcher(line);
        if (!m.matches()) {
            return Optional.empty();
        }
        return Optional.of(new Row(m.group(1), Long.parseLong(m.group(2)), Double.parseDouble(m.group(3)),
                Double.parseDouble(m.group(4)), Long.parseLong(m.group(5))));
    }

    /** The table the demo ends with: a header and one line per row. */
    static String table(List<Row> rows) {
        StringBuilder t = new StringBuilder();
        t.append(String.format(Locale.ROOT, "%-18s %8s %16s %16s %14s%n", "transport", "size", "p50 one-way us",
                "p99 one-way us", "messages/s"));
        for (Row r : rows) {
            t.append(String.format(Locale.ROOT, "%-18s %8s %16.3f %16.3f %14d%n", r.transport(), r.size() + " B",
                    r.p50(), r.p99(), r.rate()));
        }
        return t.toString();
    }
}
