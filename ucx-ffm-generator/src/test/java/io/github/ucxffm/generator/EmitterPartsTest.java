package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.CType;
import io.github.ucxffm.generator.Model.FunctionType;
import io.github.ucxffm.generator.Model.Pointer;
import io.github.ucxffm.generator.Model.Prim;
import io.github.ucxffm.generator.Model.Primitive;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The emitter's parts that work on text and types alone: naming, C prototypes, comments, wrapping. */
class EmitterPartsTest {

    private static final CType INT = new Primitive(Prim.INT);

    private static FunctionType fn(List<CType> params, List<String> names, boolean variadic, boolean noPrototype) {
        return new FunctionType(INT, params, names, params.stream().map(p -> p == INT ? "int" : "void *").toList(),
                "int", variadic, noPrototype);
    }

    @Test
    void shouldMakeParameterNamesJavaAcceptsAndGeneratedCodeDoesNotUse() {
        FunctionType f = fn(List.of(INT, INT, INT, INT, INT, new Pointer(INT)),
                List.of("class", "", "allocator", "n", "n", "x$"), false, false);
        assertEquals(List.of("class_", "x1", "allocator_", "n", "n_", "x$_"), TypeMapping.paramNames(f));
    }

    @Test
    void shouldSpellPrototypesAsCDeclaresThem() {
        assertEquals("int f(void)", Docs.prototype("f", fn(List.of(), List.of(), false, false)));
        assertEquals("int f()", Docs.prototype("f", fn(List.of(), List.of(), false, true)));
        assertEquals("int f(int n, void *, ...)",
                Docs.prototype("f", fn(List.of(INT, new Pointer(INT)), List.of("n", ""), true, false)));
        assertEquals("void (*cb)(int)", Docs.declare("void (*)(int)", "cb"));
        assertEquals("char name[16]", Docs.declare("char [16]", "name"));
    }

    @Test
    void shouldDescribeFunctionsWithTheHeaderClassLayouts() {
        TypeMapping types = new TypeMapping("h");
        assertEquals("FunctionDescriptor.of(\n            h.C_INT,\n            h.C_POINTER\n        )",
                types.descriptor(fn(List.of(new Pointer(INT)), List.of("p"), false, false)));
        assertEquals("FunctionDescriptor.ofVoid(\n        )", types.descriptor(new FunctionType(new Model.Void(),
                List.of(), List.of(), List.of(), "void", false, false)));
    }

    @Test
    void shouldWrapANoteWithinTheColumnLimitAndEscapeWhatWouldBreakTheComment() {
        String note = ("word ".repeat(60) + "ends */ here and @tags are literal").strip();
        String comment = Docs.snippet("    ", "int x", note);
        List<String> lines = comment.lines().toList();
        assertEquals(List.of("    /**", "     * {@snippet lang=c :", "     * int x", "     * }"), lines.subList(0, 4));
        assertTrue(lines.get(4).startsWith("     * <p>word word"), lines.get(4));
        assertEquals("     */", lines.getLast());
        for (String line : lines) {
            assertTrue(line.length() <= 116, line.length() + ": " + line);
        }
        assertTrue(comment.contains("ends *\\/ here") && comment.contains("{@literal @}tags"), comment);
        assertEquals(note.split(" ").length + 1, String.join(" ", lines.subList(4, lines.size() - 1))
                .replace("     * ", "").split(" ").length, "every word kept once");
    }

    @Test
    void shouldIndentOnlyLinesWithText() {
        assertEquals("  a\n\n  b\n", Text.indent("a\n\nb\n", "  "));
        assertEquals(List.of("aaa bb", "cccc", "d"), Text.wrap(List.of("aaa", "bb", "cccc", "d"), 0, 2, 6));
        assertEquals(List.of("toolongword", "x"), Text.wrap(List.of("toolongword", "x"), 0, 0, 5));
    }
}
