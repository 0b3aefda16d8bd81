package io.github.ucxffm.generator;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code --decls-per-header}: the header class split into {@code synthetic_h extends synthetic_h_1 extends ...
 * extends synthetic_h$shared}, as jextract splits header classes of more than 1000 declarations. The synthetic
 * header is generated twice, unsplit (the default) and with 7 declarations a part; both are compiled, loaded and
 * compared, and the split one is called into the C library through the top-level class.
 */
class HeaderSplitTest {

    private static final int PER_PART = 7;
    private static final String H = SyntheticFixture.HEADER_CLASS;
    private static final Pattern HEADER_FILE = Pattern.compile(Pattern.quote(H) + "(_\\d+|\\$shared)?\\.java");

    @TempDir
    static Path work;

    private static Path header;
    private static Path library;
    private static Map<String, String> unsplitFiles;
    private static Map<String, String> splitFiles;
    private static URLClassLoader unsplitLoader;
    private static URLClassLoader splitLoader;
    private static Class<?> unsplitH;
    private static Class<?> splitH;

    @BeforeAll
    static void generateCompileAndLoad() throws ClassNotFoundException {
        Path sources = work.resolve("c");
        header = SyntheticFixture.copySources(sources);
        library = SyntheticFixture.compileLibrary(sources);

        unsplitFiles = generate(work.resolve("unsplit-java"));
        unsplitLoader = SyntheticFixture.compileAndLoad(work.resolve("unsplit-java"), work.resolve("unsplit-classes"));
        unsplitH = Class.forName(SyntheticFixture.PACKAGE + "." + H, true, unsplitLoader);

        splitFiles = generate(work.resolve("split-java"), "--decls-per-header", Integer.toString(PER_PART));
        splitLoader = SyntheticFixture.compileAndLoad(work.resolve("split-java"), work.resolve("split-classes"));
        splitH = Class.forName(SyntheticFixture.PACKAGE + "." + H, true, splitLoader);
    }

    @AfterAll
    static void closeLoaders() throws IOException {
        for (URLClassLoader loader : new URLClassLoader[] {unsplitLoader, splitLoader}) {
            if (loader != null) {
                loader.close();
            }
        }
    }

    // ---- the shape of the split ----------------------------------------------------------------------------------

    @Test
    void shouldLeaveTheHeaderClassWholeByDefault() {
        assertEquals(Set.of(H + ".java", H + "$shared.java"), headerFiles(unsplitFiles));
        assertEquals(List.of(H, H + "$shared", "java.lang.Object"), superclassNames(unsplitH));
    }

    @Test
    void shouldWriteOnePartFilePerSevenDeclarations() {
        int declarations = declarations(unsplitH).size();
        // 1 typedef layout + 16 functions + 4 variables + 16 constants today; several parts whatever it grows to
        assertTrue(declarations > 2 * PER_PART, "too few declarations to split into three parts: " + declarations);
        int parts = (declarations + PER_PART - 1) / PER_PART;

        Set<String> expected = new TreeSet<>(List.of(H + ".java", H + "$shared.java"));
        for (int part = 1; part < parts; part++) {
            expected.add(H + "_" + part + ".java");
        }
        assertEquals(expected, headerFiles(splitFiles));
        for (String file : expected) {
            assertTrue(Files.isRegularFile(packageDir(work.resolve("split-java")).resolve(file)), file + " not written");
        }
    }

    @Test
    void shouldChainThePartsUpToShared() {
        List<String> chain = superclassNames(splitH);
        int parts = headerFiles(splitFiles).size() - 1;
        List<String> expected = new ArrayList<>();
        expected.add(H);
        for (int part = 1; part < parts; part++) {
            expected.add(H + "_" + part);
        }
        expected.add(H + "$shared");
        expected.add("java.lang.Object");
        assertEquals(expected, chain);
        for (Class<?> c = splitH; c != Object.class; c = c.getSuperclass()) {
            assertTrue(Modifier.isPublic(c.getModifiers()), c + " is not public");
        }
    }

