package io.github.ucxffm.generator;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Inputs the generator must refuse, with a message that says what is wrong and how to fix it. */
class GeneratorErrorsTest {

    @TempDir
    static Path work;

    private static Path header;

    @BeforeAll
    static void copyHeader() {
        header = SyntheticFixture.copySources(work.resolve("c"));
    }

    @Test
    void shouldNameAnIncludedFunctionThatDoesNotExist() {
        String message = failure("--include-function", "syn_no_such_function", "--include-function", "noproto");
        assertContains(message, "--include-function syn_no_such_function");
        assertFalse(message.contains("noproto"), message);
    }

    @Test
    void shouldNameEveryMissingSymbolOfEveryKind() {
        String message = failure("--include-struct", "syn_nothing", "--include-union", "syn_point",
                "--include-typedef", "syn_nope_t", "--include-var", "syn_no_var", "--include-constant", "SYN_NONE");
        assertContains(message, "--include-struct syn_nothing");
        assertContains(message, "--include-union syn_point"); // a struct is not a union
        assertContains(message, "--include-typedef syn_nope_t");
        assertContains(message, "--include-var syn_no_var");
        assertContains(message, "--include-constant SYN_NONE");
    }

    @Test
    void shouldTreatStaticInlineFunctionAsUndeclared() {
        assertContains(failure("--include-function", "syn_inline_twice"), "--include-function syn_inline_twice");
    }

    @Test
    void shouldTreatFunctionLikeAndNonConstantMacrosAsUndeclared() {
        String message = failure("--include-constant", "SYN_MAX", "--include-constant", "SYN_NOT_CONST",
                "--include-constant", "SYN_SHIFT");
        assertContains(message, "--include-constant SYN_MAX");
        assertContains(message, "--include-constant SYN_NOT_CONST");
        assertFalse(message.contains("SYN_SHIFT"), message);
    }

    @Test
    void shouldRequireStructPassedByValueToFunction() {
        String message = failure("--include-function", "syn_point_add");
        assertContains(message, "syn_point_add");
        assertContains(message, "add --include-struct syn_point");
    }

    @Test
    void shouldRequireStructReturnedByValueFromFunction() {
        String message = failure("--include-function", "syn_make_handler", "--include-struct", "syn_point");
        assertContains(message, "syn_make_handler");
        assertContains(message, "add --include-struct syn_handler");
    }

    @Test
    void shouldRequireStructPassedByValueToCallbackTypedef() {
        String message = failure("--include-typedef", "syn_transform_cb_t");
        assertContains(message, "syn_transform_cb_t");
        assertContains(message, "add --include-struct syn_point");
    }

    @Test
    void shouldRequireStructPassedByValueToFunctionPointerField() {
        String message = failure("--include-struct", "syn_handler");
        assertContains(message, "struct syn_handler.fn uses struct syn_point by value");
        assertContains(message, "add --include-struct syn_point");
    }

    @Test
    void shouldRequireStructEmbeddedInArrayField() {
        String message = failure("--include-struct", "syn_complex");
        assertContains(message, "struct syn_complex.corners uses struct syn_point by value");
        assertContains(message, "add --include-struct syn_point");
    }

    @Test
    void shouldRequireStructEmbeddedInUnion() {
        String message = failure("--include-union", "syn_value");
        assertContains(message, "union syn_value.point uses struct syn_point by value");
        assertContains(message, "add --include-struct syn_point");
    }

    private static int runs;

    /** Runs the generator with {@code includes}; returns the message of the GeneratorException it must throw. */
    private static String failure(String... includes) {
        Path output = work.resolve("out" + runs++);
        List<String> args = new ArrayList<>(List.of("--output", output.toString(), "-t", SyntheticFixture.PACKAGE,
                "-l", "libsynthetic.so"));
        args.addAll(List.of(includes));
        args.add(header.toString());
        GeneratorException e = assertThrows(GeneratorException.class, () -> Main.run(args));
        assertFalse(Files.exists(output), "a failed run must write nothing, but " + output + " exists");
        return e.getMessage();
    }

    private static void assertContains(String message, String part) {
        assertTrue(message.contains(part), "expected \"" + part + "\" in: " + message);
    }
}
