package io.github.ucxffm.testsupport;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A ucx_perftest-compatible runner's server and client as two child JVMs on 127.0.0.1, as
 * {@code ./ucx-ffm perftest} starts them; both killed (with their descendants) when closed. The fixture of the tests
 * of both runners (ucx-ffm's in the benchmarks, JUCX's), which is why it names its main class rather than linking it.
 */
public final class RunnerPair implements AutoCloseable {

    /**
     * What a process printed and how it ended.
     *
     * @param exit   its exit status, or -1 if it was still running when waited for (or never started)
     * @param output what it printed
     */
    public record Outcome(int exit, String output) {
    }

    private final String mainClass;
    private final Map<String, String> environment;
    private final List<ChildProcess> processes = new ArrayList<>();

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

    /** How many free ports a run tries before it reports a server that could not listen. */
    private static final int PORT_ATTEMPTS = 3;
    /** What a runner says when its port was taken between {@link #freePort()} and its bind. */
    private static final String PORT_TAKEN = "Address already in use";

    /**
     * A port no one listens on now. Another socket may take it before the caller binds it (it is an ephemeral
     * port); {@link #run} tries another when its server says so.
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

    private ChildProcess start(String role, List<String> args) throws IOException {
        ChildProcess p = ChildProcess.java(mainClass).name(role).env(environment).args(args).start();
        processes.add(p);
        return p;
    }

    /** The outcome of a process this pair has closed: its output read to the end where it ends in time. */
    private static Outcome outcome(ChildProcess p, boolean ended) throws InterruptedException {
        String text;
        try {
            text = p.outputToEnd(5);
        } catch (AssertionError stillOpen) {
            text = p.output(); // a descendant holds the pipe: what was read
        }
        return new Outcome(ended ? p.exitCode() : -1, text);
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
        return run(List.of(), clientArgs, seconds);
    }

    /**
     * Starts a server with extra options (a UCT server's {@code -d}, say), waits until it listens, runs a client
     * against it and waits for both.
     *
     * @param serverArgs the server's options besides its port
     * @param clientArgs the client's options, without host and port
     * @param seconds    how long the client may take
     * @return the client's outcome and the server's, in that order
     * @throws Exception if a process cannot be started or waited for
     */
    public Outcome[] run(List<String> serverArgs, List<String> clientArgs, int seconds) throws Exception {
        int port;
        ChildProcess server;
        for (int attempt = 1; ; attempt++) {
            port = freePort();
            List<String> serverCommand = new ArrayList<>(List.of("-p", Integer.toString(port)));
            serverCommand.addAll(serverArgs);
            server = start("server", serverCommand);
            try {
                server.awaitOutput("Waiting for connection", 30);
                break;
            } catch (AssertionError notListening) {
                boolean ended = server.awaitExit(1);
                if (attempt < PORT_ATTEMPTS && ended && server.output().contains(PORT_TAKEN)) {
                    // another socket took the free port between freePort() and the server's bind: take another
                    server.close();
                    processes.remove(server);
                    continue;
                }
                // the test asserts on the outcomes: a server that never listened shows its status and output there
                close();
                return new Outcome[] {new Outcome(-1, "(client not started)"), outcome(server, ended)};
            }
        }
        List<String> args = new ArrayList<>(List.of("127.0.0.1", "-p", Integer.toString(port)));
        args.addAll(clientArgs);
        ChildProcess client = start("client", args);
        boolean clientDone = client.awaitExit(seconds);
        boolean serverDone = server.awaitExit(clientDone ? 15 : 1);
        close();
        return new Outcome[] {outcome(client, clientDone), outcome(server, serverDone)};
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
        ChildProcess p = start("runner", args);
        boolean done = p.awaitExit(seconds);
        close();
        return outcome(p, done);
    }

    @Override
    public void close() {
        for (ChildProcess p : processes) {
            p.close();
        }
        processes.clear();
    }
}
