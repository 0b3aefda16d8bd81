package io.github.ucxffm.generator;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Release records end to end, on three releases of a small library "rel": {@code --dump-release} writes each
 * release's surface; the bindings generated from release 2.0.0 with the three records note what not every release
 * has, name the recorded releases in a missing-symbol error, and resolve a constant whose value differs between
 * releases from the version the library hook reports (a fresh class loader per version, as each JVM resolves once).
 */
class ReleaseRecordTest {

    private static final String HOOK = """
            package rel;

            /** Reports the release named by the system property rel.version, as the UCX hook reports UCX's. */
            public final class RelHook {
                private RelHook() {
                }

                /** Nothing to prepare. */
                public static void beforeLoad() {
                }

                /** @return {@code MAJOR << 16 | MINOR << 8 | PATCH} of rel.version */
                public static int version() {
                    String[] v = System.getProperty("rel.version").split("\\\\.");
                    return Integer.parseInt(v[0]) << 16 | Integer.parseInt(v[1]) << 8 | Integer.parseInt(v[2]);
                }

                /** @return the release for messages */
                public static String describe() {
                    return "REL " + System.getProperty("rel.version");
                }
            }
            """;

    @TempDir
    static Path work;

    private static Path records;
    private static Map<String, String> generated;
    private static Path classes;
    private static final List<URLClassLoader> loaders = new ArrayList<>();

    /** Release MAJOR.0.0 of rel.h: 1.0.0 is the oldest, 2.0.0 adds symbols and grows a struct, 3.0.0 drops one. */
    private static String header(int major) {
        StringBuilder h = new StringBuilder("#include <stdint.h>\n");
        h.append("#define REL_VERSION \"").append(major).append(".0.0\"\n");
        h.append("#define REL_LIMIT ").append(major == 1 ? 5 : major == 2 ? 9 : 10).append('\n');
        h.append("#define REL_SAME 7\n");
        h.append("#define REL_TAG \"").append(major == 1 ? "one" : "two").append("\"\n");
        h.append(major >= 2 ? "enum rel_flags { REL_A = 1, REL_B = 2 };\n" : "enum rel_flags { REL_A = 1 };\n");
        h.append(major >= 2 ? "struct rel_params { int32_t a; int32_t b; int64_t c; };\n"
                : "struct rel_params { int32_t a; int32_t b; };\n");
        h.append("int rel_old(int x);\n");
        if (major >= 2) {
            h.append("struct rel_new { int32_t x; };\n");
            h.append("int rel_new_fn(int x);\n");
        }
        if (major <= 2) {
            h.append("int rel_dropped(int x);\n");
        }
        return h.toString();
    }

    @BeforeAll
    static void dumpGenerateAndCompile() throws IOException {
        records = work.resolve("args");
        for (int major = 1; major <= 3; major++) {
            Path dir = work.resolve("v" + major);
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("rel.h"), header(major));
            Main.run(List.of("--dump-release", records.toString(), "--release-version", "REL_VERSION",
                    "--header-filter", "rel.h", dir.resolve("rel.h").toString()));
        }
        // release 1.0.0 as a library: rel_new_fn is missing from it
        Path c = work.resolve("v1/rel.c");
        Files.writeString(c, "#include \"rel.h\"\nint rel_old(int x) { return x + 1; }\n"
                + "int rel_dropped(int x) { return x; }\n");
        Path library = work.resolve("v1/librel.so").toAbsolutePath();
        gcc("-shared", "-fPIC", "-o", library.toString(), c.toString());

