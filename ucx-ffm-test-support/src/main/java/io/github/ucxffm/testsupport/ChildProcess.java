package io.github.ucxffm.testsupport;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A process a test starts: a JVM on the test's class path ({@link #java}) or any command ({@link #command}). Its
 * standard output and error are read on a daemon thread, kept whole (for failure messages) and line by line (for
 * {@link #expect}), and echoed to this JVM's standard output behind a prefix naming the child. {@link #close()}
 * kills it and its descendants by PID and waits for it, so that no test leaves a process behind; every failed wait
 * reports the exit status and the output.
 */
public final class ChildProcess implements AutoCloseable {

    /** Linux x86-64 and aarch64 signal numbers: kill. */
    public static final int SIGKILL = 9;
    /** Continue a stopped process. */
    public static final int SIGCONT = 18;
    /** Stop a process; it cannot be caught or ignored. */
    public static final int SIGSTOP = 19;

    /** The JVM flags of a child JVM unless the builder is given others: native access, a small serial heap. */
    public static final List<String> JVM_FLAGS =
            List.of("--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-Xmx256m");

    private final String name;
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuilder output = new StringBuilder();
    private final Thread reader;
    /** Whether {@link #stop()} was called: {@link #close()} then resumes the child before killing it. */
    private volatile boolean stopped;

    private ChildProcess(String name, Process process, PrintStream echo) {
        this.name = name;
        this.process = process;
        String prefix = "[" + name + " " + process.pid() + "] ";
        reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (output) {
                        output.append(line).append('\n');
                    }
                    lines.add(line);
                    if (echo != null) {
                        echo.println(prefix + line);
                    }
                }
            } catch (IOException e) {
                // the output ends here without its end: say so where a failure message shows it
                synchronized (output) {
                    output.append("(output cut: ").append(e).append(")\n");
                }
                lines.add("EOF " + e);
            }
        }, "child-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * A JVM running {@code mainClass} on this JVM's class path (the test class path under Maven).
     *
     * @param mainClass the class whose {@code main} the child runs
     * @return a builder
     */
    public static Builder java(Class<?> mainClass) {
        return java(mainClass.getName());
    }

    /**
     * A JVM running the named main class on this JVM's class path (the test class path under Maven).
     *
     * @param mainClass the binary name of the class whose {@code main} the child runs
     * @return a builder
     */
    public static Builder java(String mainClass) {
        Builder b = new Builder(mainClass.substring(mainClass.lastIndexOf('.') + 1));
        b.mainClass = mainClass;
        return b;
    }

    /**
     * Any command (a compiler, a script, a tool).
     *
     * @param command the program and its arguments
     * @return a builder
     */
    public static Builder command(List<String> command) {
        Builder b = new Builder(Path.of(command.getFirst()).getFileName().toString());
        b.args.addAll(command);
        return b;
    }

    /**
     * Any command (a compiler, a script, a tool).
     *
     * @param command the program and its arguments
     * @return a builder
     */
    public static Builder command(String... command) {
        return command(List.of(command));
    }

    /**
     * This JVM's class path as a child JVM needs it: surefire's test class path where there is one (surefire may
     * run the tests from a manifest-only jar), otherwise {@code java.class.path}.
     *
     * @return the class path
     */
    public static String testClassPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        if (surefire != null && !surefire.isBlank()) {
            return surefire;
        }
        return System.getProperty("java.class.path");
    }

    /** How a child is started. */
    public static final class Builder {
        private String name;
        private String mainClass;
        private String classPath;
        private List<String> jvmFlags = JVM_FLAGS;
        private final List<String> wrapper = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private final Map<String, String> environment = new LinkedHashMap<>();
        private final List<String> unset = new ArrayList<>();
        private Path directory;
        private boolean echo = true;

        private Builder(String name) {
            this.name = name;
        }

        /**
         * The name that prefixes the child's echoed lines and its failure messages.
         *
         * @param name the name
         * @return this builder
         */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * Arguments appended to the command (after the main class of a JVM).
         *
         * @param more the arguments
         * @return this builder
         */
        public Builder args(String... more) {
            return args(List.of(more));
        }

        /**
         * Arguments appended to the command (after the main class of a JVM).
         *
         * @param more the arguments
         * @return this builder
         */
        public Builder args(List<String> more) {
            args.addAll(more);
            return this;
        }

        /**
         * A variable added to the child's environment (which is otherwise this process's).
         *
         * @param key   the variable
         * @param value its value
         * @return this builder
         */
        public Builder env(String key, String value) {
            environment.put(key, value);
            return this;
        }

        /**
         * Variables added to the child's environment.
         *
         * @param variables the variables
         * @return this builder
         */
        public Builder env(Map<String, String> variables) {
            environment.putAll(variables);
            return this;
        }

        /**
         * A variable removed from the child's environment.
         *
         * @param key the variable
         * @return this builder
         */
        public Builder unsetEnv(String key) {
            environment.remove(key);
            unset.add(key);
            return this;
        }

        /**
         * Words run before the command ({@code unshare -rn}, to run it in a network namespace of its own).
         *
         * @param words the wrapper command
         * @return this builder
         */
        public Builder wrapper(List<String> words) {
            wrapper.addAll(words);
            return this;
        }

        /**
         * The flags of a child JVM, instead of {@link #JVM_FLAGS}.
         *
         * @param flags the flags
         * @return this builder
         */
        public Builder jvmFlags(List<String> flags) {
            jvmFlags = List.copyOf(flags);
            return this;
        }

        /**
         * The class path of a child JVM, instead of {@link #testClassPath()}.
         *
         * @param path the class path
         * @return this builder
         */
        public Builder classPath(String path) {
            classPath = path;
            return this;
        }

        /**
         * The child's working directory (default: this process's).
         *
         * @param dir the directory
         * @return this builder
         */
        public Builder directory(Path dir) {
            directory = dir;
            return this;
        }

        /**
         * Whether the child's lines are echoed to this JVM's standard output (default: yes).
         *
         * @param on whether to echo
         * @return this builder
         */
        public Builder echo(boolean on) {
            echo = on;
            return this;
        }

        /**
         * The command line this builder starts.
         *
         * @return the words
         */
        public List<String> commandLine() {
            List<String> command = new ArrayList<>(wrapper);
            if (mainClass != null) {
                command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
                command.addAll(jvmFlags);
                command.add("-cp");
                command.add((classPath != null ? classPath : testClassPath()).replace(';', File.pathSeparatorChar));
                command.add(mainClass);
            }
            command.addAll(args);
            return command;
        }

        /**
         * Starts the child, its standard error merged into its standard output.
         *
         * @return the running child
         * @throws IOException if it cannot start
         */
        public ChildProcess start() throws IOException {
            ProcessBuilder pb = new ProcessBuilder(commandLine()).redirectErrorStream(true);
            pb.environment().keySet().removeAll(unset);
            pb.environment().putAll(environment);
            if (directory != null) {
                pb.directory(directory.toFile());
            }
            return new ChildProcess(name, pb.start(), echo ? System.out : null);
        }

        /**
         * Starts the child, waits for it to end and returns it, for a command that runs to its end (a compiler,
         * say); killed if it does not end in time.
         *
         * @param timeout how long it may take
         * @return the ended child: {@link #exitCode()} and {@link #output()}
         * @throws IOException    if it cannot start
         * @throws AssertionError if it does not end in time
         */
        public ChildProcess run(Duration timeout) throws IOException {
            try (ChildProcess child = start()) {
                child.waitFor(timeout);
                return child;
            }
        }
    }

    /**
     * Waits for the next output line (not yet returned by an earlier call) that starts with {@code prefix}.
     *
     * @param prefix  what the line starts with
     * @param seconds how long to wait
     * @return the rest of the line after the prefix, trimmed
     * @throws InterruptedException if interrupted
     * @throws AssertionError       with the output, if no such line comes in time
     */
    public String expect(String prefix, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw failure("did not print '" + prefix + "' within " + seconds + " s");
            }
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
    }

    /**
     * Waits until the output so far contains {@code text}.
     *
     * @param text    the text
     * @param seconds how long to wait
     * @throws AssertionError with the output, if it does not come in time or the child ends without it
     */
    public void awaitOutput(String text, int seconds) {
        awaitOutput(Pattern.compile(Pattern.quote(text)), seconds);
    }

    /**
     * Waits until the output so far has a match of {@code pattern}.
     *
     * @param pattern the pattern
     * @param seconds how long to wait
     * @return the first match
     * @throws AssertionError with the output, if none comes in time or the child ends without one
     */
    public MatchResult awaitOutput(Pattern pattern, int seconds) {
        MatchResult[] found = new MatchResult[1];
        boolean[] ended = new boolean[1];
        Await.until(() -> failure("printed no match of '" + pattern + "'").getMessage(),
                Duration.ofSeconds(seconds), Await::pause, () -> {
                    // read whether it ended before the output: a match printed just before the end is then seen
                    ended[0] = !process.isAlive() && !reader.isAlive();
                    Matcher m = pattern.matcher(output());
                    if (m.find()) {
                        found[0] = m.toMatchResult();
                        return true;
                    }
                    if (ended[0]) {
                        throw failure("ended without printing a match of '" + pattern + "'");
                    }
                    return false;
                });
        return found[0];
    }

    /**
     * Waits for the child to end, without failing if it does not.
     *
     * @param seconds how long to wait
     * @return whether it ended
     * @throws InterruptedException if interrupted
     */
    public boolean awaitExit(long seconds) throws InterruptedException {
        boolean ended = process.waitFor(seconds, TimeUnit.SECONDS);
        if (ended) {
            reader.join(5000); // the rest of the output, unless a descendant still holds the pipe
        }
        return ended;
    }

    /**
     * Waits for the child to end.
     *
     * @param seconds how long to wait
     * @return its exit status
     * @throws InterruptedException if interrupted
     * @throws AssertionError       with the output, if it still runs
     */
    public int waitFor(int seconds) throws InterruptedException {
        if (!awaitExit(seconds)) {
            throw failure("still running after " + seconds + " s");
        }
        return process.exitValue();
    }

    /**
     * Waits for the child to end; an interrupt fails the wait.
     *
     * @param timeout how long to wait
     * @return its exit status
     * @throws AssertionError with the output, if it still runs or the thread is interrupted
     */
    public int waitFor(Duration timeout) {
        try {
            if (!awaitExit(timeout.toSeconds())) {
                throw failure("still running after " + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("interrupted while waiting for its end");
        }
        return process.exitValue();
    }

    /**
     * The exit status of a child that has ended.
     *
     * @return the status
     * @throws IllegalStateException if it still runs
     */
    public int exitCode() {
        return process.exitValue();
    }

    /**
     * Everything the child printed so far.
     *
     * @return the output
     */
    public String output() {
        synchronized (output) {
            return output.toString();
        }
    }

    /**
     * Everything the child printed, once its output has been read to the end (the child exited and the pipe is
     * drained). After a SIGKILL the pipe still holds what the child wrote, and on a loaded machine the reader may be
     * well behind: output that merely stopped changing for a while can still be incomplete.
     *
     * @param seconds how long to wait for the end of the output
     * @return the whole output
     * @throws InterruptedException if interrupted
     * @throws AssertionError       if the output did not end in time
     */
    public String outputToEnd(int seconds) throws InterruptedException {
        reader.join(TimeUnit.SECONDS.toMillis(seconds));
        if (reader.isAlive()) {
            throw new AssertionError(this + ": the output did not end within " + seconds + " s"
                    + (process.isAlive() ? " (it is still running)" : ""));
        }
        return output();
    }

    /**
     * An assertion failure about this child: the message, how the child stands (running, or its exit status) and
     * its output.
     *
     * @param message what went wrong
     * @return the failure, to throw
     */
    public AssertionError failure(String message) {
        String state = process.isAlive() ? "running" : "exited with " + process.exitValue();
        return new AssertionError(this + " " + message + " (" + state + "); output:\n" + output());
    }

    /**
     * The child's process id.
     *
     * @return the PID
     */
    public long pid() {
        return process.pid();
    }

    /**
     * Whether the child is still running (a stopped child is).
     *
     * @return {@code true} until it exited or was killed
     */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Kills the child at once (SIGKILL), as a crash would; its descendants are left to {@link #close()}. */
    public void kill() {
        process.destroyForcibly();
    }

    /**
     * Freezes the child (SIGSTOP) and waits until every thread of it has stopped: it stays alive, its sockets open
     * and its kernel acknowledging TCP, but it runs no code. {@link #close()} resumes and kills it, so a test that
     * stops a child leaves nothing stopped behind.
     */
    public void stop() {
        stopped = true;
        signal(process.pid(), SIGSTOP);
        // kill() only starts the group stop: one thread is woken to stop the others, and until they have, the
        // child's threads still run and may answer a message sent right after. Wait for every thread.
        Await.until(this + " stopped", Duration.ofSeconds(5), Thread::onSpinWait, this::allThreadsStopped);
    }

    /** Whether every thread of the child is in state T (stopped), per {@code /proc/PID/task/TID/stat}. */
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

    /** Resumes a child frozen with {@link #stop()} (SIGCONT). */
    public void resume() {
        signal(process.pid(), SIGCONT);
    }

    /**
     * Sends a signal to a process ({@code kill(2)}); a child program uses it on itself to die at a precise point.
     *
     * @param pid    the process
     * @param signal the signal number
     * @throws IllegalStateException if {@code kill} fails (except for SIGCONT, sent also to processes that are gone)
     */
    public static void signal(long pid, int signal) {
        int result;
        try {
            result = (int) Kill.KILL.invokeExact((int) pid, signal);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (result != 0 && signal != SIGCONT) {
            throw new IllegalStateException("kill(" + pid + ", " + signal + ") failed");
        }
    }

    /** Holds the {@code kill} downcall, so that only code that sends signals links it (a restricted method). */
    private static final class Kill {
        static final MethodHandle KILL = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("kill").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    /**
     * Resumes the child if stopped, kills its descendants and it (SIGKILL, by PID) and waits, 10 s at most in all,
     * for each of them to end: a killed grandchild is gone only once it has been reaped, which can come after the
     * child's own end (a test that looked for the tree right after {@code close()} found its grandchild still there).
     */
    @Override
    public void close() {
        if (stopped && process.isAlive()) {
            signal(process.pid(), SIGCONT); // a stopped process dies of SIGKILL too, but leave nothing frozen anyway
        }
        List<ProcessHandle> descendants = process.descendants().toList();
        descendants.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try {
            process.waitFor(10, TimeUnit.SECONDS);
            for (ProcessHandle h : descendants) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                h.onExit().get(left, TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // still there after 10 s, or not to be watched: nothing more to do than the SIGKILL already sent
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}
