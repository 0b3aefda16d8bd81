package io.github.ucxffm.samples;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A sample run as its own process, as a user runs it: {@code java -jar ucx-ffm-samples.jar NAME ARGS} when the
 * jar exists, otherwise the test class path. Killed by PID when closed.
 */
final class SampleRun implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("listening on .*:(\\d+)$", Pattern.MULTILINE);

    private final Process process;
    private final StringBuffer output = new StringBuffer();
    private final Thread reader;

    private SampleRun(Process process) {
        this.process = process;
        this.reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    output.append(line).append('\n');
                }
            } catch (IOException e) {
                output.append("(output closed: ").append(e.getMessage()).append(")\n");
            }
        });
        reader.setDaemon(true);
        reader.start();
    }

    static SampleRun start(String sample, String... args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC", "-Xmx256m", "-cp", classpath(), Samples.class.getName(), sample));
        command.addAll(List.of(args));
        return new SampleRun(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    private static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        if (cp != null && !cp.isBlank()) {
            return cp;
        }
        Path jar = Path.of("target", "ucx-ffm-samples.jar");
        if (Files.isRegularFile(jar)) {
            return jar.toAbsolutePath().toString();
        }
        return System.getProperty("java.class.path").replace(';', File.pathSeparatorChar);
    }

    /** Waits for the server's "listening on HOST:PORT" line and returns the port. */
    int port(int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            Matcher m = LISTENING.matcher(output);
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            if (!process.isAlive()) {
                break;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the server reported no port; output:\n" + output);
    }

    /** Waits for the process to end; returns its exit status. */
    int exit(int seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("still running after " + seconds + " s; output:\n" + output);
        }
        reader.join(5000);
        return process.exitValue();
    }

    String output() {
        return output.toString();
    }

    void kill() {
        process.destroyForcibly();
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
