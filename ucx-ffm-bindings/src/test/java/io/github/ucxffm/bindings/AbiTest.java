package io.github.ucxffm.bindings;

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
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The C compiler is the judge of the generated layouts and constants: this test writes a C program that prints
 * {@code sizeof}, {@code _Alignof} and {@code offsetof} of every struct, union and field the bindings declare, the
 * size of every typedef layout, and the value of every constant, compiles it with gcc against the installed UCX
 * headers, and compares each number with the Java side. The list of what to check is taken from the compiled
 * bindings by reflection, so a struct or constant added later is covered without touching this test.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AbiTest {

    private static final Set<String> JAVA_RESERVED = Set.of("abstract", "assert", "boolean", "break", "byte",
            "case", "catch", "char", "class", "const", "continue", "default", "do", "double", "else", "enum",
            "extends", "final", "finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",
            "interface", "long", "native", "new", "package", "private", "protected", "public", "return", "short",
            "static", "strictfp", "super", "switch", "synchronized", "this", "throw", "throws", "transient", "try",
            "void", "volatile", "while", "true", "false", "null", "_", "yield", "record", "var");

    /** What Java says, keyed like the lines the C program prints. */
    private static final Map<String, String> expected = new LinkedHashMap<>();
    private static final List<String> records = new ArrayList<>();
    private static int fieldCount;
    private static int constantCount;
    private static int typedefCount;

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
            String cType = cTypeOf(c, cTypes);
            GroupLayout layout = (GroupLayout) c.getMethod("layout").invoke(null);
            records.add(c.getName());
            expected.put("size " + cType, Long.toString(layout.byteSize()));
            expected.put("align " + cType, Long.toString(layout.byteAlignment()));
            Map<String, Long> layoutOffsets = new HashMap<>();
            leafOffsets(layout, 0, layoutOffsets);
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
                expected.put("offset " + cType + " " + cField, Long.toString(offset));
                if (!(fieldLayout instanceof SequenceLayout s && s.elementCount() == 0)) {
                    expected.put("fsize " + cType + " " + cField, Long.toString(fieldLayout.byteSize()));
                }
                fieldCount++;
            }
        }
        for (Class<?> header = ucx_h.class; header != Object.class; header = header.getSuperclass()) {
            collectHeaderMembers(header);
        }
    }

    private static void collectHeaderMembers(Class<?> header) throws Exception {
        Set<String> methodNames = new java.util.HashSet<>();
        for (Method m : header.getDeclaredMethods()) {
            methodNames.add(m.getName());
        }
        for (Method m : header.getDeclaredMethods()) {
            String n = m.getName();
            if (!Modifier.isPublic(m.getModifiers()) || m.getParameterCount() != 0 || n.contains("$")
                    || methodNames.contains(n + "$handle") || methodNames.contains(n + "$segment")) {
                continue; // a function or a variable, not a constant
            }
            Object value = m.invoke(null);
            String key = "const " + n;
            switch (value) {
                case Integer i -> expected.put(key, "i " + i);
                case Long l -> expected.put(key, "l " + l);
                case Double d -> expected.put(key, "d " + d);
                case Float f -> expected.put(key, "d " + (double) f);
                case String s -> expected.put(key, "s " + s);
                case MemorySegment p -> expected.put(key, "l " + p.address());
                default -> throw new AssertionError("unexpected constant type " + value.getClass() + " of " + n);
            }
            constantCount++;
        }
        for (Field f : header.getDeclaredFields()) {
            if (Modifier.isPublic(f.getModifiers()) && Modifier.isStatic(f.getModifiers())
                    && MemoryLayout.class.isAssignableFrom(f.getType()) && !f.getName().startsWith("C_")) {
                MemoryLayout l = (MemoryLayout) f.get(null);
                expected.put("size " + f.getName(), Long.toString(l.byteSize()));
                expected.put("align " + f.getName(), Long.toString(l.byteAlignment()));
                typedefCount++;
            }
        }
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
        Path wrapper = repoRoot().resolve("native-headers/ucx.h");
        return "#include <stddef.h>\n#include <stdio.h>\n#include <stdint.h>\n#include \"" + wrapper + "\"\n";
    }

    static Path repoRoot() {
        String root = System.getProperty("ucxffm.repo.root");
        Path p = root != null ? Path.of(root).toAbsolutePath() : Path.of("").toAbsolutePath();
        while (p.getParent() != null && !Files.isRegularFile(p.resolve("native-headers/ucx.h"))) {
            p = p.getParent();
        }
        assertTrue(Files.isRegularFile(p.resolve("native-headers/ucx.h")), "repository root not found at " + p);
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
                    classes.add(Class.forName("io.github.ucxffm.bindings." + name.substring(0, name.length() - 6)));
                }
            }
        }
        return classes;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        return new Result(p.exitValue(), out);
    }

    private static String cString(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    @Test
    void shouldMatchGccForEveryStructFieldTypedefAndConstant() throws Exception {
        StringBuilder c = new StringBuilder(includes());
        c.append("int main(void) {\n");
        for (String key : expected.keySet()) {
            String[] parts = key.split(" ", 2);
            String what = parts[0];
            String rest = parts[1];
            String k = cString(key);
            switch (what) {
                case "size" -> c.append("    printf(\"%s=%zu\\n\", ").append(k).append(", sizeof(").append(rest)
                        .append("));\n");
                case "align" -> c.append("    printf(\"%s=%zu\\n\", ").append(k).append(", _Alignof(").append(rest)
                        .append("));\n");
                case "offset", "fsize" -> {
                    int space = rest.lastIndexOf(' ');
                    String type = rest.substring(0, space);
                    String field = rest.substring(space + 1);
                    String expr = what.equals("offset") ? "offsetof(" + type + ", " + field + ")"
                            : "sizeof(((" + type + " *)0)->" + field + ")";
                    c.append("    printf(\"%s=%zu\\n\", ").append(k).append(", ").append(expr).append(");\n");
                }
                case "const" -> {
                    String kind = expected.get(key).substring(0, 1);
                    switch (kind) {
                        case "i", "l" -> c.append("    printf(\"%s=%s %lld %llu\\n\", ").append(k).append(", ")
                                .append(cString(kind)).append(", (long long)(").append(rest)
                                .append("), (unsigned long long)(").append(rest).append("));\n");
                        case "d" -> c.append("    printf(\"%s=d %.17g\\n\", ").append(k).append(", (double)(")
                                .append(rest).append("));\n");
                        case "s" -> c.append("    printf(\"%s=s %s\\n\", ").append(k).append(", ").append(rest)
                                .append(");\n");
                        default -> throw new AssertionError(kind);
                    }
                }
                default -> throw new AssertionError(what);
            }
        }
        c.append("    return 0;\n}\n");
        Path src = tmp.resolve("abi.c");
        Path exe = tmp.resolve("abi");
        Files.writeString(src, c);
        Result compiled = run(List.of("gcc", "-std=gnu11", "-Wno-int-conversion", "-o", exe.toString(),
                src.toString()));
        assertEquals(0, compiled.exit, "gcc failed:\n" + compiled.output);
        Result ran = run(List.of(exe.toString()));
        assertEquals(0, ran.exit, ran.output);

        Map<String, String> actual = new TreeMap<>();
        for (String line : ran.output.split("\n")) {
            int eq = line.indexOf('=');
            actual.put(line.substring(0, eq), line.substring(eq + 1));
        }
        List<String> mismatches = new ArrayList<>();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            String cValue = actual.get(e.getKey());
            if (cValue == null) {
                mismatches.add(e.getKey() + ": C printed nothing");
            } else if (!agrees(e.getValue(), cValue)) {
                mismatches.add(e.getKey() + ": Java " + e.getValue() + ", C " + cValue);
            }
        }
        System.out.printf("ABI: %d records, %d fields, %d typedef layouts, %d constants checked against gcc; "
                + "%d mismatches%n", records.size(), fieldCount, typedefCount, constantCount, mismatches.size());
        assertEquals(List.of(), mismatches, mismatches.size() + " mismatches between Java and gcc");
        // The whole surface, not a sample: the counts of the UCX 1.13.1 argument file.
        assertTrue(records.size() >= 80, "records checked: " + records.size());
        assertTrue(constantCount >= 450, "constants checked: " + constantCount);
        assertTrue(fieldCount >= 400, "fields checked: " + fieldCount);
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
