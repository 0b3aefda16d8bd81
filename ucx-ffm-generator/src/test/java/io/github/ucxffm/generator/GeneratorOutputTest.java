package io.github.ucxffm.generator;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The generator's output as files: stable from run to run, and the --dump-includes argument file. */
class GeneratorOutputTest {

    @TempDir
    static Path work;

    private static Path header;
    private static final Path LIBRARY = Path.of("/opt/synthetic/libsynthetic.so"); // only written into the sources

    @BeforeAll
    static void copyHeader() {
        header = SyntheticFixture.copySources(work.resolve("c"));
    }

    @Test
    void shouldWriteByteIdenticalTreesOnRepeatedRuns() {
        Path first = work.resolve("first");
        Path second = work.resolve("second");
        Map<String, String> files = Main.run(SyntheticFixture.generatorArgs(header, LIBRARY, first));
        Main.run(SyntheticFixture.generatorArgs(header, LIBRARY, second));
        Map<String, byte[]> a = SyntheticFixture.tree(first);
        Map<String, byte[]> b = SyntheticFixture.tree(second);
        assertEquals(a.keySet(), b.keySet());
        for (String file : a.keySet()) {
            assertTrue(Arrays.equals(a.get(file), b.get(file)), file + " differs between two runs");
        }
        Set<String> expected = new TreeSet<>();
        files.keySet().forEach(f -> expected.add(SyntheticFixture.PACKAGE + "/" + f));
        assertEquals(expected, a.keySet());
        assertTrue(files.keySet().containsAll(List.of("synthetic_h.java", "synthetic_h$shared.java",
                "syn_complex.java", "syn_point.java", "syn_point_t.java", "syn_transform_cb_t.java")), files.keySet()::toString);
    }

    @Test
    void shouldReplaceStaleOutputsOnRegeneration() throws IOException {
        Path out = work.resolve("stale");
        Path stale = out.resolve(SyntheticFixture.PACKAGE).resolve("syn_removed.java");
        Files.createDirectories(stale.getParent());
        Files.writeString(stale, "class syn_removed {}");
        Main.run(SyntheticFixture.generatorArgs(header, LIBRARY, out));
        assertFalse(Files.exists(stale), "an output for a symbol no longer generated survived");
    }

    @Test
    void shouldDumpExactlyTheSymbolsOfTheFilteredHeader() throws IOException {
        Path dump = work.resolve("dump/filtered.args");
        Main.run(List.of("--dump-includes", dump.toString(), "--header-filter", "synthetic.h", header.toString()));
        String text = Files.readString(dump);
        assertEquals(expectedIncludeLines(), includeLines(text));
        for (String absent : List.of("syn_inline_twice", "SYN_MAX", "SYN_NOT_CONST", "SYNTHETIC_H", "INT32_MAX",
                "int32_t", "__")) {
            assertFalse(text.contains(absent), "the dump mentions " + absent + ":\n" + text);
        }
    }

    @Test
    void shouldDumpSystemHeadersWithoutFilterButNeverCompilerBuiltinMacros() throws IOException {
        Path dump = work.resolve("dump/all.args");
        Main.run(List.of("--dump-includes", dump.toString(), header.toString()));
        String text = Files.readString(dump);
        Set<String> lines = includeLines(text);
        assertTrue(lines.containsAll(expectedIncludeLines()), "the synthetic symbols are missing:\n" + text);
        assertTrue(lines.contains("--include-constant INT32_MAX"), text);
        assertTrue(lines.contains("--include-typedef int32_t"), text);
        for (String builtin : List.of("__x86_64__", "__GNUC__", "__clang__", "__STDC_VERSION__", "__LINE__",
                "__INT_MAX__", "__SIZEOF_POINTER__")) {
            assertFalse(lines.contains("--include-constant " + builtin), "the dump lists " + builtin);
        }
        // every heading once: the groups of one subsystem stay together
        List<String> headings = text.lines().filter(l -> l.startsWith("### ")).toList();
        assertEquals(new LinkedHashSet<>(headings).size(), headings.size(), "repeated headings: " + headings);
    }

    @Test
    void shouldGenerateFromTheDumpUsedAsArgumentFile() throws IOException {
        Path dump = work.resolve("dump/roundtrip.args");
        Main.run(List.of("--dump-includes", dump.toString(), "--header-filter", "synthetic.h", header.toString()));
        Path fromDump = work.resolve("from-dump");
        Path explicit = work.resolve("explicit");
        Main.run(List.of("@" + dump, "--output", fromDump.toString(), "-t", SyntheticFixture.PACKAGE,
                "-l", LIBRARY.toString(), header.toString()));
        Main.run(SyntheticFixture.generatorArgs(header, LIBRARY, explicit));
        Map<String, byte[]> a = SyntheticFixture.tree(fromDump);
        Map<String, byte[]> b = SyntheticFixture.tree(explicit);
        assertEquals(b.keySet(), a.keySet());
        for (String file : a.keySet()) {
            assertTrue(Arrays.equals(a.get(file), b.get(file)), file + " differs");
        }
    }

    private static Set<String> includeLines(String dump) {
        Set<String> lines = new TreeSet<>();
        for (String line : dump.lines().toList()) {
            if (line.startsWith("--include-")) {
                assertTrue(lines.add(line), "listed twice: " + line);
            }
        }
        return lines;
    }

    private static Set<String> expectedIncludeLines() {
        List<String> includes = new ArrayList<>(SyntheticFixture.INCLUDES);
        Set<String> lines = new TreeSet<>();
        for (int i = 0; i < includes.size(); i += 2) {
            lines.add(includes.get(i) + " " + includes.get(i + 1));
        }
        return lines;
    }
}
