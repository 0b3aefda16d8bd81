package io.github.ucxffm.generator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Command-line options, spelled as jextract spells them so that an argument file reads the same for both tools.
 * {@code @file} arguments are expanded: one option per line, {@code #} starts a comment.
 */
final class Options {

    /** The kinds of symbol an argument file can include, with their option names. */
    enum Kind {
        FUNCTION("--include-function"),
        CONSTANT("--include-constant"),
        STRUCT("--include-struct"),
        UNION("--include-union"),
        TYPEDEF("--include-typedef"),
        VAR("--include-var");

        final String option;

        Kind(String option) {
            this.option = option;
        }
    }

    /** Declarations per header class part by default: jextract's split size. */
    static final int DEFAULT_DECLS_PER_HEADER = 1000;

    static final String USAGE = """
            usage: ucx-ffm-generator [options] HEADER
              --output DIR                 where to write the Java sources (the package folders go below it)
              -t, --target-package PKG     package of the generated classes
              --header-class-name NAME     name of the class holding functions, constants and typedef layouts
              -l, --library NAME           a library to look symbols up in, by name or path (repeatable)
              --library-hook CLASS         class with static beforeLoad() and describe(), called before the
                                           libraries load and in missing-symbol errors
              -I DIR, -D NAME[=VALUE]      passed to clang
              --include-function|-constant|-struct|-union|-typedef|-var NAME
                                           what to generate (at least one; nothing else is generated)
              --dump-includes FILE         write every symbol of the headers matched by --header-filter as an
                                           argument file, and generate nothing
              --header-filter TEXT         with --dump-includes or --dump-release: keep headers whose path
                                           contains TEXT (repeatable; --dump-includes groups headers in the
                                           order of the filters that keep them)
              --dump-release DIR           (ucx-ffm extension) write the public surface of the headers matched
                                           by --header-filter (functions, constants with type and value,
                                           records with size and field offsets, typedefs, variables) to
                                           DIR/NAME-VERSION.txt (NAME: the header's base name), and generate
                                           nothing
              --release-version MACRO      (ucx-ffm extension) the string macro naming the headers' release
                                           (MAJOR.MINOR.PATCH); needed by --dump-release
              --release-label TEXT         (ucx-ffm extension) how messages name the library (default: the
                                           header's base name in capitals)
              --release-record FILE        (ucx-ffm extension) a record written by --dump-release (repeatable;
                                           relative to the argument file that names it): symbols that not every
                                           recorded release has get a note in their Javadoc and in the
                                           missing-symbol error, and a constant whose value differs between
                                           releases is resolved when first used from the loaded library's
                                           version, which the --library-hook class gives by a static int
                                           version() (MAJOR << 16 | MINOR << 8 | PATCH)
              --libclang PATH              the libclang shared library (else UCXFFM_LIBCLANG, else the usual paths)
              --decls-per-header N         (ucx-ffm extension) at most N declarations per header class part;
                                           more go to NAME_1, NAME_2, ... up the superclass chain to NAME$shared
                                           (N >= 1; default 1000, as jextract splits)
              @FILE                        read more options from FILE
            """;

    Path output;
    String targetPackage = "";
    String headerClassName;
    final List<String> libraries = new ArrayList<>();
    String libraryHook;
    final List<String> clangArgs = new ArrayList<>();
    final Map<Kind, Set<String>> includes = new EnumMap<>(Kind.class);
    Path dumpIncludes;
    Path dumpRelease;
    String releaseVersion;
    String releaseLabel;
    final List<Path> releaseRecords = new ArrayList<>();
    final List<String> headerFilters = new ArrayList<>();
    Optional<Path> libclang = Optional.empty();
    int declsPerHeader = DEFAULT_DECLS_PER_HEADER;
    String header;

    Options() {
        for (Kind kind : Kind.values()) {
            includes.put(kind, new LinkedHashSet<>());
        }
    }

    static Options parse(List<String> rawArgs) {
        List<String> args = expand(rawArgs, Path.of("."));
        Options o = new Options();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            Kind kind = kindOf(arg);
            if (kind != null) {
                o.includes.get(kind).add(value(args, ++i, arg));
                continue;
            }
            switch (arg) {
                case "--output", "-o" -> o.output = Path.of(value(args, ++i, arg));
                case "-t", "--target-package" -> o.targetPackage = value(args, ++i, arg);
                case "--header-class-name" -> o.headerClassName = value(args, ++i, arg);
                case "-l", "--library" -> o.libraries.add(value(args, ++i, arg));
                case "--library-hook" -> o.libraryHook = value(args, ++i, arg);
                case "-I" -> o.clangArgs.add("-I" + value(args, ++i, arg));
                case "-D" -> o.clangArgs.add("-D" + value(args, ++i, arg));
                case "--dump-includes" -> o.dumpIncludes = Path.of(value(args, ++i, arg));
                case "--header-filter" -> o.headerFilters.add(value(args, ++i, arg));
                case "--dump-release" -> o.dumpRelease = Path.of(value(args, ++i, arg));
                case "--release-version" -> o.releaseVersion = value(args, ++i, arg);
                case "--release-label" -> o.releaseLabel = value(args, ++i, arg);
                case "--release-record" -> o.releaseRecords.add(Path.of(value(args, ++i, arg)));
                case "--libclang" -> o.libclang = Optional.of(Path.of(value(args, ++i, arg)));
                case "--decls-per-header" -> o.declsPerHeader = positive(value(args, ++i, arg), arg);
                default -> {
                    if (arg.startsWith("-I") || arg.startsWith("-D")) {
                        o.clangArgs.add(arg);
                    } else if (arg.startsWith("-")) {
                        throw new GeneratorException("unknown option " + arg + "\n" + USAGE);
                    } else if (o.header != null) {
                        throw new GeneratorException("more than one header given: " + o.header + " and " + arg);
                    } else {
                        o.header = arg;
                    }
                }
            }
        }
        if (o.header == null) {
            throw new GeneratorException("no header given\n" + USAGE);
        }
        if (o.headerClassName == null) {
            String base = Path.of(o.header).getFileName().toString().replaceAll("\\.h$", "");
            o.headerClassName = base.replaceAll("[^A-Za-z0-9_]", "_") + "_h";
        }
        if (o.releaseLabel == null) {
            o.releaseLabel = Path.of(o.header).getFileName().toString().replaceAll("\\.h$", "")
                    .toUpperCase(java.util.Locale.ROOT);
        }
        if (o.dumpRelease != null && o.releaseVersion == null) {
            throw new GeneratorException("--dump-release needs --release-version MACRO to name the release");
        }
        if (!o.releaseRecords.isEmpty() && o.libraryHook == null) {
            throw new GeneratorException("--release-record needs a --library-hook class whose static int version() "
                    + "gives the loaded library's release");
        }
        if (o.dumpIncludes == null && o.dumpRelease == null) {
            if (o.output == null) {
                throw new GeneratorException("--output is required\n" + USAGE);
            }
            if (o.includes.values().stream().allMatch(Set::isEmpty)) {
                throw new GeneratorException("nothing to generate: give --include-* options (see --dump-includes)");
            }
        }
        return o;
    }

    private static Kind kindOf(String option) {
        for (Kind kind : Kind.values()) {
            if (kind.option.equals(option)) {
                return kind;
            }
        }
        return null;
    }

    private static String value(List<String> args, int i, String option) {
        if (i >= args.size()) {
            throw new GeneratorException(option + " needs a value");
        }
        return args.get(i);
    }

    private static int positive(String text, String option) {
        int n;
        try {
            n = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new GeneratorException(option + " needs a whole number >= 1, not \"" + text + "\"");
        }
        if (n < 1) {
            throw new GeneratorException(option + " needs a whole number >= 1, not " + n);
        }
        return n;
    }

    private static List<String> expand(List<String> args, Path base) {
        List<String> out = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith("@")) {
                Path file = base.resolve(arg.substring(1));
                List<String> lines;
                try {
                    lines = Files.readAllLines(file);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read argument file " + file, e);
                }
                List<String> words = new ArrayList<>();
                Path parent = file.toAbsolutePath().getParent();
                for (String line : lines) {
                    String trimmed = line.strip();
                    if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                        continue;
                    }
                    for (String word : trimmed.split("\\s+")) {
                        boolean recordPath = !words.isEmpty() && words.getLast().equals("--release-record");
                        words.add(recordPath ? parent.resolve(word).normalize().toString() : word);
                    }
                }
                out.addAll(expand(words, parent));
            } else {
                out.add(arg);
            }
        }
        return out;
    }
}
