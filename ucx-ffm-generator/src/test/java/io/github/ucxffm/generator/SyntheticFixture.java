package io.github.ucxffm.generator;

import io.github.ucxffm.testsupport.ChildProcess;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Shared steps of the generator's end-to-end tests: the synthetic header and its C implementation (test resources
 * {@code synthetic/}), gcc, the generator, and javac for what it writes.
 */
final class SyntheticFixture {

    static final String PACKAGE = "synth";
    static final String HEADER_CLASS = "synthetic_h";

    /** Every symbol synthetic.h declares that the generator can bind, as --include options. */
    static final List<String> INCLUDES = List.of(
            "--include-function", "syn_status_of",
            "--include-function", "syn_status_code",
            "--include-function", "syn_point_add",
            "--include-function", "syn_vec3_scale",
            "--include-function", "syn_vec3_dot",
            "--include-function", "syn_apply_transform",
            "--include-function", "syn_complex_call",
            "--include-function", "syn_complex_fill",
            "--include-function", "syn_complex_verify",
            "--include-function", "syn_get_transform",
            "--include-function", "sum_ints",
            "--include-function", "noproto",
            "--include-function", "syn_count_chars",
            "--include-function", "syn_negate_via",
            "--include-function", "syn_make_handler",
            "--include-function", "syn_layout_table",
            "--include-constant", "SYN_OK",
            "--include-constant", "SYN_INPROGRESS",
            "--include-constant", "SYN_ERR_IO",
            "--include-constant", "SYN_ERR_LAST",
            "--include-constant", "SYN_FLAG_A",
            "--include-constant", "SYN_FLAG_B",
            "--include-constant", "SYN_SHIFT",
            "--include-constant", "SYN_NEGATIVE",
            "--include-constant", "SYN_BIG",
            "--include-constant", "SYN_UNSIGNED",
            "--include-constant", "SYN_LONG",
            "--include-constant", "SYN_TEXT",
            "--include-constant", "SYN_DOUBLE",
            "--include-constant", "SYN_FLOAT",
            "--include-constant", "SYN_EXPR",
            "--include-constant", "SYN_CHAR",
            "--include-struct", "syn_point",
            "--include-struct", "syn_vec3",
            "--include-struct", "syn_complex",
            "--include-struct", "syn_handler",
            "--include-union", "syn_value",
            "--include-typedef", "syn_status_t",
            "--include-typedef", "syn_point_t",
            "--include-typedef", "syn_vec3_t",
            "--include-typedef", "syn_transform_cb_t",
            "--include-typedef", "syn_complex_t",
            "--include-typedef", "syn_value_t",
            "--include-var", "syn_global_counter",
            "--include-var", "syn_global_transform",
            "--include-var", "syn_global_origin",
            "--include-var", "syn_global_status");

    private SyntheticFixture() {
    }

    /** Copies synthetic.h and synthetic.c into {@code dir}; returns the header's path. */
    static Path copySources(Path dir) {
        for (String name : List.of("synthetic.h", "synthetic.c")) {
            try (InputStream in = SyntheticFixture.class.getResourceAsStream("/synthetic/" + name)) {
                assertNotNull(in, "test resource synthetic/" + name + " is missing");
                Files.createDirectories(dir);
                Files.write(dir.resolve(name), in.readAllBytes());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return dir.resolve("synthetic.h").toAbsolutePath();
    }

    /** {@code gcc -shared -fPIC -o libsynthetic.so synthetic.c} in {@code dir}; returns the library's absolute path. */
    static Path compileLibrary(Path dir) {
        Path library = dir.resolve("libsynthetic.so").toAbsolutePath();
        run(dir, "gcc", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", library.toString(),
                dir.resolve("synthetic.c").toString());
        assertTrue(Files.isRegularFile(library), "gcc wrote no " + library);
        return library;
    }

    /** The generator's arguments for a full run over the synthetic header. */
    static List<String> generatorArgs(Path header, Path library, Path output) {
        List<String> args = new ArrayList<>(List.of("--output", output.toString(), "--target-package", PACKAGE,
                "-l", library.toString()));
        args.addAll(INCLUDES);
        args.add(header.toString());
        return args;
    }

    /** Compiles the generated sources under {@code sources} as the project compiles its own; fails on any warning. */
    static URLClassLoader compileAndLoad(Path sources, Path classes) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the test JVM has no system Java compiler");
        List<Path> files;
        try (Stream<Path> walk = Files.walk(sources)) {
            files = walk.filter(p -> p.toString().endsWith(".java")).sorted().toList();
            Files.createDirectories(classes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertTrue(!files.isEmpty(), "no Java sources under " + sources);
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
            List<String> options = List.of("--release", "22", "-Xlint:all,-restricted", "-Xdoclint:all,-missing",
                    "-Werror", "-proc:none", "-classpath", "", "-d", classes.toString());
            boolean ok = javac.getTask(null, fm, diagnostics, options, null, fm.getJavaFileObjectsFromPaths(files))
                    .call();
            StringBuilder report = new StringBuilder();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                report.append('\n').append(d.getKind()).append(' ')
                        .append(d.getSource() == null ? "" : d.getSource().getName() + ":" + d.getLineNumber())
                        .append(' ').append(d.getMessage(Locale.ROOT));
            }
            assertTrue(ok, "the generated Java does not compile:" + report);
            assertEquals("", report.toString(), "javac reports diagnostics for the generated Java");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            return new URLClassLoader(new URL[] {classes.toUri().toURL()}, SyntheticFixture.class.getClassLoader());
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every regular file below {@code root}, by relative path, with its bytes. */
    static Map<String, byte[]> tree(Path root) {
        Map<String, byte[]> out = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.filter(Files::isRegularFile).toList()) {
                out.put(root.relativize(p).toString(), Files.readAllBytes(p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static void run(Path dir, String... command) {
        ChildProcess p;
        try {
            p = ChildProcess.command(command).directory(dir).run(Duration.ofSeconds(60));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command[0], e);
        }
        assertEquals(0, p.exitCode(), String.join(" ", command) + " failed:\n" + p.output());
    }
}
