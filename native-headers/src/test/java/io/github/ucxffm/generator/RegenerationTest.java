package io.github.ucxffm.generator;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The committed bindings are exactly what the generator makes from the installed headers: regenerating into a
 * temporary folder gives a byte-identical tree. Runs when the installed UCX is the version the bindings were
 * generated from (other versions legitimately differ) and says so when it skips.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegenerationTest {

    private static final Path VERSION_HEADER = Path.of("/usr/include/uct/api/version.h");
    private static final Pattern VERSION_DEFINE = Pattern.compile("#define\\s+UCT_VERNO_STRING\\s+\"([^\"]+)\"");
    private static final Pattern RECORDED = Pattern.compile(
            "public static String UCT_VERNO_STRING\\(\\) \\{\\s*return \"([^\"]+)\";");

    static Path repoRoot() {
        Path p = Path.of(System.getProperty("ucxffm.repo.root", "")).toAbsolutePath();
        while (p.getParent() != null && !Files.isRegularFile(p.resolve("native-headers/ucx.h"))) {
            p = p.getParent();
        }
        assertTrue(Files.isRegularFile(p.resolve("native-headers/ucx.h")), "repository root not found");
        return p;
    }

    @Test
    void shouldRegenerateTheCommittedBindingsByteForByte(@TempDir Path out) throws IOException {
        Path root = repoRoot();
        Path committed = root.resolve("ucx-ffm-bindings/src/generated/java");
        String recorded = find(RECORDED, readAll(committed.resolve("io/github/ucxffm/bindings")));
        Assumptions.assumeTrue(Files.isRegularFile(VERSION_HEADER),
                () -> skip("UCX headers are not installed (" + VERSION_HEADER + ")"));
        String installed = find(VERSION_DEFINE, Files.readString(VERSION_HEADER));
        Assumptions.assumeTrue(installed.equals(recorded), () -> skip("the installed UCX headers are " + installed
                + " but the committed bindings were generated from " + recorded));

        Path headers = root.resolve("native-headers");
        Main.run(List.of("@" + headers.resolve("ucx.args"), "--output", out.toString(),
                headers.resolve("ucx.h").toString()));

        Map<String, byte[]> expected = tree(committed);
        Map<String, byte[]> actual = tree(out);
        assertEquals(expected.keySet(), actual.keySet(), "the set of generated files differs");
        List<String> different = new ArrayList<>();
        for (String file : expected.keySet()) {
            if (!java.util.Arrays.equals(expected.get(file), actual.get(file))) {
                different.add(file);
            }
        }
        assertEquals(List.of(), different, "regenerated files differ from the committed ones; run ./ucx-ffm regen");
        assertTrue(expected.size() > 200, "generated files: " + expected.size());
        System.out.println("regenerated " + actual.size() + " files from UCX " + installed + ": identical");
    }

    private static String skip(String reason) {
        String message = "skipping the regeneration check: " + reason;
        System.out.println(message);
        return message;
    }

    private static String readAll(Path dir) throws IOException {
        return Files.readString(dir.resolve("ucx_h.java")) + (Files.exists(dir.resolve("ucx_h_1.java"))
                ? Files.readString(dir.resolve("ucx_h_1.java")) : "");
    }

    private static String find(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        assertTrue(m.find(), "no " + pattern + " found");
        return m.group(1);
    }

    private static Map<String, byte[]> tree(Path dir) throws IOException {
        Map<String, byte[]> files = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.filter(Files::isRegularFile).toList()) {
                files.put(dir.relativize(p).toString(), Files.readAllBytes(p));
            }
        }
        return files;
    }
}