    @Test
    void shouldPutAtMostSevenDeclarationsInEachPartAndEveryDeclarationInExactlyOne() {
        Set<String> all = declarations(unsplitH);
        List<Class<?>> parts = parts(splitH);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < parts.size(); i++) {
            Set<String> declared = declarations(parts.get(i));
            int expected = i + 1 < parts.size() ? PER_PART : all.size() - PER_PART * (parts.size() - 1);
            assertEquals(expected, declared.size(), parts.get(i).getSimpleName() + " declares " + declared);
            for (String d : declared) {
                assertTrue(seen.add(d), d + " is declared in two parts");
            }
        }
        assertEquals(all, seen);
        assertEquals(Set.of(), declarations(parts.getLast().getSuperclass()), "the $shared class declares members");
    }

    @Test
    void shouldKeepTheDeclarationsInOrderAndUnchanged() {
        StringBuilder joined = new StringBuilder();
        int parts = headerFiles(splitFiles).size() - 1;
        for (int part = 0; part < parts; part++) {
            String name = part == 0 ? H : H + "_" + part;
            String body = memberText(splitFiles.get(name + ".java"), name);
            assertFalse(body.isBlank(), name + " is empty");
            joined.append(body);
        }
        assertEquals(memberText(unsplitFiles.get(H + ".java"), H), joined.toString());
    }

    @Test
    void shouldLeaveEveryOtherFileAlone() {
        assertEquals(unsplitFiles.get(H + "$shared.java"), splitFiles.get(H + "$shared.java"));
        Map<String, String> others = new TreeMap<>(unsplitFiles);
        others.keySet().removeIf(f -> HEADER_FILE.matcher(f).matches());
        Map<String, String> splitOthers = new TreeMap<>(splitFiles);
        splitOthers.keySet().removeIf(f -> HEADER_FILE.matcher(f).matches());
        assertFalse(others.isEmpty());
        assertEquals(others, splitOthers);
    }

    @Test
    void shouldSplitAtTheBoundaries() {
        int declarations = declarations(unsplitH).size();
        Map<Integer, Integer> partsFor = new LinkedHashMap<>();
        partsFor.put(1, declarations);
        partsFor.put(declarations - 1, 2);
        partsFor.put(declarations, 1);
        partsFor.put(Integer.MAX_VALUE, 1);
        for (Map.Entry<Integer, Integer> e : partsFor.entrySet()) {
            Map<String, String> files = generate(work.resolve("boundary-" + e.getKey()),
                    "--decls-per-header", Integer.toString(e.getKey()));
            assertEquals(e.getValue() + 1, headerFiles(files).size(),
                    "--decls-per-header " + e.getKey() + ": " + headerFiles(files));
        }
    }

    // ---- reaching and calling through the top-level class --------------------------------------------------------

    @Test
    void shouldOfferTheSameStaticMethodsFieldsAndClassesThroughTheTopLevelClass() throws NoSuchMethodException {
        assertEquals(publicStaticMethodNames(unsplitH), publicStaticMethodNames(splitH));
        assertEquals(publicStaticSignatures(unsplitH), publicStaticSignatures(splitH));
        for (Method m : unsplitH.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                // the parameter types are JDK types, shared by both loaders
                Method split = splitH.getMethod(m.getName(), m.getParameterTypes());
                assertTrue(Modifier.isStatic(split.getModifiers()), split.toString());
                assertEquals(m.getReturnType(), split.getReturnType(), split.toString());
            }
        }
        assertEquals(names(unsplitH.getFields()), names(splitH.getFields()));
        assertEquals(classNames(unsplitH.getClasses()), classNames(splitH.getClasses()));
        assertTrue(classNames(splitH.getClasses()).contains("sum_ints"));
    }

    @Test
    void shouldCallAFunctionOfTheFirstPartThroughTheTopLevelClass() throws Exception {
        Method add = splitH.getMethod("syn_point_add", SegmentAllocator.class, MemorySegment.class,
                MemorySegment.class);
        assertSame(splitH, add.getDeclaringClass(), "syn_point_add is no longer in the first part");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sum = (MemorySegment) invoke(add, arena, point(arena, 3, -4), point(arena, 10, 20));
            assertEquals(List.of(13, 16), xy(sum));
        }
        Method statusOf = splitH.getMethod("syn_status_of", int.class);
        assertSame(splitH, statusOf.getDeclaringClass());
        assertEquals((byte) -3, invoke(statusOf, 3));
    }

    @Test
    void shouldCallFunctionsAndVariablesOfMiddlePartsThroughTheTopLevelClass() throws Exception {
        Class<?> sumInts = Arrays.stream(splitH.getClasses()).filter(c -> c.getSimpleName().equals("sum_ints"))
                .findFirst().orElseThrow();
        assertNotEquals(splitH, sumInts.getDeclaringClass(), "sum_ints is not inherited from a later part");
        MemoryLayout cInt = (MemoryLayout) splitH.getField("C_INT").get(null);
        Object invoker = sumInts.getMethod("makeInvoker", MemoryLayout[].class)
                .invoke(null, (Object) new MemoryLayout[] {cInt, cInt, cInt});
        assertEquals(60, sumInts.getMethod("apply", int.class, Object[].class)
                .invoke(invoker, 3, new Object[] {10, 20, 30}));

        Method makeHandler = splitH.getMethod("syn_make_handler", SegmentAllocator.class);
        Method negateVia = splitH.getMethod("syn_negate_via", MemorySegment.class, int.class);
        assertNotEquals(splitH, makeHandler.getDeclaringClass());
        assertNotEquals(splitH, negateVia.getDeclaringClass());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment handler = (MemorySegment) invoke(makeHandler, arena);
            assertEquals(-8, invoke(negateVia, handler, 7)); // C negates (7, 8) and returns its y
        }

        Method counter = splitH.getMethod("syn_global_counter");
        assertNotEquals(splitH, counter.getDeclaringClass());
        assertEquals(7, invoke(counter));
    }

    @Test
    void shouldReturnEveryConstantThroughTheTopLevelClassWhateverItsPart() throws Exception {
        Map<String, Object> expected = expectedConstants();
        Class<?> last = parts(splitH).getLast();
        int inLastPart = 0;
        for (Map.Entry<String, Object> e : expected.entrySet()) {
            Method m = splitH.getMethod(e.getKey());
            assertEquals(e.getValue(), invoke(m), e.getKey());
            assertEquals(invoke(unsplitH.getMethod(e.getKey())), invoke(m), e.getKey());
            if (m.getDeclaringClass() == last) {
                inLastPart++;
            }
        }
        assertTrue(inLastPart > 0, "no constant lands in the last part " + last.getSimpleName());
        for (String d : declarations(last)) {
            assertTrue(d.startsWith("constant ") && expected.containsKey(d.substring("constant ".length())),
                    "the last part declares " + d + ", which this test does not call");
        }
    }

    // ---- bad values --------------------------------------------------------------------------------------------

    @Test
    void shouldRejectZero() {
        String message = rejected("0");
        assertTrue(message.contains("--decls-per-header"), message);
        assertTrue(message.contains(">= 1"), message);
    }

    @Test
    void shouldRejectNegativeAndNonNumericValues() {
        for (String bad : List.of("-1", "seven", "7x", "", "99999999999")) {
            String message = rejected(bad);
            assertTrue(message.contains("--decls-per-header"), bad + ": " + message);
        }
    }

    @Test
    void shouldRejectAMissingValue() {
        List<String> args = new ArrayList<>(List.of(header.toString(), "--decls-per-header"));
        GeneratorException e = assertThrows(GeneratorException.class, () -> Main.run(args));
        assertTrue(e.getMessage().contains("--decls-per-header needs a value"), e.getMessage());
    }

    // ---- helpers -----------------------------------------------------------------------------------------------

    private static int runs;

    private static String rejected(String value) {
        Path output = work.resolve("rejected-" + runs++);
        List<String> args = SyntheticFixture.generatorArgs(header, library, output);
        args.addAll(0, List.of("--decls-per-header", value));
        GeneratorException e = assertThrows(GeneratorException.class, () -> Main.run(args),
                "--decls-per-header \"" + value + "\" was accepted");
        assertFalse(Files.exists(output), "a rejected run wrote " + output);
        return e.getMessage();
    }

    private static Map<String, String> generate(Path output, String... extra) {
        List<String> args = SyntheticFixture.generatorArgs(header, library, output);
        args.addAll(0, List.of(extra));
        return Main.run(args);
    }

    private static Path packageDir(Path output) {
        return output.resolve(SyntheticFixture.PACKAGE.replace('.', '/'));
    }

    private static Set<String> headerFiles(Map<String, String> files) {
        Set<String> out = new TreeSet<>();
        for (String f : files.keySet()) {
            if (HEADER_FILE.matcher(f).matches()) {
                out.add(f);
            }
        }
        return out;
    }

    private static List<String> superclassNames(Class<?> c) {
        List<String> out = new ArrayList<>();
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            out.add(k.getName().startsWith(SyntheticFixture.PACKAGE + ".")
                    ? k.getName().substring(SyntheticFixture.PACKAGE.length() + 1) : k.getName());
        }
        return out;
    }

    /** The header class and its parts, top-level first, without {@code $shared}. */
    private static List<Class<?>> parts(Class<?> top) {
        List<Class<?>> out = new ArrayList<>();
        for (Class<?> c = top; !c.getSimpleName().endsWith("$shared"); c = c.getSuperclass()) {
            assertNotEquals(Object.class, c, "the chain of " + top + " does not reach $shared");
            out.add(c);
        }
        return out;
    }

    /**
     * The declarations a header class (part) itself holds, each counted once: a typedef layout (public static field),
     * a function ({@code NAME$descriptor}, or a public nested class for a variadic one), a variable
     * ({@code NAME$segment}) or a constant (any other public static method without parameters).
     */
    private static Set<String> declarations(Class<?> c) {
        Set<String> out = new TreeSet<>();
        for (Field f : c.getDeclaredFields()) {
            if (Modifier.isPublic(f.getModifiers()) && Modifier.isStatic(f.getModifiers())) {
                out.add("typedef " + f.getName());
            }
        }
        for (Class<?> nested : c.getDeclaredClasses()) {
            if (Modifier.isPublic(nested.getModifiers())) {
                out.add("function " + nested.getSimpleName());
            }
        }
        Set<String> named = new HashSet<>();
        for (Method m : c.getDeclaredMethods()) {
            String n = m.getName();
            if (n.endsWith("$descriptor")) {
                named.add(n.substring(0, n.indexOf('$')));
                out.add("function " + n.substring(0, n.indexOf('$')));
            } else if (n.endsWith("$segment")) {
                named.add(n.substring(0, n.indexOf('$')));
                out.add("variable " + n.substring(0, n.indexOf('$')));
            }
        }
        if (c.getSimpleName().endsWith("$shared")) {
            out.clear(); // C_INT, findOrNull and the like are no declarations of the header
            return out;
        }
        for (Method m : c.getDeclaredMethods()) {
            int mod = m.getModifiers();
            if (Modifier.isPublic(mod) && Modifier.isStatic(mod) && !m.isSynthetic() && m.getParameterCount() == 0
                    && !m.getName().contains("$") && !named.contains(m.getName())) {
                out.add("constant " + m.getName());
            }
        }
        return out;
    }

    /** The text of a header class part between its constructor and its closing brace. */
    private static String memberText(String source, String className) {
        String constructor = "    " + className + "() {\n        // Should not be called directly\n    }\n";
        int start = source.indexOf(constructor);
        assertTrue(start >= 0, "no constructor in " + className);
        assertTrue(source.endsWith("\n}\n"), className + " does not end with its closing brace");
        return source.substring(start + constructor.length(), source.length() - "}\n".length());
    }

    private static Set<String> publicStaticMethodNames(Class<?> c) {
        Set<String> out = new TreeSet<>();
        for (Method m : c.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                out.add(m.getName());
            }
        }
        return out;
    }

    private static Set<String> publicStaticSignatures(Class<?> c) {
        Set<String> out = new TreeSet<>();
        for (Method m : c.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                out.add(m.getReturnType().getName() + " " + m.getName() + Arrays.toString(m.getParameterTypes()));
            }
        }
        return out;
    }

    private static Set<String> names(Field[] fields) {
        Set<String> out = new TreeSet<>();
        for (Field f : fields) {
            out.add(f.getName() + ":" + f.getType().getName());
        }
        return out;
    }

    private static Set<String> classNames(Class<?>[] classes) {
        Set<String> out = new TreeSet<>();
        for (Class<?> c : classes) {
            out.add(c.getSimpleName());
        }
        return out;
    }

    private static Map<String, Object> expectedConstants() {
        Map<String, Object> expected = new TreeMap<>();
        expected.put("SYN_OK", 0);
        expected.put("SYN_INPROGRESS", 1);
        expected.put("SYN_ERR_IO", -3);
        expected.put("SYN_ERR_LAST", -100);
        expected.put("SYN_FLAG_A", 1);
        expected.put("SYN_FLAG_B", Integer.MIN_VALUE);
        expected.put("SYN_SHIFT", 16);
        expected.put("SYN_NEGATIVE", -5);
        expected.put("SYN_BIG", 0x100000000L);
        expected.put("SYN_UNSIGNED", (int) 4000000000L);
        expected.put("SYN_LONG", 123456789012L);
        expected.put("SYN_TEXT", "syn\"text\"\n");
        expected.put("SYN_DOUBLE", 2.5);
        expected.put("SYN_FLOAT", 1.25f);
        expected.put("SYN_EXPR", 19);
        expected.put("SYN_CHAR", 65);
        return expected;
    }

    private static MemorySegment point(Arena arena, int x, int y) throws ReflectiveOperationException {
        Class<?> point = Class.forName(SyntheticFixture.PACKAGE + ".syn_point", true, splitLoader);
        MemorySegment p = (MemorySegment) point.getMethod("allocate", SegmentAllocator.class).invoke(null, arena);
        point.getMethod("x", MemorySegment.class, int.class).invoke(null, p, x);
        point.getMethod("y", MemorySegment.class, int.class).invoke(null, p, y);
        return p;
    }

    private static List<Integer> xy(MemorySegment p) throws ReflectiveOperationException {
        Class<?> point = Class.forName(SyntheticFixture.PACKAGE + ".syn_point", true, splitLoader);
        return List.of((Integer) point.getMethod("x", MemorySegment.class).invoke(null, p),
                (Integer) point.getMethod("y", MemorySegment.class).invoke(null, p));
    }

    private static Object invoke(Method m, Object... args) {
        try {
            return m.invoke(null, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new AssertionError(e.getCause());
        } catch (IllegalAccessException e) {
            fail(e);
            return null;
        }
    }
}
