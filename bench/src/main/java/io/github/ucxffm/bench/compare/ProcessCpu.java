package io.github.ucxffm.bench.compare;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * CPU time of processes, from Linux's {@code /proc}: {@code utime + stime} of a live process
 * ({@code /proc/PID/stat}), and {@code cutime + cstime} of this one, which grows by the whole CPU time of each child
 * when it is reaped, so that a child's total is exact even after it exited.
 */
public final class ProcessCpu {

    /** Clock ticks per second of the {@code /proc} times ({@code getconf CLK_TCK}; 100 where it does not answer). */
    public static final long TICKS = clockTicks();

    private ProcessCpu() {
    }

    private static long clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            p.waitFor(5, TimeUnit.SECONDS);
            long t = Long.parseLong(text);
            return t > 0 ? t : 100;
        } catch (IOException | NumberFormatException e) {
            return 100;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 100;
        }
    }

    /**
     * The fields of a {@code stat} line after the command name (which may hold blanks and parentheses): the first
     * is the state, field 3 of proc(5).
     *
     * @param stat the line
     * @return the fields from the state on
     */
    static String[] fieldsAfterName(String stat) {
        int close = stat.lastIndexOf(')');
        return stat.substring(close + 2).trim().split("\\s+");
    }

    /**
     * {@code utime + stime} of a {@code stat} line, in ticks.
     *
     * @param stat the line
     * @return ticks
     */
    static long ownTicks(String stat) {
        String[] f = fieldsAfterName(stat);
        return Long.parseLong(f[14 - 3]) + Long.parseLong(f[15 - 3]);
    }

    /**
     * {@code cutime + cstime} of a {@code stat} line (reaped children), in ticks.
     *
     * @param stat the line
     * @return ticks
     */
    static long childTicks(String stat) {
        String[] f = fieldsAfterName(stat);
        return Long.parseLong(f[16 - 3]) + Long.parseLong(f[17 - 3]);
    }

    /**
     * CPU seconds a live process has used.
     *
     * @param pid the process
     * @return seconds, or {@link Double#NaN} if it cannot be read (gone, not Linux)
     */
    public static double seconds(long pid) {
        try {
            return (double) ownTicks(Files.readString(Path.of("/proc/" + pid + "/stat"))) / TICKS;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /**
     * Whether a thread's {@code stat} line is a HotSpot JIT compiler thread's: its name, cut by the kernel to 15
     * characters, starts with {@code C1 CompilerThre} or {@code C2 CompilerThre}.
     *
     * @param stat the line of {@code /proc/PID/task/TID/stat}
     * @return {@code true} for a compiler thread
     */
    static boolean isCompilerThread(String stat) {
        int open = stat.indexOf('(');
        return open >= 0 && (stat.startsWith("C1 CompilerThre", open + 1) || stat.startsWith("C2 CompilerThre",
                open + 1));
    }

    /**
     * CPU seconds the JIT compiler threads of a live HotSpot process have used so far (those alive now).
     *
     * @param pid the process
     * @return seconds, or {@link Double#NaN} if its threads cannot be read (gone, not Linux)
     */
    public static double compilerSeconds(long pid) {
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException e) {
                    continue; // the thread ended meanwhile
                }
                if (isCompilerThread(stat)) {
                    ticks += ownTicks(stat);
                }
            }
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
        return (double) ticks / TICKS;
    }

    /**
     * CPU seconds of this process's reaped children so far.
     *
     * @return seconds, or {@link Double#NaN} where {@code /proc} is missing
     */
    static double reapedChildrenSeconds() {
        try {
            return (double) childTicks(Files.readString(Path.of("/proc/self/stat"))) / TICKS;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /**
     * Whether a kernel socket table has an established connection from or to a port.
     *
     * @param port  the port
     * @param table the lines of {@code /proc/net/tcp} or {@code tcp6}
     * @return {@code true} if a line in state {@code 01} has the port at either end
     */
    static boolean isConnected(int port, List<String> table) {
        String hex = String.format(Locale.ROOT, ":%04X", port);
        for (String line : table) {
            String[] f = line.trim().split("\\s+");
            if (f.length > 3 && f[3].equals("01") && (f[1].endsWith(hex) || f[2].endsWith(hex))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether something is connected to or from the port on this machine.
     *
     * @param port the port
     * @return {@code true} once a connection is established
     */
    static boolean connected(int port) {
        for (String name : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                if (isConnected(port, Files.readAllLines(Path.of(name)))) {
                    return true;
                }
            } catch (IOException | RuntimeException e) {
                // no such table
            }
        }
        return false;
    }
}
