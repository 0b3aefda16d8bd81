package io.github.ucxffm.generator;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * End to end: synthetic.c is compiled with gcc, the generator binds synthetic.h, javac compiles what it wrote, and the
 * tests call through the generated classes into the C library, comparing with what C computes and how gcc lays out
 * the records.
 */
class GeneratedBindingsTest {

    @TempDir
    static Path work;

    private static Path library;
    private static Map<String, String> generated;
    private static URLClassLoader loader;
    private static Class<?> h;
    /** "CLASS sizeof", "CLASS alignof", "CLASS#FIELD offset" and "CLASS#FIELD size", as gcc computes them. */
    private static Map<String, Long> gccLayout;

    @BeforeAll
    static void generateCompileAndLoad() throws Throwable {
        Path sources = work.resolve("c");
        Path header = SyntheticFixture.copySources(sources);
        library = SyntheticFixture.compileLibrary(sources);
        Path java = work.resolve("java");
        generated = Main.run(SyntheticFixture.generatorArgs(header, library, java));
        loader = SyntheticFixture.compileAndLoad(java, work.resolve("classes"));
        h = type(SyntheticFixture.HEADER_CLASS);
        gccLayout = readGccLayout(library);
    }

    @AfterAll
    static void closeLoader() throws IOException {
        if (loader != null) {
            loader.close();
        }
    }

    // ---- functions ---------------------------------------------------------------------------------------------

    @Test
    void shouldPassAndReturnPackedEnumAsOneByte() throws Exception {
        assertEquals(byte.class, h.getMethod("syn_status_of", int.class).getReturnType());
        assertEquals((byte) 0, call(h, "syn_status_of", 0));
        assertEquals((byte) 1, call(h, "syn_status_of", 1));
        assertEquals((byte) -3, call(h, "syn_status_of", 3));
        assertEquals((byte) -100, call(h, "syn_status_of", 99));
        // C multiplies by 1000 and adds sizeof(status): a wrong width would show in either part
        assertEquals(-2999, call(h, "syn_status_code", (byte) -3));
        assertEquals(1001, call(h, "syn_status_code", (byte) 1));
        FunctionDescriptor desc = (FunctionDescriptor) call(h, "syn_status_of$descriptor");
        assertEquals(1, desc.returnLayout().orElseThrow().byteSize());
        assertEquals(1, ((MemoryLayout) h.getField("syn_status_t").get(null)).byteSize());
        assertEquals(1, ((MemoryLayout) call(type("syn_complex"), "status$layout")).byteSize());
    }

