package io.github.ucxffm.bindings;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import io.github.ucxffm.bindings.support.UcxLibraryHook;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The C compiler is the judge of the generated layouts and constants: this test writes a C program that prints
 * {@code sizeof}, {@code _Alignof} and {@code offsetof} of every struct, union and field the bindings declare, the
 * size of every typedef layout, and the value of every constant, compiles it with gcc against the installed UCX
 * headers, and compares each number with the Java side. The list of what to check is taken from the compiled
 * bindings by reflection, so a struct or constant added later is covered without touching this test.
 * <p>
 * The bindings are generated from one UCX release and run on others, so the test is release-aware, led by the
 * committed record of the installed release ({@code src/headers/releases/ucx-VERSION.txt} of this module, which
 * RegenerationTest holds true to the headers):
 * <ul>
 *   <li>everything the installed headers declare is compared; a constant through its accessor, so a value that
 *   differs between releases is checked as resolved at run time from the loaded UCX;</li>
 *   <li>what the bindings declare and the installed release lacks is listed ("absent") and must agree with the
 *   bindings' own release data ({@code ucx_h$shared.releasesOf}), which the missing-symbol errors quote;</li>
 *   <li>a record whose layout differs from the installed release's is harmless when every field both have sits at
 *   the same offset with the same size and the fields only one has come after them ("grown": a struct that grew at
 *   its end, guarded by field-mask bits); any other difference must be a record of {@link #HANDLED}, whose users
 *   read it release-aware, or the test fails.</li>
 * </ul>
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AbiTest {

    /** Where this module keeps the inputs its bindings are generated from, relative to the repository root. */
    static final String HEADERS = "ucx-ffm-bindings/src/headers";

    /**
     * Records whose layout differs between UCX releases other than by growing at the end, each read only by code
     * that knows the release. Anything else that differs fails the test.
     */
    static final Set<String> HANDLED = Set.of(
            // UCX 1.13's callback queue: 24-byte elements (cb, arg, flags, id) and a 72-byte private part inline;
            // 1.14 and later: 16-byte elements (cb, arg) and a pointer. UctInline.uct_worker_progress reads the
            // fast elements with the stride and offsets of the loaded release.
            "ucs_callbackq",
            "ucs_callbackq_elem",
            // Embeds a ucs_callbackq by value as its only field, progress_q, at offset 0 in every release; read only
            // by UctInline.uct_worker_progress, through that offset.
            "uct_worker");

    private static final Set<String> JAVA_RESERVED = Set.of("abstract", "assert", "boolean", "break", "byte",
            "case", "catch", "char", "class", "const", "continue", "default", "do", "double", "else", "enum",
            "extends", "final", "finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",
            "interface", "long", "native", "new", "package", "private", "protected", "public", "return", "short",
            "static", "strictfp", "super", "switch", "synchronized", "this", "throw", "throws", "transient", "try",
            "void", "volatile", "while", "true", "false", "null", "_", "yield", "record", "var");

    /** A record class of the bindings: its C spelling, layout and fields (C name to offset and size, -1: no size). */
    private record Rec(Class<?> cls, String top, String cType, long size, long align, Map<String, long[]> fields) {
    }

    /** The committed record of one UCX release, as far as this test needs it. */
    private record Surface(String version, Set<String> functions, Map<String, String> constants,
                           Map<String, long[]> records, Map<String, Map<String, long[]>> fields, Set<String> typedefs,
                           Set<String> variables) {
        boolean has(String name) {
            return functions.contains(name) || constants.containsKey(name) || records.containsKey(name)
                    || typedefs.contains(name) || variables.contains(name);
        }
    }

    private static final List<Rec> recs = new ArrayList<>();
    /** Constants by name: "i 5", "l 7", "d 2.5", "s text". */
    private static final Map<String, String> constants = new TreeMap<>();
    /** Typedef layouts by name: size and alignment. */
    private static final Map<String, long[]> typedefs = new TreeMap<>();
    private static final Set<String> functions = new TreeSet<>();
    private static final Set<String> variables = new TreeSet<>();
    private static Surface installed;
    /** Names ucx.args includes from outside the UCX headers (libc records UCX embeds): no release record has them. */
    private static final Set<String> outside = new TreeSet<>();

    @TempDir
    static Path tmp;

    @BeforeAll
    static void collect() throws Exception {
        List<Class<?>> classes = generatedClasses();
        Map<String, String> cTypes = cTypesOfTopLevelRecords(classes);
        for (Class<?> c : classes) {
            if (!declaresLayout(c)) {
                continue;
            }
            GroupLayout layout = (GroupLayout) c.getMethod("layout").invoke(null);
            Map<String, Long> layoutOffsets = new HashMap<>();
            leafOffsets(layout, 0, layoutOffsets);
            Map<String, long[]> fields = new TreeMap<>();
            for (Method m : c.getDeclaredMethods()) {
                if (!m.getName().endsWith("$offset") || m.getParameterCount() != 0) {
                    continue;
                }
                String javaField = m.getName().substring(0, m.getName().length() - "$offset".length());
                String cField = javaField.endsWith("_") && JAVA_RESERVED.contains(javaField.substring(0,
                        javaField.length() - 1)) ? javaField.substring(0, javaField.length() - 1) : javaField;
                long offset = (long) m.invoke(null);
                // The accessor's offset and the layout's own must agree before C is asked.
                assertEquals(layoutOffsets.get(cField), offset, c.getName() + "." + javaField
                        + ": $offset() disagrees with layout()");
                MemoryLayout fieldLayout = (MemoryLayout) c.getMethod(javaField + "$layout").invoke(null);
                boolean flexible = fieldLayout instanceof SequenceLayout s && s.elementCount() == 0;
                fields.put(cField, new long[] {offset, flexible ? -1 : fieldLayout.byteSize()});
            }
            Class<?> top = c;
            while (top.getEnclosingClass() != null) {
                top = top.getEnclosingClass();
            }
            recs.add(new Rec(c, top.getSimpleName(), cTypeOf(c, cTypes), layout.byteSize(), layout.byteAlignment(),
                    fields));
        }
        for (Class<?> header = ucx_h.class; header != Object.class; header = header.getSuperclass()) {
            collectHeaderMembers(header);
        }
        installed = readSurface(UcxLibraryHook.versionString());
        for (String line : Files.readAllLines(headers().resolve("ucx.args"))) {
            if (line.startsWith("--include-")) {
                outside.add(line.split("\\s+")[1]);
            }
        }
    }

    private static void collectHeaderMembers(Class<?> header) throws Exception {
        Set<String> methodNames = new HashSet<>();
        for (Method m : header.getDeclaredMethods()) {
            methodNames.add(m.getName());
        }
        for (Method m : header.getDeclaredMethods()) {
            String n = m.getName();
            if (n.endsWith("$handle")) {
                functions.add(n.substring(0, n.length() - "$handle".length()));
            } else if (n.endsWith("$segment")) {
                variables.add(n.substring(0, n.length() - "$segment".length()));
            }
            if (!Modifier.isPublic(m.getModifiers()) || m.getParameterCount() != 0 || n.contains("$")
                    || methodNames.contains(n + "$handle") || methodNames.contains(n + "$segment")) {
                continue; // a function or a variable, not a constant
            }
            // The accessor, so that a constant whose value differs between releases is resolved as users see it.
            Object value = m.invoke(null);
            switch (value) {
                case Integer i -> constants.put(n, "i " + i);
                case Long l -> constants.put(n, "l " + l);
                case Double d -> constants.put(n, "d " + d);
                case Float f -> constants.put(n, "d " + (double) f);
                case String s -> constants.put(n, "s " + s);
                case MemorySegment p -> constants.put(n, "l " + p.address());
                default -> throw new AssertionError("unexpected constant type " + value.getClass() + " of " + n);
            }
        }
        for (Class<?> inner : header.getDeclaredClasses()) {
            if (Modifier.isPublic(inner.getModifiers()) && hasMethod(inner, "makeInvoker")) {
                functions.add(inner.getSimpleName()); // a variadic function
            }
        }
        for (Field f : header.getDeclaredFields()) {
            if (Modifier.isPublic(f.getModifiers()) && Modifier.isStatic(f.getModifiers())
                    && MemoryLayout.class.isAssignableFrom(f.getType()) && !f.getName().startsWith("C_")) {
                MemoryLayout l = (MemoryLayout) f.get(null);
                typedefs.put(f.getName(), new long[] {l.byteSize(), l.byteAlignment()});
            }
        }
    }

    private static boolean hasMethod(Class<?> c, String name) {
        for (Method m : c.getDeclaredMethods()) {
            if (m.getName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    private static Surface readSurface(String version) throws IOException {
        Path file = headers().resolve("releases/ucx-" + version + ".txt");
        assertTrue(Files.isRegularFile(file), "no record of the loaded UCX " + version + " (" + file
                + "): run ./ucx-ffm regen --dump on it");
        Surface s = new Surface(version, new TreeSet<>(), new TreeMap<>(), new TreeMap<>(), new TreeMap<>(),
                new TreeSet<>(), new TreeSet<>());
        for (String line : Files.readAllLines(file)) {
            String[] w = line.split(" ");
            switch (w[0]) {
                case "release" -> assertEquals(version, w[2], file + " records another release");
                case "function" -> s.functions.add(w[1]);
                case "constant" -> s.constants.put(w[1], w[2]);
                case "record" -> {
                    s.records.put(w[1], new long[] {Long.parseLong(w[3]), Long.parseLong(w[4])});
                    s.fields.put(w[1], new LinkedHashMap<>());
                }
                case "field" -> s.fields.get(w[1]).put(w[2], new long[] {Long.parseLong(w[3]), Long.parseLong(w[4])});
                case "typedef" -> s.typedefs.add(w[1]);
                case "var" -> s.variables.add(w[1]);
                default -> {
                }
            }
        }
        return s;
    }

    /** Offsets of every named leaf-or-group member, reaching through anonymous members as C does. */
    private static void leafOffsets(GroupLayout group, long base, Map<String, Long> out) {
        long offset = 0;
        for (MemoryLayout member : group.memberLayouts()) {
            long at = base + (group instanceof StructLayout ? offset : 0);
            String name = member.name().orElse("");
            if (name.startsWith("$anon$") && member instanceof GroupLayout g) {
                leafOffsets(g, at, out);
            } else if (!(member instanceof PaddingLayout)) {
                out.put(name, at);
            }
            offset += member.byteSize();
        }
    }

    private static boolean declaresLayout(Class<?> c) {
        try {
            Method m = c.getDeclaredMethod("layout");
            return Modifier.isStatic(m.getModifiers()) && GroupLayout.class.isAssignableFrom(m.getReturnType());
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    private static String cTypeOf(Class<?> c, Map<String, String> topLevel) {
        if (c.getEnclosingClass() == null) {
            return topLevel.get(c.getSimpleName());
        }
        // A nested class is the anonymous type of a field of its enclosing record.
        return "__typeof__(((" + cTypeOf(c.getEnclosingClass(), topLevel) + " *)0)->" + c.getSimpleName() + ")";
    }

    /**
     * A top-level record class is named after its tag ({@code struct T}) or after the typedef of an anonymous
     * record ({@code T}); gcc tells which: {@code sizeof(struct T)} fails to compile for the latter.
     */
    private static Map<String, String> cTypesOfTopLevelRecords(List<Class<?>> classes) throws Exception {
        List<String> names = new ArrayList<>();
        List<String> keywords = new ArrayList<>();
        for (Class<?> c : classes) {
            if (c.getEnclosingClass() == null && declaresLayout(c)) {
                GroupLayout l = (GroupLayout) c.getMethod("layout").invoke(null);
                names.add(c.getSimpleName());
                keywords.add(l instanceof StructLayout ? "struct" : "union");
            }
        }
        StringBuilder probe = new StringBuilder(includes());
        int firstLine = (int) probe.chars().filter(ch -> ch == '\n').count() + 1;
        for (int i = 0; i < names.size(); i++) {
            probe.append("unsigned long probe_").append(i).append(" = sizeof(").append(keywords.get(i)).append(' ')
                    .append(names.get(i)).append(");\n");
        }
        Path src = Files.createTempFile("abi-probe", ".c");
        Path obj = Files.createTempFile("abi-probe", ".o");
        try {
            Files.writeString(src, probe);
            Result r = run(List.of("gcc", "-fmax-errors=0", "-c", "-o", obj.toString(), src.toString()));
            Set<Integer> failed = new java.util.HashSet<>();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                    java.util.regex.Pattern.quote(src.getFileName().toString()) + ":(\\d+):\\d+: error").matcher(r.output);
            while (m.find()) {
                failed.add(Integer.parseInt(m.group(1)));
            }
            Map<String, String> result = new HashMap<>();
            for (int i = 0; i < names.size(); i++) {
                result.put(names.get(i), failed.contains(firstLine + i) ? names.get(i)
                        : keywords.get(i) + " " + names.get(i));
            }
            return result;
        } finally {
            Files.deleteIfExists(src);
            Files.deleteIfExists(obj);
        }
    }

    private static String includes() {
        Path wrapper = headers().resolve("ucx.h");
        return "#include <stddef.h>\n#include <stdio.h>\n#include <stdint.h>\n#include \"" + wrapper + "\"\n";
    }

    /** The bindings' inputs: the wrapper header, the argument files and the release records. */
    private static Path headers() {
        return repoRoot().resolve(HEADERS);
    }

    static Path repoRoot() {
        String root = System.getProperty("ucxffm.repo.root");
        Path p = root != null ? Path.of(root).toAbsolutePath() : Path.of("").toAbsolutePath();
        while (p.getParent() != null && !Files.isRegularFile(p.resolve(HEADERS).resolve("ucx.h"))) {
            p = p.getParent();
        }
        assertTrue(Files.isRegularFile(p.resolve(HEADERS).resolve("ucx.h")), "repository root not found at " + p);
        return p;
    }

    private static List<Class<?>> generatedClasses() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(ucx_h.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path pkg = root.resolve("io/github/ucxffm/bindings");
        List<Class<?>> classes = new ArrayList<>();
        try (Stream<Path> files = Files.list(pkg)) {
            for (Path f : files.sorted().toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".class")) {
                    classes.add(Class.forName("io.github.ucxffm.bindings." + name.substring(0, name.length() - 6), false,
                            AbiTest.class.getClassLoader())); // a variable absent from this release fails to initialise
                }
            }
        }
        return classes;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command) throws IOException {
        ChildProcess p = ChildProcess.command(command).echo(false).run(Duration.ofSeconds(60));
        return new Result(p.exitCode(), p.output());
    }

    private static String cString(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }


    /** The installed headers' C for the lines the program prints; what the installed release lacks is left out. */
    private static Map<String, String> cChecks(Map<String, Rec> present) {
        Map<String, String> checks = new LinkedHashMap<>();
        for (Rec r : present.values()) {
            checks.put("size " + r.cType, "sizeof(" + r.cType + ")");
            checks.put("align " + r.cType, "_Alignof(" + r.cType + ")");
            for (String field : r.fields.keySet()) {
                if (r.cls.getEnclosingClass() == null && !outside.contains(r.top)
                        && !installed.fields.get(r.top).containsKey(field)) {
                    continue;
                }
                checks.put("offset " + r.cType + " " + field, "offsetof(" + r.cType + ", " + field + ")");
                checks.put("fsize " + r.cType + " " + field, "sizeof(((" + r.cType + " *)0)->" + field + ")");
            }
        }
        for (String t : typedefs.keySet()) {
            if (installed.typedefs.contains(t)) {
                checks.put("size " + t, "sizeof(" + t + ")");
                checks.put("align " + t, "_Alignof(" + t + ")");
            }
        }
        for (String n : constants.keySet()) {
            if (installed.constants.containsKey(n)) {
                checks.put("const " + n, n);
            }
        }
        return checks;
    }

    private static String printf(String key, String expr, String javaValue) {
        String k = cString(key);
        if (!key.startsWith("const ")) {
            return "    printf(\"%s=%zu\\n\", " + k + ", (size_t)(" + expr + "));\n";
        }
        String kind = javaValue.substring(0, 1);
        return switch (kind) {
            case "i", "l" -> "    printf(\"%s=%s %lld %llu\\n\", " + k + ", " + cString(kind) + ", (long long)(" + expr
                    + "), (unsigned long long)(" + expr + "));\n";
            case "d" -> "    printf(\"%s=d %.17g\\n\", " + k + ", (double)(" + expr + "));\n";
            case "s" -> "    printf(\"%s=s %s\\n\", " + k + ", " + expr + ");\n";
            default -> throw new AssertionError(kind);
        };
    }

    /**
     * Compiles and runs the program; a line gcc rejects (a field of a nested anonymous record that this release's
     * headers lack) is reported in {@code rejected} and left out.
     */
    private static Map<String, String> runInC(Map<String, String> checks, Map<String, String> javaValues,
                                              Set<String> rejected) throws Exception {
        Map<String, String> todo = new LinkedHashMap<>(checks);
        for (int round = 0; round < 3; round++) {
            StringBuilder c = new StringBuilder(includes());
            c.append("int main(void) {\n");
            int firstLine = (int) c.chars().filter(ch -> ch == '\n').count() + 1;
            List<String> keys = new ArrayList<>(todo.keySet());
            for (String key : keys) {
                c.append(printf(key, todo.get(key), javaValues.get(key)));
            }
            c.append("    return 0;\n}\n");
            Path src = tmp.resolve("abi.c");
            Path exe = tmp.resolve("abi");
            Files.writeString(src, c);
            Result compiled = run(List.of("gcc", "-std=gnu11", "-fmax-errors=0", "-Wno-int-conversion", "-o",
                    exe.toString(), src.toString()));
            if (compiled.exit != 0) {
                Matcher m = Pattern.compile("abi\\.c:(\\d+):\\d+: error").matcher(compiled.output);
                Set<String> bad = new TreeSet<>();
                while (m.find()) {
                    int index = Integer.parseInt(m.group(1)) - firstLine;
                    assertTrue(index >= 0 && index < keys.size(), "gcc failed:\n" + compiled.output);
                    bad.add(keys.get(index));
                }
                assertTrue(!bad.isEmpty(), "gcc failed:\n" + compiled.output);
                rejected.addAll(bad);
                bad.forEach(todo::remove);
                continue;
            }
            Result ran = run(List.of(exe.toString()));
            assertEquals(0, ran.exit, ran.output);
            Map<String, String> actual = new TreeMap<>();
            for (String line : ran.output.split("\n")) {
                int eq = line.indexOf('=');
                actual.put(line.substring(0, eq), line.substring(eq + 1));
            }
            return actual;
        }
        throw new AssertionError("gcc keeps rejecting the program");
    }

    @Test
    void shouldMatchGccForEverythingTheInstalledReleaseDeclaresAndListWhatDiffers() throws Exception {
        String release = installed.version;
        // The records of the bindings that the installed release declares (nested ones: through their field).
        Map<String, Rec> present = new LinkedHashMap<>();
        List<String> absent = new ArrayList<>();
        for (Rec r : recs) {
            if (outside.contains(r.top)) {
                present.put(r.cType, r);
                continue;
            }
            if (!installed.records.containsKey(r.top)) {
                if (r.cls.getEnclosingClass() == null) {
                    absent.add("record " + r.top);
                }
                continue;
            }
            if (r.cls.getEnclosingClass() != null && !outside.contains(r.top)
                    && !installed.fields.get(r.top).containsKey(firstField(r.cls))) {
                continue;
            }
            present.put(r.cType, r);
        }
        functions.stream().filter(f -> !installed.functions.contains(f)).forEach(f -> absent.add("function " + f));
        constants.keySet().stream().filter(n -> !installed.constants.containsKey(n))
                .forEach(n -> absent.add("constant " + n));
        typedefs.keySet().stream().filter(n -> !installed.typedefs.contains(n)).forEach(n -> absent.add("typedef " + n));
        variables.stream().filter(n -> !installed.variables.contains(n)).forEach(n -> absent.add("var " + n));

        Map<String, String> checks = cChecks(present);
        Map<String, String> javaValues = new HashMap<>();
        for (Rec r : present.values()) {
            javaValues.put("size " + r.cType, Long.toString(r.size));
            javaValues.put("align " + r.cType, Long.toString(r.align));
            r.fields.forEach((f, v) -> {
                javaValues.put("offset " + r.cType + " " + f, Long.toString(v[0]));
                javaValues.put("fsize " + r.cType + " " + f, Long.toString(v[1]));
            });
        }
        typedefs.forEach((t, v) -> {
            javaValues.put("size " + t, Long.toString(v[0]));
            javaValues.put("align " + t, Long.toString(v[1]));
        });
        constants.forEach((n, v) -> javaValues.put("const " + n, v));
        Set<String> rejected = new TreeSet<>();
        Map<String, String> c = runInC(checks, javaValues, rejected);

        List<String> mismatches = new ArrayList<>();
        Set<String> differing = new TreeSet<>(); // records (by C type) whose layout differs
        int compared = 0;
        for (String key : checks.keySet()) {
            if (rejected.contains(key)) {
                Rec owner = ownerOf(key, present);
                assertTrue(owner != null && owner.cls.getEnclosingClass() != null,
                        "gcc rejects " + key + " although the record of UCX " + release + " declares it");
                differing.add(owner.cType);
                continue;
            }
            compared++;
            String java = javaValues.get(key);
            String cValue = c.get(key);
            boolean same = key.startsWith("const ") ? cValue != null && agrees(java, cValue)
                    : java.equals(cValue) || (key.startsWith("fsize ") && java.equals("-1"));
            if (same) {
                continue;
            }
            Rec owner = key.startsWith("const ") || cValue == null ? null : ownerOf(key, present);
            if (owner != null) {
                differing.add(owner.cType);
            } else {
                mismatches.add(key + ": Java " + java + ", C " + cValue);
            }
        }
        // fields the installed release has and the bindings lack make a record differ too
        for (Rec r : present.values()) {
            if (r.cls.getEnclosingClass() == null && !outside.contains(r.top)
                    && !r.fields.keySet().equals(installed.fields.get(r.top).keySet())) {
                differing.add(r.cType);
            }
        }
        List<String> grown = new ArrayList<>();
        List<String> handled = new ArrayList<>();
        for (String cType : differing) {
            Rec r = present.get(cType);
            String detail = describeDifference(r, c, rejected);
            if (HANDLED.contains(r.top)) {
                handled.add(detail);
            } else if (grewAtItsEnd(r, c, rejected)) {
                grown.add(detail);
            } else {
                mismatches.add("layout of " + detail + " differs other than by growing at its end, and "
                        + r.top + " is not in AbiTest.HANDLED");
            }
        }
        // what the bindings have and this release lacks: the bindings' release data must say so too
        List<String> inconsistent = new ArrayList<>();
        List<String> exportedAnyway = new ArrayList<>();
        for (String a : absent) {
            String name = a.substring(a.indexOf(' ') + 1);
            List<String> has = ucx_h$shared.releasesOf(name);
            if (has == null || has.contains(release)) {
                inconsistent.add(a + ": the bindings' release data say " + (has == null ? "every recorded release"
                        : has) + " declares it");
            }
            if (a.startsWith("function ") && ucx_h$shared.findOrNull(name) != null) {
                exportedAnyway.add(name); // an internal symbol of that release that a later one made public
            }
        }
        for (String name : allNames()) {
            List<String> has = ucx_h$shared.releasesOf(name);
            if (has != null && !has.contains(release) && installed.has(name)) {
                inconsistent.add(name + ": UCX " + release + " declares it, the bindings' release data say only "
                        + has);
            }
        }
        List<String> notExported = functions.stream().filter(installed.functions::contains)
                .filter(f -> ucx_h$shared.findOrNull(f) == null).toList();

        long constantsChecked = checks.keySet().stream().filter(k -> k.startsWith("const ")).count();
        long fieldsChecked = checks.keySet().stream().filter(k -> k.startsWith("offset ")).count();
        System.out.printf("ABI on UCX %s: %d records (%d nested), %d fields, %d constants present; %d values "
                + "compared with gcc, %d mismatches%n", release, present.size(),
                present.values().stream().filter(r -> r.cls.getEnclosingClass() != null).count(), fieldsChecked,
                constantsChecked, compared, mismatches.size());
        print("grown (harmless: grew at the end)", grown);
        print("handled (differ; read release-aware, see AbiTest.HANDLED)", handled);
        print("absent (in the bindings, not in UCX " + release + ")", absent);
        print("declared by UCX " + release + " but not exported by its libraries", notExported);
        print("absent from the headers of UCX " + release + " but exported by its libraries", exportedAnyway);

        assertEquals(List.of(), mismatches, mismatches.size() + " mismatches between Java and gcc");
        assertEquals(List.of(), inconsistent, "absent symbols disagree with the bindings' release data");
        // The whole surface, not a sample.
        assertTrue(present.size() >= 80, "records checked: " + present.size());
        assertTrue(constantsChecked >= 450, "constants checked: " + constantsChecked);
        assertTrue(fieldsChecked >= 400, "fields checked: " + fieldsChecked);
    }

    private static void print(String title, List<String> items) {
        System.out.println(title + ": " + items.size());
        items.forEach(i -> System.out.println("  " + i));
    }

    private static Set<String> allNames() {
        Set<String> names = new TreeSet<>(functions);
        names.addAll(constants.keySet());
        names.addAll(typedefs.keySet());
        names.addAll(variables);
        recs.stream().filter(r -> r.cls.getEnclosingClass() == null).forEach(r -> names.add(r.top));
        return names;
    }

    /** The C name of the top-level record's field whose anonymous type a nested class is (or is inside of). */
    private static String firstField(Class<?> nested) {
        Class<?> c = nested;
        while (c.getEnclosingClass().getEnclosingClass() != null) {
            c = c.getEnclosingClass();
        }
        return c.getSimpleName();
    }

    private static Rec ownerOf(String key, Map<String, Rec> present) {
        String rest = key.substring(key.indexOf(' ') + 1);
        if (key.startsWith("size ") || key.startsWith("align ")) {
            return present.get(rest);
        }
        return present.get(rest.substring(0, rest.lastIndexOf(' ')));
    }

    /** The installed release's fields of a record: name to offset and size. */
    private static Map<String, long[]> cFields(Rec r, Map<String, String> c, Set<String> rejected) {
        if (r.cls.getEnclosingClass() == null && !outside.contains(r.top)) {
            return installed.fields.get(r.top);
        }
        Map<String, long[]> out = new TreeMap<>();
        for (String f : r.fields.keySet()) {
            String key = "offset " + r.cType + " " + f;
            if (!rejected.contains(key) && c.containsKey(key)) {
                out.put(f, new long[] {Long.parseLong(c.get(key)), Long.parseLong(c.get("fsize " + r.cType + " " + f))});
            }
        }
        return out;
    }

    /** Every field both have agrees, and the fields only one of them has all come after those. */
    private static boolean grewAtItsEnd(Rec r, Map<String, String> c, Set<String> rejected) {
        Map<String, long[]> inC = cFields(r, c, rejected);
        long commonEnd = 0;
        for (Map.Entry<String, long[]> f : r.fields.entrySet()) {
            long[] other = inC.get(f.getKey());
            if (other == null) {
                continue;
            }
            long[] mine = f.getValue();
            if (mine[0] != other[0] || (mine[1] != other[1] && mine[1] != -1)) {
                return false;
            }
            commonEnd = Math.max(commonEnd, mine[0] + Math.max(0, mine[1]));
        }
        for (Map.Entry<String, long[]> f : r.fields.entrySet()) {
            if (!inC.containsKey(f.getKey()) && f.getValue()[0] < commonEnd) {
                return false;
            }
        }
        for (Map.Entry<String, long[]> f : inC.entrySet()) {
            if (!r.fields.containsKey(f.getKey()) && f.getValue()[0] < commonEnd) {
                return false;
            }
        }
        return true;
    }

    private static String describeDifference(Rec r, Map<String, String> c, Set<String> rejected) {
        Map<String, long[]> inC = cFields(r, c, rejected);
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, long[]> f : r.fields.entrySet()) {
            long[] other = inC.get(f.getKey());
            long[] mine = f.getValue();
            if (other == null) {
                parts.add("-" + f.getKey() + "@" + mine[0]);
            } else if (mine[0] != other[0] || (mine[1] != other[1] && mine[1] != -1)) {
                parts.add(f.getKey() + " " + mine[0] + "+" + mine[1] + " -> " + other[0] + "+" + other[1]);
            }
        }
        for (Map.Entry<String, long[]> f : inC.entrySet()) {
            if (!r.fields.containsKey(f.getKey())) {
                parts.add("+" + f.getKey() + "@" + f.getValue()[0]);
            }
        }
        return r.cType + ": size " + r.size + " in the bindings, " + c.getOrDefault("size " + r.cType, "?")
                + " in UCX " + installed.version + (parts.isEmpty() ? "" : " (" + String.join(", ", parts) + ")");
    }

    /** A Java int constant must equal the C value read as a 32-bit integer, signed or unsigned, with no loss. */
    private static boolean agrees(String java, String c) {
        if (java.startsWith("i ") || java.startsWith("l ")) {
            String[] cs = c.split(" ");
            long signed = Long.parseLong(cs[1]);
            long unsigned = Long.parseUnsignedLong(cs[2]);
            long j = Long.parseLong(java.substring(2));
            if (java.startsWith("l ")) {
                return j == signed;
            }
            boolean fitsInt = signed >= Integer.MIN_VALUE && signed <= Integer.MAX_VALUE;
            boolean fitsUnsigned = unsigned >= 0 && unsigned <= 0xFFFF_FFFFL;
            return (fitsInt || fitsUnsigned) && (int) signed == (int) j;
        }
        if (java.startsWith("d ")) {
            return c.startsWith("d ") && Double.parseDouble(c.substring(2)) == Double.parseDouble(java.substring(2));
        }
        return java.equals(c);
    }

    @Test
    void shouldResolveReleaseDependentConstantsFromTheLoadedUcx() {
        // the loaded UCX is the installed one, and constants follow it
        assertEquals(installed.version, UcxLibraryHook.versionString());
        int minor = UcxLibraryHook.version() >> 8 & 0xff;
        assertEquals(minor, ucx_h.UCP_API_MINOR());
        assertEquals(minor, ucx_h.UCT_VERNO_MINOR());
        assertEquals(installed.version, ucx_h.UCT_VERNO_STRING());
        assertNotNull(ucx_h$shared.releasesOf("ucp_memh_pack"));
        assertNull(ucx_h$shared.releasesOf("ucp_init_version"));
    }

    @Test
    void shouldMapUcsStatusToOneSignedByte() {
        assertEquals(1, ucx_h.ucs_status_t.byteSize());
        assertEquals(byte.class, ucx_h.ucs_status_t.carrier());
        assertEquals(1, ucp_request_attr_t.status$layout().byteSize());
        assertEquals(24, ucp_request_attr_t.status$offset());
        assertEquals(byte.class,
                ((ValueLayout) ucx_h.ucp_worker_create$descriptor().returnLayout().orElseThrow()).carrier());
        assertEquals(12, uct_completion.status$offset());
        assertEquals(byte.class, uct_completion.status$layout().carrier());
    }
}
