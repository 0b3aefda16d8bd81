package io.github.ucxffm.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * An environment variable with a value unique to one test run, set on a process the test starts: every process that
 * one starts inherits it, so the test can tell its own processes (and their survivors) from those of another suite
 * running on the same machine at the same time, which a search by command line alone cannot.
 */
public final class ProcessMark {

    /** How many times an empty environment is read again, a millisecond apart, before it counts as unmarked. */
    private static final int EMPTY_ENVIRON_RETRIES = 50;

    private final String variable;
    private final String value;

    private ProcessMark(String variable, String value) {
        this.variable = variable;
        this.value = value;
    }

    /**
     * A mark no other run has: this JVM's pid and the time.
     *
     * @param variable the environment variable's name
     * @return the mark
     */
    public static ProcessMark unique(String variable) {
        return new ProcessMark(variable, ProcessHandle.current().pid() + "-" + System.nanoTime());
    }

    /**
     * Sets the mark on a process about to be started.
     *
     * @param builder the process
     * @return {@code builder}
     */
    public ChildProcess.Builder on(ChildProcess.Builder builder) {
        return builder.env(variable, value);
    }

    /**
     * Whether a process carries this mark: its environment ({@code /proc/PID/environ}) holds the variable with this
     * value.
     *
     * @param pid the process
     * @return {@code false} also for a process that has ended or whose environment cannot be read
     */
    public boolean carriedBy(long pid) {
        try {
            Path file = Path.of("/proc", Long.toString(pid), "environ");
            byte[] environ = Files.readAllBytes(file);
            // a process in the middle of execve shows an empty environment for a moment (a shell's child just forked
            // to run a command, say): read again before taking it as unmarked
            for (int retry = 0; environ.length == 0 && retry < EMPTY_ENVIRON_RETRIES; retry++) {
                Thread.sleep(1);
                environ = Files.readAllBytes(file);
            }
            String entry = variable + "=" + value;
            for (String e : new String(environ, StandardCharsets.ISO_8859_1).split("\0")) {
                if (e.equals(entry)) {
                    return true;
                }
            }
            return false;
        } catch (IOException gone) {
            return false; // ended meanwhile, or not readable: not one of this run's
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * The live processes that carry this mark and whose command line contains one of {@code fragments}.
     *
     * @param fragments parts of the command lines looked for
     * @return their pids
     */
    public List<Long> processes(String... fragments) {
        return ProcessHandle.allProcesses().filter(h -> {
            String c = h.info().commandLine().orElse("");
            for (String f : fragments) {
                if (c.contains(f)) {
                    return carriedBy(h.pid());
                }
            }
            return false;
        }).map(ProcessHandle::pid).toList();
    }

    @Override
    public String toString() {
        return variable + "=" + value;
    }
}
