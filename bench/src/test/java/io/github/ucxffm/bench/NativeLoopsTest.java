package io.github.ucxffm.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openjdk.jmh.annotations.Benchmark;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
        Result build = run(120, "gcc", "-O2", "-Wall", "-Werror", "-Wno-unused-parameter", "-o", binary.toString(),
                source.toString(), "-lucp", "-lucs");
        assertEquals(0, build.exit(), "gcc:\n" + build.output());

        Result r = run(60, binary.toAbsolutePath().toString(), "2000");
        assertEquals(0, r.exit(), r.output());
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

    private record Result(int exit, String output) {
    }

    private static Result run(int timeoutSeconds, String... command) throws Exception {
        Path log = Files.createTempFile("ucp-loops", ".log");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertTrue(p.waitFor(timeoutSeconds, TimeUnit.SECONDS), String.join(" ", command) + " did not end");
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            p.destroyForcibly();
            Files.deleteIfExists(log);
        }
    }
}
