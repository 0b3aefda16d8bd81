package io.github.ucxffm.bench.perftest;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A runner's server and client as two processes on 127.0.0.1, started from this JVM's class path (the test class
 * path under Maven), as {@code ./ucx-ffm perftest} starts them; both killed by their handles when closed. Used by the
 * tests of both runners.
 */
public final class RunnerPair implements AutoCloseable {

    /** What a process printed and how it ended. */
    public record Outcome(int exit, String output) {
    }

    private final String mainClass;
    private final Map<String, String> environment;
    private final List<Process> processes = new ArrayList<>();

    /**
     * A pair of processes running a main class.
     *
     * @param mainClass   the runner's main class
     * @param environment variables to set in both
     */
    public RunnerPair(String mainClass, Map<String, String> environment) {
        this.mainClass = mainClass;
        this.environment = environment;
    }

    /**
     * A port no one listens on now.
     *
     * @return the port
     * @throws IOException if no socket can be bound
     */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
            return s.getLocalPort();
        }
    }

    private Process start(List<String> args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
                .replace(';', File.pathSeparatorChar);
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC", "-Xmx256m", "-cp", cp, mainClass));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(environment);
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    /** Collects a process's output on a daemon thread. */
    private static final class Collector {
        final StringBuffer text = new StringBuffer();
        final Thread thread;

        Collector(Process p) {
            thread = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        text.append(line).append('\n');
                    }
                } catch (IOException e) {
                    text.append("(output closed: ").append(e.getMessage()).append(")\n");
                }
            });
            thread.setDaemon(true);
            thread.start();
        }
    }

    /**
     * Starts a server, waits until it listens, runs a client against it and waits for both.
     *
     * @param clientArgs the client's options, without host and port
     * @param seconds    how long the client may take
     * @return the client's outcome and the server's, in that order
     * @throws Exception if a process cannot be started or waited for
     */
    public Outcome[] run(List<String> clientArgs, int seconds) throws Exception {
        int port = freePort();
        Process server = start(List.of("-p", Integer.toString(port)));
        Collector serverOut = new Collector(server);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (serverOut.text.indexOf("Waiting for connection") < 0) {
            if (!server.isAlive() || System.nanoTime() - deadline > 0) {
                serverOut.thread.join(2000);
                return new Outcome[] {new Outcome(-1, "(client not started)"),
                        new Outcome(server.isAlive() ? -1 : server.exitValue(), serverOut.text.toString())};
            }
            Thread.sleep(20);
        }
        List<String> args = new ArrayList<>(List.of("127.0.0.1", "-p", Integer.toString(port)));
        args.addAll(clientArgs);
        Process client = start(args);
        Collector clientOut = new Collector(client);
        boolean done = client.waitFor(seconds, TimeUnit.SECONDS);
        int clientExit = done ? client.exitValue() : -1;
        boolean serverDone = server.waitFor(done ? 15 : 1, TimeUnit.SECONDS);
        int serverExit = serverDone ? server.exitValue() : -1;
        close();
        clientOut.thread.join(5000);
        serverOut.thread.join(5000);
        return new Outcome[] {new Outcome(clientExit, clientOut.text.toString()),
                new Outcome(serverExit, serverOut.text.toString())};
    }

    /**
     * Runs one process with the given arguments (a client with no server, say).
     *
     * @param args    the arguments
     * @param seconds how long it may take
     * @return its outcome
     * @throws Exception if it cannot be started or waited for
     */
    public Outcome runAlone(List<String> args, int seconds) throws Exception {
        Process p = start(args);
        Collector out = new Collector(p);
        boolean done = p.waitFor(seconds, TimeUnit.SECONDS);
        int exit = done ? p.exitValue() : -1;
        close();
        out.thread.join(5000);
        return new Outcome(exit, out.text.toString());
    }

    @Override
    public void close() {
        for (Process p : processes) {
            if (p.isAlive()) {
                p.destroyForcibly();
                try {
                    p.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        processes.clear();
    }
}
