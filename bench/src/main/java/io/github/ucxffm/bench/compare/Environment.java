package io.github.ucxffm.bench.compare;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What a benchmark's results were measured on: the date, CPU, kernel, system, JDK, UCX, what was compared and the
 * load average, one {@code name: value} line each, as {@code environment.txt} of {@code bench compare} and
 * {@code bench transport} holds them.
 */
public final class Environment {
    private Environment() {
    }

    /**
     * The description.
     *
     * @param compared what the benchmark compares, by name (implementations and their versions), in order
     * @return the lines, without a final line break
     */
    public static String describe(Map<String, String> compared) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("date", LocalDateTime.now().toString());
        m.put("cpu", cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores");
        m.put("kernel", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("system", system()); // in a release's root (--release), that release's
        m.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("ucx", ucxVersion());
        m.putAll(compared);
        m.put("load average", loadAverage());
        StringBuilder b = new StringBuilder();
        m.forEach((k, v) -> b.append(String.format(Locale.ROOT, "%-13s %s%n", k + ":", v)));
        return b.toString().stripTrailing();
    }

    /**
     * The load average of the last 1, 5 and 15 minutes.
     *
     * @return the three numbers, or {@code unknown}
     */
    public static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through
        }
        return System.getProperty("os.arch");
    }

    /** The distribution: {@code PRETTY_NAME} of {@code /etc/os-release}. */
    private static String system() {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/os-release"))) {
                if (line.startsWith("PRETTY_NAME=")) {
                    return line.substring(line.indexOf('=') + 1).replace("\"", "").trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through
        }
        return "unknown";
    }

    private static String ucxVersion() {
        try {
            Process p = new ProcessBuilder("ucx_info", "-v").redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
            for (String line : text.split("\\R")) {
                if (line.contains("Version") || line.contains("version")) {
                    return line.replace("#", "").trim();
                }
            }
            return "unknown";
        } catch (IOException e) {
            return "unknown (no ucx_info)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
