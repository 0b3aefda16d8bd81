package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;
import io.github.ucxffm.testsupport.ProcessMark;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./ucx-ffm demo}, the README's first command, run as a user runs it (against the jar this build packaged):
 * it prints the table and leaves no process behind.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DemoIT {

    private static final Pattern ROW = Pattern.compile(
            "^(\\S+)\\s+8 B\\s+([0-9.]+)\\s+([0-9.]+)\\s+(\\d+)$", Pattern.MULTILINE);

    static Path repoRoot() {
        Path p = Path.of(System.getProperty("ucxffm.repo.root", "")).toAbsolutePath();
        while (p.getParent() != null && !Files.isRegularFile(p.resolve("ucx-ffm"))) {
            p = p.getParent();
        }
        return p;
    }

    @Test
    void shouldRunTheDemoAndPrintTheLatencyTable() throws Exception {
        Path root = repoRoot();
        // every process the demo starts inherits the mark; only those count as this run's survivors below
        ProcessMark mark = ProcessMark.unique("UCXFFM_DEMO_IT_RUN");
        ChildProcess demo = mark.on(ChildProcess.command("bash", root.resolve("ucx-ffm").toString(), "demo"))
                .directory(root).name("demo")
                .env("UCXFFM_SKIP_BUILD", "1")
                .env("DEMO_ITERATIONS", "5000")
                .env("DEMO_WARMUP", "500")
                .run(Duration.ofSeconds(150));
        String out = demo.output();
        assertEquals(0, demo.exitCode(), out);
        assertTrue(out.contains("p50 one-way us"), out);
        Matcher m = ROW.matcher(out);
        int rows = 0;
        boolean sawShm = false;
        boolean sawTcp = false;
        while (m.find()) {
            rows++;
            sawShm |= m.group(1).matches(".*(posix|sysv|cma).*");
            sawTcp |= m.group(1).equals("tcp");
            assertTrue(Double.parseDouble(m.group(2)) > 0, m.group());
            assertTrue(Long.parseLong(m.group(4)) > 0, m.group());
        }
        assertEquals(2, rows, out);
        assertTrue(sawShm && sawTcp, out);
        // Nothing the demo started survives it (a demo run beside this one by another suite is not counted).
        assertEquals(List.of(), mark.processes("ucx-ffm-samples.jar tag-pingpong"), "demo processes left running");
    }
}
