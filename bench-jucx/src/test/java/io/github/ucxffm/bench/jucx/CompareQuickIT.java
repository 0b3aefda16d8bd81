package io.github.ucxffm.bench.jucx;

import io.github.ucxffm.bench.perftest.PerfFinal;
import io.github.ucxffm.testsupport.ChildProcess;
import io.github.ucxffm.testsupport.ProcessMark;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.imageio.ImageIO;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code ./ucx-ffm bench compare --quick}, shortened further, through the launcher against the packaged runners:
 * native ucx_perftest, ucx-ffm and JUCX each run, with one thread and with two ({@code -T 2}), the tables have a
 * number for each, the files are written, and no process survives. And {@code ./ucx-ffm bench} alone lists the
 * subcommands.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class CompareQuickIT {

    static Path repoRoot() {
        Path p = Path.of(System.getProperty("ucxffm.repo.root", "")).toAbsolutePath();
        while (p.getParent() != null && !Files.isRegularFile(p.resolve("ucx-ffm"))) {
            p = p.getParent();
        }
        return p;
    }

    private static boolean onPath(String command) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .anyMatch(d -> Files.isExecutable(Path.of(d, command)));
    }

    @Test
    void shouldCompareTheThreeImplementationsAndLeaveNoProcessBehind(@TempDir Path out) throws Exception {
        assumeTrue(onPath("ucx_perftest"), "ucx_perftest is not installed (Debian: ucx-utils)");
        Path root = repoRoot();
        Path benchJar = root.resolve("bench/target/benchmarks.jar");
        assumeTrue(Files.isRegularFile(benchJar), "the bench module is not packaged: " + benchJar);
        // every process the launcher starts inherits the mark: only those count as this run's survivors below, so
        // another suite running on the machine at the same time cannot fail this test
        ProcessMark mark = ProcessMark.unique("UCXFFM_COMPARE_QUICK_RUN");
        ChildProcess lister = ChildProcess.command("bash", root.resolve("ucx-ffm").toString(), "bench")
                .directory(root).run(Duration.ofSeconds(30));
        String subcommands = lister.output();
        assertEquals(0, lister.exitCode(), subcommands);
        assertTrue(subcommands.contains("compare [OPTIONS]") && subcommands.contains("jmh [JMH ARGS]"), subcommands);
        // as a user runs it, through the launcher (which builds nothing here: the jars are this build's)
        ChildProcess p = mark.on(ChildProcess.command("bash", root.resolve("ucx-ffm").toString(), "bench",
                        "compare", "--quick", "--sizes", "8,64k", "--iterations", "2000", "--ranks", "50",
                        "--sections", "main,threads", "--out", out.toString()))
                .directory(root).name("compare")
                .env("UCXFFM_SKIP_BUILD", "1")
                .env("JAVA_HOME", System.getProperty("java.home"))
                .run(Duration.ofSeconds(200));
        String text = p.output();
        assertEquals(0, p.exitCode(), text);
        // the main table's rows (the averages table under it has a mode column, '-', before its statistic)
        List<String> rows = text.lines().filter(l -> l.matches("(shm|tcp)\\s+tag_(lat|bw)\\s+\\d+ [KM]?i?B\\s+"
                + "(p50 us|MB/s)\\s+.*")).toList();
        assertEquals(8, rows.size(), text);
        for (String row : rows) {
            String[] f = row.trim().split("\\s+");
            // ... native ucx-ffm jucx ffm/native ffm/jucx: five positive numbers at the end of every row (not fast:
            // with so few iterations ucx-ffm runs mostly before the JIT compiled its downcalls)
            for (int i = f.length - 5; i < f.length; i++) {
                assertTrue(Double.parseDouble(f[i]) > 0, row);
            }
        }
        // the threads table: two threads, a message rate from each implementation, JUCX's included
        List<String> threads = text.lines().filter(l -> l.matches("(shm|tcp)\\s+tag_bw\\s+8 B 2 thr\\s+msg/s\\s+.*"))
                .toList();
        assertEquals(2, threads.size(), text);
        for (String row : threads) {
            String[] f = row.trim().split("\\s+");
            for (int i = f.length - 5; i < f.length; i++) {
                assertTrue(Double.parseDouble(f[i]) > 0, row);
            }
        }
        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.filter(d -> d.getFileName().toString().startsWith("compare-")).findFirst().orElseThrow();
        }
        for (String name : List.of("runs.csv", "summary.csv", "stats.csv", "table.txt", "environment.txt")) {
            assertTrue(Files.size(dir.resolve(name)) > 0, name);
        }
        // the main sweep's 24 runs, and 2 transports x 2 thread counts x 3 implementations
        assertEquals(1 + 24 + 12, Files.readAllLines(dir.resolve("runs.csv")).size());
        assertNotNull(ImageIO.read(dir.resolve("compare.png").toFile()), "compare.png is not a PNG");
        assertTrue(PerfFinal.parse("Final: 1 1 1 1 1 1 1 1").isPresent());
        List<Long> after = mark.processes("ucx_perftest", "bench.perftest.PerfTest", "ucx-ffm-bench-jucx.jar");
        assertTrue(after.isEmpty(), "runner processes left behind: " + after);
    }
}
