package io.github.ucxffm.bench.compare;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What running the native {@code ucx_perftest} as a pair of processes takes, for {@code bench compare} and
 * {@code bench transport}: a free port, waiting until its server listens (without connecting to it: the server takes
 * the first connection as its one client), the options its build needs, and the line of its output that says why a
 * run failed.
 */
public final class NativePerftest {

    /** {@link #mpiOff} per command. */
    private static final Map<String, List<String>> MPI_OFF = new ConcurrentHashMap<>();

    private NativePerftest() {
    }

    /**
     * {@code -P 0} where the native {@code ucx_perftest} has MPI mode (Debian 13's UCX 1.18 is built with MPI and
     * enables it by default, so a lone server exits with "should be run with exactly 2 processes"); nothing where it
     * has no {@code -P} option (1.13, 1.23 as Debian builds them), which would refuse it. Asked once per command.
     *
     * @param command the {@code ucx_perftest} command
     * @return the arguments to add to every run of it
     */
    public static List<String> mpiOff(String command) {
        return MPI_OFF.computeIfAbsent(command, c -> {
            try {
                Process p = new ProcessBuilder(c, "-h").redirectErrorStream(true).start();
                String help = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                p.waitFor(10, TimeUnit.SECONDS);
                return help.contains("-P <0|1>") ? List.of("-P", "0") : List.of();
            } catch (IOException e) {
                return List.of(); // no such command: the runs fail and say so
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return List.of();
            }
        });
    }

    /**
     * A TCP port nothing listens on now.
     *
     * @return the port
     * @throws IOException if no socket can be bound
     */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
            return s.getLocalPort();
        }
    }

    /**
     * Waits until something listens on {@code port}, looking at the kernel's socket tables: a test connection would
     * be taken by {@code ucx_perftest} as its one client.
     *
     * @param port    the port
     * @param server  the server process; waiting ends if it exits
     * @param seconds how long to wait at most
     * @return whether it listens
     * @throws InterruptedException if interrupted
     * @throws IOException          if the tables cannot be read
     */
    public static boolean awaitListening(int port, Process server, int seconds) throws InterruptedException,
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

    /**
     * The line of a failed run's output that says why: the last one mentioning an error, else the last line.
     *
     * @param text the output
     * @return the line
     */
    public static String lastLine(String text) {
        String[] lines = text.strip().split("\\R");
        for (int i = lines.length - 1; i >= 0; i--) {
            if (lines[i].contains("failed") || lines[i].contains("ERROR") || lines[i].contains("error")) {
                return lines[i].strip();
            }
        }
        return lines.length == 0 ? "(no output)" : lines[lines.length - 1].strip();
    }
}
