package io.github.ucxffm.peer;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A peer JVM started by a test: runs {@link PeerMain} with a role, reports lines on its standard output, and is
 * killed (by its PID, with its descendants) when closed, so that no test leaves a process behind.
 */
public final class PeerProcess implements AutoCloseable {

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuilder transcript = new StringBuilder();

    private PeerProcess(Process process) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (transcript) {
                        transcript.append(line).append('\n');
                    }
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("EOF " + e);
            }
        }, "peer-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code PeerMain role args...} in a new JVM with this test's class path.
     *
     * @param role the peer's role
     * @param args the role's arguments
     * @return the running peer
     * @throws IOException if the JVM cannot start
     */
    public static PeerProcess start(String role, String... args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC", "-Xmx256m", "-cp", classpath(), PeerMain.class.getName(), role));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        return new PeerProcess(pb.start());
    }

    private static String classpath() {
        String surefire = System.getProperty("surefire.test.class.path");
        if (surefire != null && !surefire.isBlank()) {
            return surefire;
        }
        List<String> parts = new ArrayList<>();
        for (Class<?> c : List.of(PeerMain.class, io.github.ucxffm.UcpContext.class,
                io.github.ucxffm.bindings.ucx_h.class)) {
            try {
                parts.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
        return String.join(File.pathSeparator, parts);
    }

    /**
     * Waits for the next output line that starts with {@code prefix}.
     *
     * @param prefix  what the line starts with
     * @param seconds how long to wait
     * @return the rest of the line after the prefix and a space
     * @throws InterruptedException if interrupted
     */
    public String expect(String prefix, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("peer did not print '" + prefix + "' within " + seconds + " s; output:\n"
                        + transcript() + (process.isAlive() ? "" : "(exited with " + process.exitValue() + ")"));
            }
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
    }

    /**
     * Waits for the peer to exit.
     *
     * @param seconds how long to wait
     * @return the exit status
     * @throws InterruptedException if interrupted
     */
    public int waitFor(int seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("peer still running after " + seconds + " s; output:\n" + transcript());
        }
        return process.exitValue();
    }

    /**
     * Everything the peer printed so far.
     *
     * @return the output
     */
    public String transcript() {
        synchronized (transcript) {
            return transcript.toString();
        }
    }

    /**
     * The peer's process id.
     *
     * @return the PID
     */
    public long pid() {
        return process.pid();
    }

    /** Kills the peer at once (SIGKILL), as a crash would. */
    public void kill() {
        process.destroyForcibly();
    }

    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