    @Test
    void shouldPassAndReturnSmallStructsByValue() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = point(arena, 3, -4);
            MemorySegment b = point(arena, 10, 20);
            MemorySegment sum = (MemorySegment) call(h, "syn_point_add", arena, a, b);
            assertArrayEquals(new int[] {13, 16}, xy(sum));
            assertEquals(sizeof("syn_point"), sum.byteSize());
        }
    }

    @Test
    void shouldPassAndReturnStructsPassedInMemoryByValue() {
        Class<?> vec3 = type("syn_vec3");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = vec3(arena, 1.0, 2.0, 3.0);
            MemorySegment scaled = (MemorySegment) call(h, "syn_vec3_scale", arena, v, 2.5);
            assertEquals(2.5, call(vec3, "x", scaled));
            assertEquals(5.0, call(vec3, "y", scaled));
            assertEquals(7.5, call(vec3, "z", scaled));
            assertEquals(32.0, call(h, "syn_vec3_dot", v, vec3(arena, 4.0, 5.0, 6.0)));
        }
    }

    @Test
    void shouldCallVariadicFunctionThroughInvokers() throws Exception {
        Class<?> sumInts = type(SyntheticFixture.HEADER_CLASS + ".sum_ints");
        Method makeInvoker = sumInts.getMethod("makeInvoker", MemoryLayout[].class);
        Method apply = sumInts.getMethod("apply", int.class, Object[].class);
        MemoryLayout cInt = (MemoryLayout) h.getField("C_INT").get(null);

        Object three = makeInvoker.invoke(null, (Object) new MemoryLayout[] {cInt, cInt, cInt});
        assertEquals(60, apply.invoke(three, 3, new Object[] {10, 20, 30}));
        assertEquals(-6, apply.invoke(three, 3, new Object[] {-1, -2, -3}));
        Object five = makeInvoker.invoke(null, (Object) new MemoryLayout[] {cInt, cInt, cInt, cInt, cInt});
        assertEquals(15, apply.invoke(five, 5, new Object[] {1, 2, 3, 4, 5}));
        Object none = makeInvoker.invoke(null, (Object) new MemoryLayout[0]);
        assertEquals(0, apply.invoke(none, 0, new Object[0]));
        FunctionDescriptor desc = (FunctionDescriptor) sumInts.getMethod("descriptor").invoke(three);
        assertEquals(4, desc.argumentLayouts().size());
    }

    @Test
    void shouldBindFunctionWithoutPrototypeAsTakingNoArguments() throws Exception {
        List<Method> overloads = Arrays.stream(h.getDeclaredMethods()).filter(m -> m.getName().equals("noproto"))
                .toList();
        assertEquals(1, overloads.size(), "noproto() overloads: " + overloads);
        assertEquals(0, overloads.getFirst().getParameterCount());
        assertEquals(42, call(h, "noproto"));
        assertTrue(((FunctionDescriptor) call(h, "noproto$descriptor")).argumentLayouts().isEmpty());
    }

    @Test
    void shouldPassPointerToPointer() {
        try (Arena arena = Arena.ofConfined()) {
            AddressLayout pointer = (AddressLayout) field(h, "C_POINTER");
            MemorySegment strings = arena.allocate(pointer, 3);
            strings.setAtIndex(pointer, 0, arena.allocateFrom("ab"));
            strings.setAtIndex(pointer, 1, arena.allocateFrom("cde"));
            strings.setAtIndex(pointer, 2, arena.allocateFrom("f"));
            assertEquals(6, call(h, "syn_count_chars", strings, 3));
            assertEquals(5, call(h, "syn_count_chars", strings, 2));
        }
    }

    // ---- function pointers -------------------------------------------------------------------------------------

    @Test
    void shouldUpcallTypedefCallbackWithStructByValueAndUseStructItReturns() {
        Class<?> cb = type("syn_transform_cb_t");
        try (Arena arena = Arena.ofConfined()) {
            List<String> seen = new ArrayList<>();
            Object fi = callback(type("syn_transform_cb_t.Function"), args -> {
                MemorySegment p = (MemorySegment) args[0];
                int scale = (Integer) args[1];
                seen.add(Arrays.toString(xy(p)) + "*" + scale);
                return point(arena, xy(p)[0] * scale + 1, xy(p)[1] * scale + 2);
            });
            MemorySegment stub = (MemorySegment) call(cb, "allocate", fi, arena);
            // C returns r.x * 1000 + r.y of what the callback returned
            assertEquals(11 * 1000 + 17, call(h, "syn_apply_transform", stub, point(arena, 2, 3), 5));
            assertEquals(List.of("[2, 3]*5"), seen);
        }
    }

    @Test
    void shouldUpcallThroughAnonymousFunctionPointerField() {
        Class<?> complex = type("syn_complex");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment c = (MemorySegment) call(complex, "allocate", arena);
            Object fi = callback(type("syn_complex.on_point.Function"), args -> {
                int[] p = xy((MemorySegment) args[0]);
                int scale = (Integer) args[1];
                return point(arena, p[0] + scale, p[1] - scale);
            });
            call(complex, "on_point", c, call(type("syn_complex.on_point"), "allocate", fi, arena));
            call(h, "syn_complex_call", c, point(arena, 4, 5)); // C: c->corners[0] = c->on_point(p, 10)
            assertArrayEquals(new int[] {14, -5}, xy((MemorySegment) call(complex, "corners", c, 0L)));
        }
    }

    @Test
    void shouldInvokeCFunctionPointersFromVariableReturnValueAndFields() {
        Class<?> cb = type("syn_transform_cb_t");
        try (Arena arena = Arena.ofConfined()) {
            // syn_double_point: (2 * x * scale, 2 * y * scale)
            MemorySegment fromVariable = (MemorySegment) call(h, "syn_global_transform");
            assertArrayEquals(new int[] {6, 12},
                    xy((MemorySegment) call(cb, "invoke", fromVariable, arena, point(arena, 1, 2), 3)));
            MemorySegment fromFunction = (MemorySegment) call(h, "syn_get_transform");
            assertEquals(fromVariable.address(), fromFunction.address());
            assertArrayEquals(new int[] {-20, 40},
                    xy((MemorySegment) call(cb, "invoke", fromFunction, arena, point(arena, -5, 10), 2)));

            Class<?> complex = type("syn_complex");
            MemorySegment c = (MemorySegment) call(complex, "allocate", arena);
            call(h, "syn_complex_fill", c, 1);
            MemorySegment onPoint = (MemorySegment) call(complex, "on_point", c);
            assertArrayEquals(new int[] {2, 4}, xy((MemorySegment) call(type("syn_complex.on_point"), "invoke",
                    onPoint, arena, point(arena, 1, 2), 1)));
            assertEquals(fromVariable.address(), ((MemorySegment) call(complex, "transform", c)).address());

            // a struct returned by value whose only field is a function pointer taking a struct by value
            Class<?> handler = type("syn_handler");
            MemorySegment hv = (MemorySegment) call(h, "syn_make_handler", arena);
            MemorySegment fn = (MemorySegment) call(handler, "fn", hv);
            assertArrayEquals(new int[] {-5, -6},
                    xy((MemorySegment) call(type("syn_handler.fn"), "invoke", fn, arena, point(arena, 5, 6))));
            assertEquals(-8, call(h, "syn_negate_via", hv, 7));
        }
    }

    // ---- variables and constants -------------------------------------------------------------------------------

    @Test
    void shouldReadAndWriteGlobalVariables() {
        assertEquals(7, call(h, "syn_global_counter"));
        call(h, "syn_global_counter", 9);
        try {
            assertEquals(9, call(h, "syn_global_counter"));
            assertEquals(9, ((MemorySegment) call(h, "syn_global_counter$segment")).get(ValueLayout.JAVA_INT, 0));
        } finally {
            call(h, "syn_global_counter", 7);
        }
        MemorySegment origin = (MemorySegment) call(h, "syn_global_origin");
        assertArrayEquals(new int[] {-11, 22}, xy(origin));
        assertEquals(sizeof("syn_point"), origin.byteSize());
        assertEquals((byte) -100, call(h, "syn_global_status"));
        assertEquals(1, ((MemoryLayout) call(h, "syn_global_status$layout")).byteSize());
    }

    @Test
    void shouldGenerateConstantsWithExactValuesAndJavaTypes() throws Exception {
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("SYN_SHIFT", 16);
        expected.put("SYN_NEGATIVE", -5);
        expected.put("SYN_BIG", 0x100000000L);
        expected.put("SYN_UNSIGNED", (int) 4000000000L); // unsigned int keeps its 32 bits in a Java int
        expected.put("SYN_LONG", 123456789012L);
        expected.put("SYN_TEXT", "syn\"text\"\n");
        expected.put("SYN_DOUBLE", 2.5);
        expected.put("SYN_FLOAT", 1.25f);
        expected.put("SYN_EXPR", 19);
        expected.put("SYN_CHAR", 65);
        expected.put("SYN_OK", 0);
        expected.put("SYN_INPROGRESS", 1);
        expected.put("SYN_ERR_IO", -3);
        expected.put("SYN_ERR_LAST", -100);
        expected.put("SYN_FLAG_A", 1);
        expected.put("SYN_FLAG_B", Integer.MIN_VALUE);
        Map<Class<?>, Class<?>> primitive = Map.of(Integer.class, int.class, Long.class, long.class,
                Double.class, double.class, Float.class, float.class, String.class, String.class);
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Object> e : expected.entrySet()) {
            Method m = h.getMethod(e.getKey());
            Class<?> type = primitive.get(e.getValue().getClass());
            Object actual = m.invoke(null);
            if (m.getReturnType() != type || !e.getValue().equals(actual)) {
                wrong.add(e.getKey() + ": expected " + type + " " + e.getValue() + ", got " + m.getReturnType()
                        + " " + actual);
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void shouldGenerateNothingForStaticInlineFunctionsAndNonConstantMacros() {
        List<String> absent = List.of("syn_inline_twice", "SYN_MAX", "SYN_NOT_CONST", "SYNTHETIC_H");
        for (Map.Entry<String, String> file : generated.entrySet()) {
            for (String name : absent) {
                assertFalse(file.getValue().contains(name), file.getKey() + " mentions " + name);
            }
        }
        for (Class<?> c : generatedClasses().values()) {
            for (Method m : c.getDeclaredMethods()) {
                assertFalse(absent.contains(m.getName()), c.getName() + " has " + m);
            }
            for (Class<?> nested : c.getDeclaredClasses()) {
                assertFalse(absent.contains(nested.getSimpleName()), c.getName() + " has " + nested);
            }
        }
    }

    // ---- layouts -----------------------------------------------------------------------------------------------

    @Test
    void shouldMatchGccSizeAlignmentAndFieldOffsetsOfEveryRecord() throws Exception {
        Map<String, Long> java = new TreeMap<>();
        for (Map.Entry<String, Class<?>> e : generatedClasses().entrySet()) {
            Class<?> c = e.getValue();
            Method sizeof = declared(c, "sizeof");
            if (sizeof == null) {
                continue; // header class, typedef subclasses, function-pointer classes
            }
            String name = e.getKey();
            GroupLayout layout = (GroupLayout) c.getMethod("layout").invoke(null);
            java.put(name + " sizeof", (Long) sizeof.invoke(null));
            java.put(name + " alignof", layout.byteAlignment());
            assertEquals(layout.byteSize(), (Long) sizeof.invoke(null), name);
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().endsWith("$offset") && m.getParameterCount() == 0) {
                    String fieldName = m.getName().substring(0, m.getName().length() - "$offset".length());
                    java.put(name + "#" + fieldName + " offset", (Long) m.invoke(null));
                    MemoryLayout fieldLayout = (MemoryLayout) c.getMethod(fieldName + "$layout").invoke(null);
                    java.put(name + "#" + fieldName + " size", fieldLayout.byteSize());
                }
            }
        }
        // both ways: every record and field the generator wrote is known to gcc, and every one gcc knows was written
        List<String> differences = new ArrayList<>();
        for (String key : new TreeSet<>(union(gccLayout.keySet(), java.keySet()))) {
            Long c = gccLayout.get(key);
            Long j = java.get(key);
            if (c == null || !c.equals(j)) {
                differences.add(key + ": gcc " + (c == null ? "-" : c) + ", generated " + (j == null ? "-" : j));
            }
        }
        assertEquals(List.of(), differences);
        assertTrue(java.size() > 40, "too few layout facts compared: " + java.keySet());
    }

    @Test
    void shouldReachAnonymousMemberFieldsThroughTheOuterRecord() {
        Class<?> complex = type("syn_complex");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment c = (MemorySegment) call(complex, "allocate", arena);
            assertEquals(gccLayout.get("syn_complex#lo offset"), call(complex, "lo$offset"));
            assertEquals(gccLayout.get("syn_complex#as_u64 offset") + 4, call(complex, "hi$offset"));
            call(complex, "lo", c, 0x11223344);
            call(complex, "hi", c, 0x55667788);
            assertEquals(0x5566778811223344L, call(complex, "as_u64", c));
            call(complex, "as_double", c, 1.0);
            assertEquals(Double.doubleToRawLongBits(1.0), call(complex, "as_u64", c));
            assertEquals(0, call(complex, "lo", c));

            Class<?> inner = type("syn_complex.inner");
            MemorySegment in = (MemorySegment) call(complex, "inner", c);
            call(inner, "f", in, 1.5f);
            assertEquals(Float.floatToRawIntBits(1.5f), call(inner, "i", in));
            assertEquals(gccLayout.get("syn_complex.inner#i offset"), call(inner, "f$offset"));
        }
    }

    @Test
    void shouldReadEveryFieldThatCWrote() {
        Class<?> complex = type("syn_complex");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment c = (MemorySegment) call(complex, "allocate", arena);
            int s = 5;
            call(h, "syn_complex_fill", c, s);
            AddressLayout pointer = (AddressLayout) field(h, "C_POINTER");
            Class<?> size = type("syn_complex.size");
            Class<?> rgb = type("syn_complex.fg");
            Class<?> entry = type("syn_complex.entries");
            MemorySegment sz = (MemorySegment) call(complex, "size", c);
            MemorySegment fg = (MemorySegment) call(complex, "fg", c);
            MemorySegment bg = (MemorySegment) call(complex, "bg", c);
            MemorySegment names = ((MemorySegment) call(complex, "names", c)).reinterpret(3 * pointer.byteSize());
            List<Runnable> checks = new ArrayList<>(List.of(
                    () -> assertEquals((byte) -3, call(complex, "status", c)),
                    () -> assertEquals((byte) (s + 1), call(complex, "tag", c)),
                    () -> assertEquals(s + 2, call(complex, "lo", c)),
                    () -> assertEquals(s + 3, call(complex, "hi", c)),
                    () -> assertEquals(((long) (s + 3) << 32) | (s + 2), call(complex, "as_u64", c)),
                    () -> assertEquals((short) (s + 4), call(size, "width", sz)),
                    () -> assertEquals((short) -(s + 5), call(size, "height", sz)),
                    () -> assertEquals("abcde", sz.getString(((Long) call(size, "name$offset")))),
                    () -> assertEquals((byte) 'c', call(size, "name", sz, 2L)),
                    () -> assertEquals((byte) 0, call(size, "name", sz, 5L)),
                    () -> assertArrayEquals(new long[] {6}, (long[]) call(size, "name$dimensions")),
                    () -> assertEquals((byte) (s + 6), call(rgb, "r", fg)),
                    () -> assertEquals((byte) (s + 8), call(rgb, "b", fg)),
                    () -> assertEquals((byte) (s + 9), call(rgb, "r", bg)),
                    () -> assertEquals((byte) (s + 10), call(rgb, "g", bg)),
                    () -> assertEquals((byte) (s + 11), call(rgb, "b", bg)),
                    () -> assertArrayEquals(new long[] {5}, (long[]) call(complex, "values$dimensions")),
                    () -> assertArrayEquals(new long[] {2, 3}, (long[]) call(complex, "matrix$dimensions")),
                    () -> assertArrayEquals(new long[] {4}, (long[]) call(complex, "corners$dimensions")),
                    () -> assertArrayEquals(new long[] {2, 2}, (long[]) call(complex, "grid$dimensions")),
                    () -> assertArrayEquals(new long[] {2}, (long[]) call(complex, "entries$dimensions")),
                    () -> assertArrayEquals(new long[] {2, 2}, (long[]) call(complex, "table$dimensions")),
                    () -> assertEquals("alpha", names.getAtIndex(pointer, 0).getString(0)),
                    () -> assertEquals("beta", names.getAtIndex(pointer, 1).getString(0)),
                    () -> assertEquals(MemorySegment.NULL, names.getAtIndex(pointer, 2)),
                    () -> assertNotEquals(MemorySegment.NULL, call(complex, "on_point", c)),
                    () -> assertEquals(s + 12, call(type("syn_complex.inner"), "depth", call(complex, "inner", c))),
                    () -> assertEquals(s + 13, call(type("syn_complex.inner"), "i", call(complex, "inner", c))),
                    () -> assertEquals(s + 14, call(complex, "class_", c)),
                    () -> assertEquals(((long) s << 40) | 7, call(complex, "trailer", c))));
            for (long i = 0; i < 5; i++) {
                long index = i;
                checks.add(() -> assertEquals((int) (s * 10 + index), call(complex, "values", c, index)));
            }
            for (long i = 0; i < 2; i++) {
                for (long j = 0; j < 3; j++) {
                    long a = i;
                    long b = j;
                    checks.add(() -> assertEquals((short) (s + 100 * a + b), call(complex, "matrix", c, a, b),
                            "matrix[" + a + "][" + b + "]"));
                }
            }
            for (long i = 0; i < 4; i++) {
                long a = i;
                checks.add(() -> assertArrayEquals(new int[] {s + (int) a, -(s + (int) a)},
                        xy((MemorySegment) call(complex, "corners", c, a)), "corners[" + a + "]"));
            }
            for (long i = 0; i < 2; i++) {
                long a = i;
                checks.add(() -> assertEquals(s + (int) a, call(entry, "k", call(complex, "entries", c, a))));
                checks.add(() -> assertEquals(2 * s + (int) a, call(entry, "v", call(complex, "entries", c, a))));
                for (long j = 0; j < 2; j++) {
                    long b = j;
                    int v = s + 10 * (int) a + (int) b;
                    checks.add(() -> assertArrayEquals(new int[] {v, s + 1000},
                            xy((MemorySegment) call(complex, "grid", c, a, b)), "grid[" + a + "][" + b + "]"));
                    checks.add(() -> assertEquals(v, call(entry, "k", call(complex, "table", c, a, b))));
                    checks.add(() -> assertEquals(-v, call(entry, "v", call(complex, "table", c, a, b))));
                }
            }
            assertAll(checks.stream().map(r -> () -> r.run()));
        }
    }

    @Test
    void shouldWriteEveryFieldWhereCReadsIt() {
        Class<?> complex = type("syn_complex");
        Class<?> size = type("syn_complex.size");
        Class<?> rgb = type("syn_complex.fg");
        Class<?> entry = type("syn_complex.entries");
        Class<?> inner = type("syn_complex.inner");
        AddressLayout pointer = (AddressLayout) field(h, "C_POINTER");
        try (Arena arena = Arena.ofConfined()) {
            int s = 3;
            MemorySegment c = (MemorySegment) call(complex, "allocate", arena);
            call(complex, "status", c, (byte) -3);
            call(complex, "tag", c, (byte) (s + 1));
            call(complex, "lo", c, s + 2);
            call(complex, "hi", c, s + 3);
            MemorySegment sz = (MemorySegment) call(complex, "size", c);
            call(size, "width", sz, (short) (s + 4));
            call(size, "height", sz, (short) -(s + 5));
            byte[] name = "abcde".getBytes();
            for (int i = 0; i < name.length; i++) {
                call(size, "name", sz, (long) i, name[i]);
            }
            MemorySegment fg = (MemorySegment) call(rgb, "allocate", arena);
            call(rgb, "r", fg, (byte) (s + 6));
            call(rgb, "g", fg, (byte) (s + 7));
            call(rgb, "b", fg, (byte) (s + 8));
            call(complex, "fg", c, fg);
            MemorySegment bg = (MemorySegment) call(complex, "bg", c);
            call(rgb, "r", bg, (byte) (s + 9));
            call(rgb, "g", bg, (byte) (s + 10));
            call(rgb, "b", bg, (byte) (s + 11));
            for (long i = 0; i < 5; i++) {
                call(complex, "values", c, i, (int) (s * 10 + i));
            }
            for (long i = 0; i < 2; i++) {
                for (long j = 0; j < 3; j++) {
                    call(complex, "matrix", c, i, j, (short) (s + 100 * i + j));
                }
            }
            for (long i = 0; i < 4; i++) {
                call(complex, "corners", c, i, point(arena, s + (int) i, -(s + (int) i)));
            }
            for (long i = 0; i < 2; i++) {
                MemorySegment e = (MemorySegment) call(complex, "entries", c, i);
                call(entry, "k", e, s + (int) i);
                call(entry, "v", e, 2 * s + (int) i);
                for (long j = 0; j < 2; j++) {
                    int v = s + 10 * (int) i + (int) j;
                    call(complex, "grid", c, i, j, point(arena, v, s + 1000));
                    MemorySegment t = (MemorySegment) call(entry, "allocate", arena);
                    call(entry, "k", t, v);
                    call(entry, "v", t, -v);
                    call(complex, "table", c, i, j, t);
                }
            }
            MemorySegment names = arena.allocate(pointer, 3);
            names.setAtIndex(pointer, 0, arena.allocateFrom("alpha"));
            names.setAtIndex(pointer, 1, arena.allocateFrom("beta"));
            call(complex, "names", c, names);
            MemorySegment transform = (MemorySegment) call(h, "syn_get_transform");
            call(complex, "on_point", c, transform);
            call(complex, "transform", c, transform);
            MemorySegment in = (MemorySegment) call(complex, "inner", c);
            call(inner, "depth", in, s + 12);
            call(inner, "i", in, s + 13);
            call(complex, "class_", c, s + 14);
            call(complex, "trailer", c, ((long) s << 40) | 7);

            // syn_complex_verify names the first field that differs from what syn_complex_fill(c, s) writes
            assertEquals(0, call(h, "syn_complex_verify", c, s));
            call(complex, "matrix", c, 1L, 2L, (short) 0);
            assertEquals(9, call(h, "syn_complex_verify", c, s));
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------------------

    /** A generated class by its name relative to the package, nested classes joined with dots. */
    private static Class<?> type(String name) {
        try {
            return Class.forName(SyntheticFixture.PACKAGE + "." + name.replace('.', '$'), true, loader);
        } catch (ClassNotFoundException e) {
            throw new AssertionError("no generated class " + name, e);
        }
    }

    /** Every generated class, top-level and nested, by its name relative to the package. */
    private static Map<String, Class<?>> generatedClasses() {
        Map<String, Class<?>> out = new TreeMap<>();
        for (String file : generated.keySet()) {
            String name = file.substring(0, file.length() - ".java".length());
            addWithNested(name, type(name), out);
        }
        return out;
    }

    private static void addWithNested(String name, Class<?> c, Map<String, Class<?>> out) {
        out.put(name, c);
        for (Class<?> nested : c.getDeclaredClasses()) {
            addWithNested(name + "." + nested.getSimpleName(), nested, out);
        }
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }

    private static Method declared(Class<?> c, String name) {
        for (Method m : c.getDeclaredMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 0) {
                return m;
            }
        }
        return null;
    }

    private static Object field(Class<?> c, String name) {
        try {
            return c.getField(name).get(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static final Map<Class<?>, Class<?>> BOXES = Map.of(int.class, Integer.class, long.class, Long.class,
            byte.class, Byte.class, short.class, Short.class, float.class, Float.class, double.class, Double.class,
            boolean.class, Boolean.class, char.class, Character.class);

    /** Calls the one public static method of {@code c} named {@code name} whose parameters accept {@code args}. */
    private static Object call(Class<?> c, String name, Object... args) {
        List<Method> matches = new ArrayList<>();
        for (Method m : c.getMethods()) {
            if (!m.getName().equals(name) || !Modifier.isStatic(m.getModifiers())
                    || m.getParameterCount() != args.length) {
                continue;
            }
            boolean ok = true;
            Class<?>[] types = m.getParameterTypes();
            for (int i = 0; i < args.length && ok; i++) {
                Class<?> t = types[i].isPrimitive() ? BOXES.get(types[i]) : types[i];
                ok = args[i] == null ? !types[i].isPrimitive() : t.isInstance(args[i]);
            }
            if (ok) {
                matches.add(m);
            }
        }
        if (matches.size() != 1) {
            fail("expected one " + c.getName() + "." + name + " for " + Arrays.toString(args) + ", found " + matches);
        }
        try {
            return matches.getFirst().invoke(null, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new AssertionError(e.getCause());
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    /** An instance of a generated functional interface implemented by {@code body}. */
    private static Object callback(Class<?> iface, Function<Object[], Object> body) {
        assertTrue(iface.isInterface(), iface + " is not an interface");
        return Proxy.newProxyInstance(loader, new Class<?>[] {iface}, (p, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> p == args[0];
                    case "hashCode" -> System.identityHashCode(p);
                    default -> "callback " + iface.getName();
                };
            }
            assertEquals("apply", method.getName());
            return body.apply(args);
        });
    }

    private static long sizeof(String record) {
        return (Long) call(type(record), "sizeof");
    }

    private static MemorySegment point(Arena arena, int x, int y) {
        Class<?> point = type("syn_point");
        MemorySegment p = (MemorySegment) call(point, "allocate", arena);
        call(point, "x", p, x);
        call(point, "y", p, y);
        return p;
    }

    private static int[] xy(MemorySegment point) {
        Class<?> c = type("syn_point");
        return new int[] {(Integer) call(c, "x", point), (Integer) call(c, "y", point)};
    }

    private static MemorySegment vec3(Arena arena, double x, double y, double z) {
        Class<?> vec3 = type("syn_vec3_t"); // the typedef class reaches syn_vec3's members
        MemorySegment v = (MemorySegment) call(vec3, "allocate", arena);
        call(vec3, "x", v, x);
        call(vec3, "y", v, y);
        call(vec3, "z", v, z);
        return v;
    }

    /** The library's own account of its records, read with a hand-made downcall rather than the generated code. */
    private static Map<String, Long> readGccLayout(Path library) throws Throwable {
        Map<String, Long> out = new TreeMap<>();
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, arena);
            MethodHandle table = Linker.nativeLinker().downcallHandle(lookup.find("syn_layout_table").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.ADDRESS));
            String text = ((MemorySegment) table.invokeExact()).reinterpret(Long.MAX_VALUE).getString(0);
            for (String line : text.split("\n")) {
                int eq = line.lastIndexOf('=');
                assertTrue(eq > 0, "bad layout line " + line);
                out.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1)));
            }
        }
        assertTrue(out.size() > 40, "too few layout facts: " + new TreeSet<>(out.keySet()));
        return out;
    }
}
