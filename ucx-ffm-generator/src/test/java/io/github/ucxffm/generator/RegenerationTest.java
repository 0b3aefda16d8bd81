package io.github.ucxffm.generator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The committed bindings and release records are true to the installed UCX headers, on every UCX release the
 * project supports:
 * <ul>
 *   <li>the committed record of the installed release ({@code releases/ucx-VERSION.txt} in {@link #INPUTS}) is
 *   exactly what {@code --dump-release} makes from the installed headers, so the "since" notes and the per-release
 *   constant values generated from the records are true for this release;</li>
 *   <li>on the release the bindings were generated from, regenerating into a temporary folder gives a byte-identical
 *   tree;</li>
 *   <li>on any other release, every function, constant and record the installed headers declare is in the committed
 *   bindings, or the record of the bindings' release lacks it (newer than the bindings, or dropped by their
 *   release): those are listed.</li>
 * </ul>
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegenerationTest {

    private static final Pattern GENERATED_FROM = Pattern.compile("generated from the headers of UCX (\\S+?)\\.\\n");
    private static final Pattern DECLARED = Pattern.compile(
            "public static (?:class (\\w+) \\{|(?:final )?[\\w.]+ (\\w+)\\()");

    /**
     * Where the bindings' inputs live (the wrapper header, the argument files, the release records): beside the
     * bindings they produce. This test stays with the generator because it drives the generator's package-private
     * entry point and release model.
     */
    static final String INPUTS = "ucx-ffm-bindings/src/headers";

    static Path repoRoot() {
        Path p = Path.of(System.getProperty("ucxffm.repo.root", "")).toAbsolutePath();
        while (p.getParent() != null && !Files.isRegularFile(p.resolve(INPUTS).resolve("ucx.h"))) {
            p = p.getParent();
        }
        assertTrue(Files.isRegularFile(p.resolve(INPUTS).resolve("ucx.h")), "repository root not found");
        return p;
    }

    /** The installed release's record as --dump-release writes it with ./ucx-ffm regen --dump's arguments. */
    private static Map.Entry<String, String> dumpInstalled(Path root, Path out) {
        Path headers = root.resolve(INPUTS);
        Map<String, String> dump = Main.run(List.of("@" + headers.resolve("ucx.args"), "--dump-release",
                out.toString(), "--header-filter", "/ucp/", "--header-filter", "/uct/", "--header-filter", "/ucs/",
                headers.resolve("ucx.h").toString()));
        assertEquals(1, dump.size(), dump.keySet()::toString);
        return dump.entrySet().iterator().next();
    }

    @Test
    void shouldHoldTheInstalledReleasesRecordAndBindingsTrueToItsHeaders(@TempDir Path out) throws IOException {
        Path root = repoRoot();
        Path committed = root.resolve("ucx-ffm-bindings/src/generated/java");
        Path bindings = committed.resolve("io/github/ucxffm/bindings");
        String treeRelease = find(GENERATED_FROM, Files.readString(bindings.resolve("ucx_h.java")));

        Map.Entry<String, String> dump = dumpInstalled(root, out.resolve("records"));
        String fileName = Path.of(dump.getKey()).getFileName().toString();
        Release installed = Release.read(Path.of(dump.getKey()));
        Path record = root.resolve(INPUTS).resolve("releases").resolve(fileName);
        assertTrue(Files.isRegularFile(record), "no committed record " + record + " for the installed UCX "
                + installed.version + ": run ./ucx-ffm regen --dump on it and add it to ucx.args");
        assertEquals(dump.getValue(), Files.readString(record), record + " is not what the installed headers declare; "
                + "run ./ucx-ffm regen --dump on UCX " + installed.version);
        String args = Files.readString(root.resolve(INPUTS).resolve("ucx.args"));
        assertTrue(args.contains("--release-record releases/" + fileName), "ucx.args does not name " + fileName);
        System.out.println("the committed record of UCX " + installed.version + " matches the installed headers ("
                + installed.functions.size() + " functions, " + installed.constants.size() + " constants, "
                + installed.records.size() + " records)");

        if (installed.version.equals(treeRelease)) {
            regenerateByteForByte(root, committed, out.resolve("java"), treeRelease);
            return;
        }
        Release tree = Release.read(root.resolve(INPUTS).resolve("releases/ucx-" + treeRelease + ".txt"));
        Set<String> declared = new TreeSet<>();
        try (Stream<Path> files = Files.list(bindings)) {
            for (Path f : files.sorted().toList()) {
                String name = f.getFileName().toString();
                if (name.startsWith("ucx_h")) {
                    Matcher m = DECLARED.matcher(Files.readString(f));
                    while (m.find()) {
                        declared.add(m.group(1) != null ? m.group(1) : m.group(2));
                    }
                } else {
                    declared.add(name.substring(0, name.length() - ".java".length()));
                }
            }
        }
        List<String> notInBindings = new ArrayList<>();
        List<String> wrong = new ArrayList<>();
        check("function", installed.functions, declared, tree, notInBindings, wrong);
        check("constant", installed.constants.keySet(), declared, tree, notInBindings, wrong);
        check("record", installed.records.keySet(), declared, tree, notInBindings, wrong);
        String relation = installed.code > tree.code ? "newer than" : "dropped by";
        System.out.println("UCX " + installed.version + " declares " + notInBindings.size() + " names that the "
                + "bindings (UCX " + treeRelease + ") lack, all " + relation + " UCX " + treeRelease + ":");
        notInBindings.forEach(n -> System.out.println("  " + n));
        assertEquals(List.of(), wrong, "declared by the installed UCX " + installed.version + " and by UCX "
                + treeRelease + ", but missing from the bindings generated from it");
        assertTrue(installed.functions.size() > 150 && installed.records.size() > 60, "a whole UCX surface");
    }

    private static void check(String kind, Set<String> names, Set<String> declared, Release tree,
                              List<String> notInBindings, List<String> wrong) {
        for (String name : names) {
            if (declared.contains(name)) {
                continue;
            }
            (tree.has(name) ? wrong : notInBindings).add(kind + " " + name);
        }
    }

    private static void regenerateByteForByte(Path root, Path committed, Path out, String release)
            throws IOException {
        Path headers = root.resolve(INPUTS);
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
        System.out.println("regenerated " + actual.size() + " files from UCX " + release + ": identical");
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
