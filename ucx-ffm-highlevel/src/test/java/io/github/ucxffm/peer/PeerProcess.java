package io.github.ucxffm.peer;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A peer JVM started by a test: runs {@link PeerMain} with a role, reports lines on its standard output, and is
 * killed (by its PID, with its descendants) when closed, so that no test leaves a process behind.
 */
public final class PeerProcess implements AutoCloseable {

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuilder transcript = new StringBuilder();
    /** Reads the peer's output into {@link #transcript} and {@link #lines}; ends at the end of the output. */
    private final Thread reader;

    private PeerProcess(Process process) {
        this.process = process;
        reader = new Thread(() -> {
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
                // the output ends here without its end: say so where a failure message shows the transcript
                synchronized (transcript) {
                    transcript.append("(peer output cut: ").append(e).append(")\n");
                }
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
        return start(Map.of(), role, args);
    }

    /**
     * Starts {@code PeerMain role args...} in a new JVM with this test's class path and extra environment variables
     * (such as {@code UCX_RNDV_THRESH}, which UCX reads when the peer creates its context).
     *
     * @param environment variables to add to this process's environment
     * @param role        the peer's role
     * @param args        the role's arguments
     * @return the running peer
     * @throws IOException if the JVM cannot start
     */
    public static PeerProcess start(Map<String, String> environment, String role, String... args) throws IOException {
        List<String> all = new ArrayList<>(List.of(role));
        all.addAll(List.of(args));
        return launch(environment, List.of(), PeerMain.class, all);
    }

    /**
     * Starts {@code mainClass args...} in a new JVM with this test's class path, the given environment added, and
     * the command line put behind {@code wrapper} (for example {@code unshare -rn}, to run the peer in a network
     * namespace of its own; empty for none).
     *
     * @param environment variables to add to this process's environment
     * @param wrapper     words run before the {@code java} command, or an empty list
     * @param mainClass   the class whose {@code main} the peer runs
     * @param args        its arguments
     * @return the running peer
     * @throws IOException if the process cannot start
     */
    public static PeerProcess launch(Map<String, String> environment, List<String> wrapper, Class<?> mainClass,
            List<String> args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(wrapper);
        command.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-Xmx256m", "-cp",
                classpath(), mainClass.getName()));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(environment);
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
     * Everything the peer printed, once its output has been read to the end (the peer exited and the pipe is
     * drained). After a SIGKILL the pipe still holds what the peer wrote, and on a loaded machine the reader may be
     * well behind: output that merely stopped changing for a while can still be incomplete.
     *
     * @param seconds how long to wait for the end of the output
     * @return the whole output
     * @throws InterruptedException if interrupted
     * @throws AssertionError       if the output did not end in time
     */
    public String transcriptToEnd(int seconds) throws InterruptedException {
        reader.join(TimeUnit.SECONDS.toMillis(seconds));
        if (reader.isAlive()) {
            throw new AssertionError("the peer's output did not end within " + seconds + " s"
                    + (process.isAlive() ? " (the peer is still running)" : ""));
        }
        return transcript();
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

    /**
     * Freezes the peer (SIGSTOP): it stays alive, its sockets open and its kernel acknowledging TCP, but it runs no
     * code. {@link #close()} resumes and kills it, so a test that stops a peer leaves nothing stopped behind.
     */
    public void stop() {
        signal(process.pid(), SIGSTOP);
        // kill() only starts the group stop: one thread is woken to stop the others, and until they have, the
        // peer's progress thread still runs and may answer a message sent right after. Wait for every thread.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!allThreadsStopped()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("peer " + process.pid() + " did not stop within 5 s");
            }
            Thread.onSpinWait();
        }
    }

    /** Whether every thread of the peer is in state T (stopped), per {@code /proc/PID/task/TID/stat}. */
    private boolean allThreadsStopped() {
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException gone) {
                    continue; // a thread that exited meanwhile
                }
                char state = stat.charAt(stat.lastIndexOf(')') + 2);
                if (state != 'T' && state != 't' && state != 'Z' && state != 'X') {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            return !process.isAlive();
        }
    }

    /** Resumes a peer frozen with {@link #stop()} (SIGCONT). */
    public void resume() {
        signal(process.pid(), SIGCONT);
    }

    /**
     * Whether the peer process is still running (a stopped peer is).
     *
     * @return {@code true} until it exited or was killed
     */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Linux x86-64 and aarch64 signal numbers. */
    public static final int SIGKILL = 9;
    /** Continue a stopped process. */
    public static final int SIGCONT = 18;
    /** Stop a process; it cannot be caught or ignored. */
    public static final int SIGSTOP = 19;

    private static final MethodHandle KILL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("kill").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    /**
     * Sends a signal to a process ({@code kill(2)}); a peer uses it on itself to die at a precise point.
     *
     * @param pid    the process
     * @param signal the signal number
     */
    public static void signal(long pid, int signal) {
        int result;
        try {
            result = (int) KILL.invokeExact((int) pid, signal);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (result != 0 && signal != SIGCONT) {
            throw new IllegalStateException("kill(" + pid + ", " + signal + ") failed");
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            signal(process.pid(), SIGCONT); // a stopped process dies of SIGKILL too, but leave nothing frozen anyway
        }
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