        // the argument file names the records relative to itself; the generator runs from elsewhere
        Path args = records.resolve("rel.args");
        Files.writeString(args, """
                --release-version REL_VERSION
                --release-record rel-1.0.0.txt
                --release-record rel-2.0.0.txt
                --release-record rel-3.0.0.txt
                """);
        Path java = work.resolve("java");
        generated = Main.run(generatorArgs(args, library, java));
        Path again = work.resolve("java-again");
        Main.run(generatorArgs(args, library, again));
        Map<String, byte[]> first = SyntheticFixture.tree(java);
        Map<String, byte[]> second = SyntheticFixture.tree(again);
        assertEquals(first.keySet(), second.keySet());
        for (String file : first.keySet()) {
            assertTrue(Arrays.equals(first.get(file), second.get(file)), file + " differs between two runs");
        }
        Files.writeString(java.resolve("rel/RelHook.java"), HOOK);
        classes = work.resolve("classes");
        loaders.add(SyntheticFixture.compileAndLoad(java, classes));
    }

    private static List<String> generatorArgs(Path args, Path library, Path output) {
        return List.of("@" + args, "--output", output.toString(), "-t", "rel", "-l", library.toString(),
                "--library-hook", "rel.RelHook",
                "--include-function", "rel_old", "--include-function", "rel_new_fn",
                "--include-function", "rel_dropped",
                "--include-constant", "REL_LIMIT", "--include-constant", "REL_SAME", "--include-constant", "REL_TAG",
                "--include-constant", "REL_A", "--include-constant", "REL_B",
                "--include-struct", "rel_params", "--include-struct", "rel_new",
                work.resolve("v2/rel.h").toString());
    }

    @AfterAll
    static void closeLoaders() throws IOException {
        for (URLClassLoader loader : loaders) {
            loader.close();
        }
    }

    @Test
    void shouldDumpEachReleaseSurfaceWithValuesSizesAndOffsets() throws IOException {
        String v1 = Files.readString(records.resolve("rel-1.0.0.txt"));
        String v2 = Files.readString(records.resolve("rel-2.0.0.txt"));
        List<String> lines2 = v2.lines().toList();
        assertTrue(lines2.contains("release REL 2.0.0"), v2);
        for (String line : List.of("function rel_old", "function rel_new_fn", "function rel_dropped",
                "constant REL_LIMIT int 9", "constant REL_SAME int 7", "constant REL_TAG string \"two\"",
                "constant REL_B int 2", "constant REL_VERSION string \"2.0.0\"",
                "record rel_params struct 16 8", "field rel_params a 0 4", "field rel_params b 4 4",
                "field rel_params c 8 8", "record rel_new struct 4 4", "field rel_new x 0 4")) {
            assertTrue(lines2.contains(line), "missing \"" + line + "\" in\n" + v2);
        }
        List<String> lines1 = v1.lines().toList();
        assertTrue(lines1.contains("record rel_params struct 8 4"), v1);
        assertTrue(lines1.contains("constant REL_LIMIT int 5"), v1);
        assertFalse(v1.contains("rel_new"), v1);
        // only the filtered header: nothing of stdint.h
        assertFalse(v2.contains("INT32_MAX") || v2.contains("int32_t"), v2);
        // what it reads back, it writes again unchanged
        assertEquals(v2, Release.read(records.resolve("rel-2.0.0.txt")).text("rel.h"));
    }

    @Test
    void shouldNoteInJavadocWhatNotEveryRecordedReleaseHas() {
        String h = generated.get("rel_h.java");
        assertTrue(h.contains("generated from the headers of REL 2.0.0"), h);
        assertEquals("Since REL 2.0 at the latest (recorded releases: REL 2.0.0 and later have it, REL 1.0.0 lacks it).",
                noteAfter(h, "int rel_new_fn(int x)"));
        assertEquals("Since REL 2.0 at the latest (recorded releases: REL 2.0.0 and later have it, REL 1.0.0 lacks it).",
                noteAfter(h, "enum or #define REL_B = 2"));
        assertEquals("Not in every REL release (recorded releases: REL 1.0.0, 2.0.0 have it, REL 3.0.0 lacks it).",
                noteAfter(h, "int rel_dropped(int x)"));
        assertNull(noteAfter(h, "int rel_old(int x)"));
        assertNull(noteAfter(h, "enum or #define REL_A = 1"));
        assertTrue(generated.get("rel_new.java").contains("<p>Since REL 2.0 at the latest"), generated.get("rel_new.java"));
        assertFalse(generated.get("rel_params.java").contains("<p>"), generated.get("rel_params.java"));
        // a constant with one value everywhere stays a plain literal
        assertTrue(h.contains("private static final int REL_SAME = 7;"), h);
        assertTrue(h.contains("5 in REL 1.0.0, 9 in REL 2.0.0, 10 in REL 3.0.0"), h);
    }

    /** The paragraph that follows the snippet holding {@code c}, or null when the snippet ends the comment. */
    private static String noteAfter(String source, String c) {
        int at = source.lastIndexOf(" * " + c + "\n");
        assertTrue(at >= 0, "no snippet with " + c);
        int end = source.indexOf("*/", at);
        String rest = source.substring(source.indexOf(" * }\n", at) + 5, end).strip();
        if (rest.isEmpty()) {
            return null;
        }
        return String.join(" ", rest.lines().map(l -> l.strip().replaceFirst("^\\* ?", "")).toList())
                .replaceFirst("^<p>", "").strip();
    }

    @Test
    void shouldResolveAReleaseDependentConstantFromTheLoadedVersion() throws Exception {
        // the newest recorded release not newer than the loaded one; the oldest when the loaded one is older
        Map<String, Integer> expected = new java.util.LinkedHashMap<>();
        expected.put("0.9.0", 5);
        expected.put("1.0.0", 5);
        expected.put("1.5.3", 5);
        expected.put("2.0.0", 9);
        expected.put("2.7.1", 9);
        expected.put("3.0.0", 10);
        expected.put("4.1.0", 10);
        for (Map.Entry<String, Integer> e : expected.entrySet()) {
            Class<?> h = freshHeaderClass(e.getKey());
            assertEquals(e.getValue(), h.getMethod("REL_LIMIT").invoke(null), "REL_LIMIT on " + e.getKey());
            assertEquals(e.getKey().startsWith("0") || e.getKey().startsWith("1") ? "one" : "two",
                    h.getMethod("REL_TAG").invoke(null), "REL_TAG on " + e.getKey());
            assertEquals(7, h.getMethod("REL_SAME").invoke(null));
        }
    }

    @Test
    void shouldResolveOnceAndKeepTheValueInAStaticFinal() throws Exception {
        Class<?> h = freshHeaderClass("1.0.0");
        assertEquals(5, h.getMethod("REL_LIMIT").invoke(null));
        System.setProperty("rel.version", "3.0.0"); // too late: the first use resolved it
        assertEquals(5, h.getMethod("REL_LIMIT").invoke(null));
        Class<?> holder = Class.forName("rel.rel_h$REL_LIMIT$", false, h.getClassLoader());
        var field = holder.getDeclaredField("VALUE");
        assertTrue(java.lang.reflect.Modifier.isFinal(field.getModifiers())
                && java.lang.reflect.Modifier.isStatic(field.getModifiers()), field.toString());
    }

    @Test
    void shouldNameTheLoadedAndTheRecordedReleasesWhenAFunctionIsMissing() throws Exception {
        Class<?> h = freshHeaderClass("1.0.0");
        assertEquals(42, h.getMethod("rel_old", int.class).invoke(null, 41));
        InvocationTargetException e = assertThrows(InvocationTargetException.class,
                () -> h.getMethod("rel_new_fn", int.class).invoke(null, 1));
        UnsatisfiedLinkError error = assertInstanceOf(UnsatisfiedLinkError.class, e.getCause());
        assertEquals("rel_new_fn is not in the loaded REL 1.0.0 (REL 2.0.0 and later have it, REL 1.0.0 lacks it)",
                error.getMessage());
        Method address = h.getMethod("rel_new_fn$address");
        InvocationTargetException a = assertThrows(InvocationTargetException.class, () -> address.invoke(null));
        assertInstanceOf(UnsatisfiedLinkError.class, a.getCause());
        assertEquals(error.getMessage(), a.getCause().getMessage());
        // a symbol every recorded release has gets no note
        Class<?> shared = Class.forName("rel.rel_h$shared", true, h.getClassLoader());
        Method missing = shared.getDeclaredMethod("missing", String.class);
        missing.setAccessible(true);
        assertEquals("rel_old is not in the loaded REL 1.0.0",
                ((Throwable) missing.invoke(null, "rel_old")).getMessage());
    }

    private static Class<?> freshHeaderClass(String version) throws Exception {
        System.setProperty("rel.version", version);
        URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                ReleaseRecordTest.class.getClassLoader());
        loaders.add(loader);
        return Class.forName("rel.rel_h", true, loader);
    }

    private static void gcc(String... args) {
        List<String> command = new ArrayList<>(List.of("gcc", "-Wall", "-Werror"));
        command.addAll(List.of(args));
        ChildProcess p;
        try {
            p = ChildProcess.command(command).run(Duration.ofSeconds(60));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertEquals(0, p.exitCode(), p.output());
    }
}
