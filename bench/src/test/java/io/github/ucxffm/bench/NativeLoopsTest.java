package io.github.ucxffm.bench;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openjdk.jmh.annotations.Benchmark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The C counterpart of the JMH benchmarks ({@code bench/native/ucp_loops.c}, run by {@code ./ucx-ffm bench loops})
 * builds, runs briefly, and reports one positive figure for each benchmark of {@link TagBenchmark} and
 * {@link RmaAmBenchmark}, under the same names: a benchmark added or renamed on one side only fails here.
 * Functional only; no figure is judged.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NativeLoopsTest {

    @Test
    void shouldBuildAndReportEveryJmhBenchmarkOfTheTwoClasses() throws Exception {
        Path source = Path.of("native", "ucp_loops.c");
        assertTrue(Files.isRegularFile(source), "run from the bench module: " + source.toAbsolutePath());
        Path binary = Path.of("target", "ucp_loops-test");
        Files.createDirectories(binary.getParent());
        ChildProcess build = ChildProcess.command("gcc", "-O2", "-Wall", "-Werror", "-Wno-unused-parameter", "-o",
                binary.toString(), source.toString(), "-lucp", "-lucs").run(Duration.ofSeconds(120));
        assertEquals(0, build.exitCode(), "gcc:\n" + build.output());

        ChildProcess r = ChildProcess.command(binary.toAbsolutePath().toString(), "2000").run(Duration.ofSeconds(60));
        assertEquals(0, r.exitCode(), r.output());
        Set<String> reported = new TreeSet<>();
        for (String line : r.output().lines().toList()) {
            String[] f = line.trim().split(" ");
            assertEquals(2, f.length, "a line is NAME NS_PER_OP: " + line);
            assertTrue(Double.parseDouble(f[1]) > 0, line);
            reported.add(f[0]);
        }
        Set<String> expected = new TreeSet<>();
        for (Class<?> c : List.of(TagBenchmark.class, RmaAmBenchmark.class)) {
            Stream.of(c.getDeclaredMethods()).filter(m -> m.isAnnotationPresent(Benchmark.class))
                    .forEach(m -> expected.add(c.getSimpleName() + "." + m.getName()));
        }
        assertEquals(expected, reported);
    }
}
