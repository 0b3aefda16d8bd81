package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * A sample run as its own process, as a user runs it: {@code java -cp ucx-ffm-samples.jar Samples NAME ARGS} when
 * there is no test class path but the jar exists, otherwise the test class path; a {@link ChildProcess}, killed by
 * PID when closed.
 */
final class SampleRun {

    private static final Pattern LISTENING = Pattern.compile("listening on .*:(\\d+)$", Pattern.MULTILINE);

    private SampleRun() {
    }

    static ChildProcess start(String sample, String... args) throws IOException {
        return ChildProcess.java(Samples.class).name(sample).classPath(classpath()).args(sample).args(args).start();
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
        return ChildProcess.testClassPath();
    }

    /** Waits for the server's "listening on HOST:PORT" line and returns the port. */
    static int port(ChildProcess server, int seconds) {
        return Integer.parseInt(server.awaitOutput(LISTENING, seconds).group(1));
    }
}
