package io.github.ucxffm.generator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Command-line entry point: {@code java --enable-native-access=ALL-UNNAMED -jar ucx-ffm-generator.jar @args HEADER}.
 * Exit status 0 on success, 1 on bad input (with a one-line reason), 2 on an unexpected failure.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        if (args.length == 0 || List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.print(Options.USAGE);
            System.exit(args.length == 0 ? 1 : 0);
        }
        try {
            run(List.of(args));
        } catch (GeneratorException | UncheckedIOException e) {
            System.err.println("ucx-ffm-generator: " + e.getMessage());
            System.exit(1);
        }
    }

    /** Runs the generator; returns the files written (relative to the package folder) or the dump's text. */
    static Map<String, String> run(List<String> args) {
        Options options = Options.parse(args);
        try (LibClang clang = new LibClang(options.libclang)) {
            Parser parser = new Parser(clang, options.clangArgs);
            if (options.dumpIncludes != null) {
                Model.Unit unit = parser.parse(options.header,
                        file -> options.headerFilters.isEmpty() || options.headerFilters.stream().anyMatch(file::contains),
                        name -> true);
                String text = "# Symbols of " + Path.of(options.header).getFileName()
                        + ", one --include option a line, grouped by the header that declares them.\n"
                        + SymbolDump.dump(unit, options);
                writeString(options.dumpIncludes, text);
                return Map.of(options.dumpIncludes.toString(), text);
            }
            if (options.dumpRelease != null) {
                java.util.function.Predicate<String> wanted = file -> options.headerFilters.isEmpty()
                        || options.headerFilters.stream().anyMatch(file::contains);
                Model.Unit unit = parser.parse(options.header,
                        file -> wanted.test(file), name -> true);
                Release release = Release.of(unit, wanted, options.releaseLabel, options.releaseVersion);
                String base = Path.of(options.header).getFileName().toString().replaceAll("\\.h$", "");
                Path file = options.dumpRelease.resolve(base + "-" + release.version + ".txt");
                String text = release.text(Path.of(options.header).getFileName().toString());
                writeString(file, text);
                return Map.of(file.toString(), text);
            }
            Set<String> constants = new java.util.HashSet<>(options.includes.get(Options.Kind.CONSTANT));
            if (options.releaseVersion != null) {
                constants.add(options.releaseVersion);
            }
            Model.Unit unit = parser.parse(options.header, file -> true, constants::contains);
            Emitter emitter = new Emitter(options, unit, Release.readAll(options.releaseRecords));
            Map<String, String> files = emitter.render();
            for (String warning : emitter.warnings()) {
                System.err.println("ucx-ffm-generator: warning: " + warning);
            }
            Path dir = options.output;
            if (!options.targetPackage.isEmpty()) {
                dir = dir.resolve(options.targetPackage.replace('.', '/'));
            }
            deleteJavaFiles(dir);
            Emitter.write(dir, files);
            return files;
        }
    }

    private static void writeString(Path path, String text) {
        try {
            Path parent = path.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Files.writeString(path, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Old outputs go first, so that a symbol removed from the headers does not linger. */
    private static void deleteJavaFiles(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java") && Files.isRegularFile(p)).toList()) {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
