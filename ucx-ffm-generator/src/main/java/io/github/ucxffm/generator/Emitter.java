package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Array;
import io.github.ucxffm.generator.Model.CType;
import io.github.ucxffm.generator.Model.Constant;
import io.github.ucxffm.generator.Model.EnumRef;
import io.github.ucxffm.generator.Model.Field;
import io.github.ucxffm.generator.Model.Function;
import io.github.ucxffm.generator.Model.FunctionType;
import io.github.ucxffm.generator.Model.Pointer;
import io.github.ucxffm.generator.Model.Prim;
import io.github.ucxffm.generator.Model.Primitive;
import io.github.ucxffm.generator.Model.Record;
import io.github.ucxffm.generator.Model.RecordRef;
import io.github.ucxffm.generator.Model.Typedef;
import io.github.ucxffm.generator.Model.TypedefDecl;
import io.github.ucxffm.generator.Model.Unit;
import io.github.ucxffm.generator.Model.Unsupported;
import io.github.ucxffm.generator.Model.Variable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Writes the jextract-shaped Java sources for the selected part of a {@link Unit}.
 */
final class Emitter {

    private static final Set<String> JAVA_RESERVED = Set.of("abstract", "assert", "boolean", "break", "byte", "case",
            "catch", "char", "class", "const", "continue", "default", "do", "double", "else", "enum", "extends",
            "final", "finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",
            "interface", "long", "native", "new", "package", "private", "protected", "public", "return", "short",
            "static", "strictfp", "super", "switch", "synchronized", "this", "throw", "throws", "transient", "try",
            "void", "volatile", "while", "true", "false", "null", "_", "yield", "record", "var");

    private static final String IMPORTS = """
            import java.lang.foreign.*;
            import java.lang.invoke.*;
            import java.util.*;
            import java.util.function.*;

            import static java.lang.foreign.MemoryLayout.PathElement.*;
            import static java.lang.foreign.ValueLayout.*;
            """;

    private final Options options;
    private final Unit unit;
    private final String h;
    /** Output file name (relative to the package folder) to contents, sorted for determinism. */
    private final Map<String, String> files = new TreeMap<>();
    private final Set<Record> selectedRecords = new HashSet<>();
    private final List<String> warnings = new ArrayList<>();
    /** The recorded releases, oldest first (empty without --release-record). */
    private final List<Release> releases;
    /** For each generated name that some recorded releases lack: the releases that have it, oldest first. */
    private final Map<String, List<Release>> partial = new TreeMap<>();
    /** The release the headers name through --release-version, or null. */
    private final String headersRelease;

    Emitter(Options options, Unit unit) {
        this(options, unit, List.of());
    }

    Emitter(Options options, Unit unit, List<Release> releases) {
        this.options = options;
        this.unit = unit;
        this.h = options.headerClassName;
        this.releases = List.copyOf(releases);
        String version = null;
        for (Constant c : unit.constants) {
            if (c.name().equals(options.releaseVersion) && c.value() instanceof String s) {
                version = s;
            }
        }
        this.headersRelease = version;
    }

    List<String> warnings() {
        return warnings;
    }

    /** Renders every file; returns file name to contents. */
    Map<String, String> render() {
        Map<Options.Kind, Set<String>> inc = options.includes;
        Set<String> found = new HashSet<>();

        // Records: by tag, or through a typedef that names an anonymous record.
        Map<String, TypedefDecl> typedefsByName = new LinkedHashMap<>();
        for (TypedefDecl t : unit.typedefs) {
            typedefsByName.put(t.name(), t);
        }
        for (Record r : unit.records) {
            Options.Kind kind = r.union ? Options.Kind.UNION : Options.Kind.STRUCT;
            boolean wanted = !r.anonymous() ? inc.get(kind).contains(r.tag)
                    : r.javaName != null && inc.get(Options.Kind.TYPEDEF).contains(r.javaName);
            if (wanted) {
                selectedRecords.add(r);
                found.add(kind.option + " " + (r.anonymous() ? r.javaName : r.tag));
                if (r.anonymous()) {
                    found.add(Options.Kind.TYPEDEF.option + " " + r.javaName);
                }
            }
        }

        List<Member> members = new ArrayList<>();
        // typedefs
        for (TypedefDecl t : unit.typedefs) {
            if (!inc.get(Options.Kind.TYPEDEF).contains(t.name())) {
                continue;
            }
            found.add(Options.Kind.TYPEDEF.option + " " + t.name());
            typedef(t, members);
        }
        for (Function f : unit.functions) {
            if (inc.get(Options.Kind.FUNCTION).contains(f.name())) {
                found.add(Options.Kind.FUNCTION.option + " " + f.name());
                if (supported(f.type(), "function " + f.name())) {
                    requireByValue(f.type(), "function " + f.name());
                    members.add(f.type().variadic() ? variadicFunction(f) : function(f));
                }
            }
        }
        for (Variable v : unit.variables) {
            if (inc.get(Options.Kind.VAR).contains(v.name())) {
                found.add(Options.Kind.VAR.option + " " + v.name());
                if (supported(v.type(), "variable " + v.name())) {
                    requireByValue(v.type(), "variable " + v.name());
                    members.add(variable(v));
                }
            }
        }
        for (Constant c : unit.constants) {
            if (inc.get(Options.Kind.CONSTANT).contains(c.name())) {
                found.add(Options.Kind.CONSTANT.option + " " + c.name());
                members.add(constant(c));
            }
        }
        List<String> missing = new ArrayList<>();
        for (Options.Kind kind : Options.Kind.values()) {
            for (String name : inc.get(kind)) {
                if (!found.contains(kind.option + " " + name)) {
                    missing.add(kind.option + " " + name);
                }
            }
        }
        if (!missing.isEmpty()) {
            throw new GeneratorException("the headers declare nothing for " + missing.size() + " included name(s): "
                    + String.join(", ", missing));
        }

        for (Record r : unit.records) {
            if (selectedRecords.contains(r)) {
                for (Field f : r.fields) {
                    requireByValueField(f, r.cSpelling + "." + f.name());
                }
                files.put(r.javaName + ".java", fileOf(recordClass(r, false)));
            }
        }
        headerClasses(members);
        return files;
    }

    // ---- releases ---------------------------------------------------------------------------------------------

    /** The recorded releases that have {@code name} when some lack it (remembered for the shared class), else null. */
    private List<Release> partialReleases(String name) {
        List<Release> has = new ArrayList<>();
        for (Release r : releases) {
            if (r.has(name)) {
                has.add(r);
            }
        }
        if (has.isEmpty() || has.size() == releases.size()) {
            return null; // in every recorded release, or in none (not part of the recorded surface)
        }
        partial.put(name, has);
        return has;
    }

    private String label() {
        return options.releaseLabel;
    }

    /** "UCX 1.18.1 and later have it, UCX 1.13.1 lacks it", as the shared class also words it at run time. */
    private String availabilityText(List<Release> has) {
        List<String> yes = has.stream().map(r -> r.version).toList();
        List<String> no = releases.stream().filter(r -> !has.contains(r)).map(r -> r.version).toList();
        boolean suffix = releases.subList(releases.size() - has.size(), releases.size()).equals(has);
        String haveIt = suffix && has.size() > 1 ? label() + " " + yes.getFirst() + " and later have it"
                : label() + " " + String.join(", ", yes) + (yes.size() > 1 ? " have it" : " has it");
        return haveIt + ", " + label() + " " + String.join(", ", no) + (no.size() > 1 ? " lack it" : " lacks it");
    }

    /** The Javadoc paragraph of a name that some recorded releases lack; empty for the others. */
    private String releaseNote(String name) {
        List<Release> has = partialReleases(name);
        if (has == null) {
            return "";
        }
        boolean suffix = releases.subList(releases.size() - has.size(), releases.size()).equals(has);
        String lead = suffix ? "Since " + label() + " " + has.getFirst().majorMinor() + " at the latest"
                : "Not in every " + label() + " release";
        return lead + " (recorded releases: " + availabilityText(has) + ").";
    }

    // ---- selection checks -----------------------------------------------------------------------------------------

    private boolean supported(CType type, String what) {
        String bad = unsupported(type, new HashSet<>());
        if (bad != null) {
            warnings.add("skipped " + what + ": its type uses " + bad + ", which Java cannot express");
            return false;
        }
        return true;
    }

    private String unsupported(CType type, Set<Record> visiting) {
        return switch (type) {
            case Unsupported u -> u.spelling();
            case Pointer p -> p.pointee() instanceof FunctionType ? unsupported(p.pointee(), visiting) : null;
            case Array a -> unsupported(a.element(), visiting);
            case Typedef t -> unsupported(t.underlying(), visiting);
            case EnumRef e -> unsupported(e.integer(), visiting);
            case FunctionType f -> {
                String r = unsupported(f.result(), visiting);
                for (CType p : f.params()) {
                    r = r != null ? r : unsupported(p, visiting);
                }
                yield r;
            }
            case RecordRef rr -> {
                if (!visiting.add(rr.record())) {
                    yield null;
                }
                String r = null;
                for (Field f : rr.record().fields) {
                    r = r != null || f.bitField() ? r : unsupported(f.type(), visiting);
                }
                yield r;
            }
            default -> null;
        };
    }

    /** A record used by value must be generated too (pointers to records need nothing). */
    private void requireByValue(CType type, String user) {
        switch (type) {
            case RecordRef rr -> {
                Record r = rr.record();
                if (r.enclosing != null && r.anonymous()) {
                    for (Field f : r.fields) {
                        requireByValueField(f, user);
                    }
                } else if (!selectedRecords.contains(r)) {
                    String option = r.anonymous() ? "--include-typedef " + r.javaName
                            : (r.union ? "--include-union " : "--include-struct ") + r.tag;
                    throw new GeneratorException(user + " uses " + (r.cSpelling.isEmpty() ? r.javaName : r.cSpelling)
                            + " by value; add " + option + " to the argument file");
                } else if (!r.complete) {
                    throw new GeneratorException(user + " uses incomplete " + r.cSpelling + " by value");
                }
            }
            case Typedef t -> requireByValue(t.underlying(), user);
            case Array a -> requireByValue(a.element(), user);
            case FunctionType f -> {
                requireByValue(f.result(), user);
                f.params().forEach(p -> requireByValue(p, user));
            }
            default -> {
            }
        }
    }

    /** As {@link #requireByValue}; a function-pointer field also gets a class whose signature uses its records. */
    private void requireByValueField(Field f, String user) {
        requireByValue(f.type(), user);
        if (!f.bitField() && f.type() instanceof Pointer(FunctionType fp) && unsupported(fp, new HashSet<>()) == null) {
            requireByValue(fp, user);
        }
    }

    // ---- type mapping ---------------------------------------------------------------------------------------------

    static CType resolve(CType type) {
        CType t = type;
        while (true) {
            if (t instanceof Typedef td) {
                t = td.underlying();
            } else if (t instanceof EnumRef e) {
                t = e.integer();
            } else {
                return t;
            }
        }
    }

    private String carrier(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> p.prim().carrier;
            case Model.Void v -> "void";
            default -> "MemorySegment";
        };
    }

    private String layoutType(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> p.prim().layoutType;
            case Pointer p -> "AddressLayout";
            case RecordRef r -> "GroupLayout";
            case Array a -> "SequenceLayout";
            default -> throw new GeneratorException("no layout for " + type);
        };
    }

    private String layout(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> h + "." + p.prim().layoutName;
            case Pointer p -> h + ".C_POINTER";
            case RecordRef r -> className(r.record()) + ".layout()";
            case Array a -> "MemoryLayout.sequenceLayout(" + Math.max(0, a.count()) + ", " + layout(a.element()) + ")";
            default -> throw new GeneratorException("no layout for " + type);
        };
    }

    private static long sizeOf(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> switch (p.prim()) {
                case BOOL, CHAR -> 1;
                case SHORT -> 2;
                case INT, FLOAT -> 4;
                case LONG, LONG_LONG, DOUBLE -> 8;
            };
            case Pointer p -> 8;
            case RecordRef r -> r.record().size;
            case Array a -> Math.max(0, a.count()) * sizeOf(a.element());
            default -> throw new GeneratorException("no size for " + type);
        };
    }

    private static long alignOf(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> sizeOf(p);
            case Pointer p -> 8;
            case RecordRef r -> r.record().align;
            case Array a -> alignOf(a.element());
            default -> throw new GeneratorException("no alignment for " + type);
        };
    }

    /** The Java class of a record: a nested class for an anonymous record named by a field. */
    private String className(Record r) {
        if (r.anonymous() && r.enclosing != null) {
            return className(owner(r.enclosing)) + "." + r.javaName;
        }
        return r.javaName;
    }

    /** Anonymous members are flattened into the class of the nearest record that has a class. */
    private static Record owner(Record r) {
        Record o = r;
        while (o.enclosing != null && isAnonymousMember(o)) {
            o = o.enclosing;
        }
        return o;
    }

    private static boolean isAnonymousMember(Record r) {
        if (r.enclosing == null) {
            return false;
        }
        for (Field f : r.enclosing.fields) {
            if (f.anonymousMember() && f.type() instanceof RecordRef(Record m) && m == r) {
                return true;
            }
        }
        return false;
    }

    private String descriptor(FunctionType f) {
        StringBuilder sb = new StringBuilder();
        List<String> args = new ArrayList<>();
        for (CType p : f.params()) {
            args.add(layout(p));
        }
        if (resolve(f.result()) instanceof Model.Void) {
            sb.append("FunctionDescriptor.ofVoid(");
        } else {
            sb.append("FunctionDescriptor.of(\n            ").append(layout(f.result()));
            if (!args.isEmpty()) {
                sb.append(",");
            }
        }
        for (int i = 0; i < args.size(); i++) {
            sb.append("\n            ").append(args.get(i)).append(i + 1 < args.size() ? "," : "");
        }
        sb.append("\n        )");
        return sb.toString();
    }

    static String javaName(String cName) {
        return JAVA_RESERVED.contains(cName) ? cName + "_" : cName;
    }

    private static List<String> paramNames(FunctionType f) {
        List<String> names = new ArrayList<>();
        Set<String> used = new HashSet<>();
        for (int i = 0; i < f.params().size(); i++) {
            String n = i < f.paramNames().size() ? f.paramNames().get(i) : "";
            n = n.isEmpty() ? "x" + i : javaName(n);
            while (!used.add(n) || n.equals("allocator") || n.endsWith("$")) {
                n = n + "_";
            }
            names.add(n);
        }
        return names;
    }

    private boolean returnsRecord(FunctionType f) {
        return resolve(f.result()) instanceof RecordRef;
    }

    private String parameterList(FunctionType f, List<String> names, boolean leadingAllocator) {
        List<String> ps = new ArrayList<>();
        if (leadingAllocator) {
            ps.add("SegmentAllocator allocator");
        }
        for (int i = 0; i < f.params().size(); i++) {
            ps.add(carrier(f.params().get(i)) + " " + names.get(i));
        }
        return String.join(", ", ps);
    }

    // ---- C text for Javadoc ---------------------------------------------------------------------------------------

    /** Declares {@code name} with the C type spelled {@code spelling} (arrays and function pointers wrap the name). */
    static String declare(String rawSpelling, String name) {
        String spelling = cleanSpelling(rawSpelling);
        if (spelling.contains("(*)")) {
            return spelling.replaceFirst("\\(\\*\\)", "(*" + name + ")");
        }
        int bracket = spelling.indexOf('[');
        if (bracket >= 0) {
            return spelling.substring(0, bracket).stripTrailing() + " " + name + spelling.substring(bracket);
        }
        return spelling + " " + name;
    }

    private static final java.util.regex.Pattern UNNAMED = java.util.regex.Pattern.compile(
            "\\(unnamed (struct|union|enum) at ([^:)]+):(\\d+):(\\d+)\\)");

    /** clang spells anonymous types with the absolute header path; keep the output the same on every machine. */
    static String cleanSpelling(String spelling) {
        java.util.regex.Matcher m = UNNAMED.matcher(spelling);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, java.util.regex.Matcher.quoteReplacement("(unnamed " + m.group(1) + " at "
                    + shortPath(m.group(2)) + ":" + m.group(3) + ":" + m.group(4) + ")"));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    static String prototype(String name, FunctionType f) {
        List<String> ps = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++) {
            String n = i < f.paramNames().size() ? f.paramNames().get(i) : "";
            ps.add(n.isEmpty() ? cleanSpelling(f.paramSpellings().get(i)) : declare(f.paramSpellings().get(i), n));
        }
        if (f.variadic()) {
            ps.add("...");
        }
        String params = ps.isEmpty() ? (f.noPrototype() ? "" : "void") : String.join(", ", ps);
        return declare(f.resultSpelling(), name + "(" + params + ")");
    }

    private static String snippet(String indent, String c) {
        return snippet(indent, c, "");
    }

    /** A C snippet, then {@code note} (plain text, wrapped) as a paragraph when it is not empty. */
    private static String snippet(String indent, String c, String note) {
        StringBuilder sb = new StringBuilder();
        sb.append(indent).append("/**\n");
        sb.append(indent).append(" * {@snippet lang=c :\n");
        for (String line : c.split("\n")) {
            sb.append(indent).append(" * ").append(escapeDoc(line)).append('\n');
        }
        sb.append(indent).append(" * }\n");
        if (!note.isEmpty()) {
            String prefix = "<p>";
            StringBuilder line = new StringBuilder();
            for (String word : escapeDoc(note).split(" ")) {
                if (!line.isEmpty() && indent.length() + 3 + line.length() + 1 + word.length() > 116) {
                    sb.append(indent).append(" * ").append(line).append('\n');
                    line.setLength(0);
                }
                line.append(line.isEmpty() ? prefix : " ").append(word);
                prefix = "";
            }
            sb.append(indent).append(" * ").append(line).append('\n');
        }
        sb.append(indent).append(" */\n");
        return sb.toString();
    }

    private static String doc(String indent, String text, String c) {
        return doc(indent, text, c, "");
    }

    private static String doc(String indent, String text, String c, String note) {
        String snippet = snippet(indent, c, note);
        int afterOpening = indent.length() + 4;
        return snippet.substring(0, afterOpening) + indent + " * " + text + "\n" + snippet.substring(afterOpening);
    }

    private static String escapeDoc(String s) {
        return s.replace("*/", "*\\/").replace("@", "{@literal @}");
    }

    private String fileOf(String body) {
        StringBuilder sb = new StringBuilder();
        sb.append("// Generated by ucx-ffm-generator from ").append(Path.of(options.header).getFileName())
                .append(". Do not edit: regenerate.\n\n");
        if (!options.targetPackage.isEmpty()) {
            sb.append("package ").append(options.targetPackage).append(";\n\n");
        }
        sb.append(IMPORTS).append('\n').append(body);
        return sb.toString();
    }

    // ---- header class members -------------------------------------------------------------------------------------

    /** One declaration of the header class. */
    private record Member(String text) {
    }

    private void typedef(TypedefDecl t, List<Member> members) {
        CType u = t.underlying();
        if (u instanceof RecordRef(Record r)) {
            if (r.anonymous() && t.name().equals(r.javaName)) {
                return; // the record class itself carries this name
            }
            if (t.name().equals(r.javaName) || !r.complete) {
                return; // typedef struct foo foo; or an opaque type: C code only ever holds pointers to it
            }
            if (!selectedRecords.contains(r)) {
                throw new GeneratorException("typedef " + t.name() + " names " + r.cSpelling
                        + ", which is not generated; add it to the argument file");
            }
            files.put(t.name() + ".java", fileOf(snippet("", "typedef " + r.cSpelling + " " + t.name(),
                    releaseNote(t.name())) + """
                    public class %1$s extends %2$s {

                        %1$s() {
                            // Should not be called directly
                        }
                    }
                    """.formatted(t.name(), className(r))));
            return;
        }
        if (u instanceof Typedef(String base, CType baseType) && isClassTypedef(baseType)
                && options.includes.get(Options.Kind.TYPEDEF).contains(base)) {
            files.put(t.name() + ".java", fileOf(snippet("", "typedef " + base + " " + t.name(),
                    releaseNote(t.name())) + """
                    public class %1$s extends %2$s {

                        %1$s() {
                            // Should not be called directly
                        }
                    }
                    """.formatted(t.name(), base)));
            return;
        }
        FunctionType fp = functionPointer(u);
        if (fp != null) {
            if (!supported(fp, "typedef " + t.name())) {
                return;
            }
            requireByValue(fp, "typedef " + t.name());
            files.put(t.name() + ".java", fileOf(functionPointerClass(t.name(), fp, "",
                    "typedef " + prototype("(*" + t.name() + ")", fp))));
            return;
        }
        CType resolved = resolve(u);
        if (resolved instanceof Model.Void || resolved instanceof Unsupported || resolved instanceof FunctionType
                || (resolved instanceof RecordRef)) {
            warnings.add("skipped typedef " + t.name() + ": nothing to generate for it");
            return;
        }
        if (!supported(u, "typedef " + t.name())) {
            return;
        }
        requireByValue(u, "typedef " + t.name());
        members.add(new Member(snippet("    ", "typedef " + spellingOf(u) + " " + t.name(), releaseNote(t.name()))
                + "    public static final " + layoutType(u) + " " + t.name() + " = " + layout(u) + ";\n"));
    }

    private static boolean isClassTypedef(CType t) {
        CType u = t;
        while (u instanceof Typedef td) {
            u = td.underlying();
        }
        return u instanceof RecordRef || functionPointer(u) != null;
    }

    private static String spellingOf(CType t) {
        return switch (t) {
            case Typedef td -> td.name();
            case EnumRef e -> e.name().isEmpty() ? "enum" : "enum " + e.name();
            case Primitive p -> p.prim().name().toLowerCase().replace('_', ' ');
            case Pointer p -> spellingOf(p.pointee()) + " *";
            case RecordRef r -> r.record().cSpelling;
            case Array a -> spellingOf(a.element()) + "[" + (a.count() < 0 ? "" : a.count()) + "]";
            case Model.Void v -> "void";
            default -> t.toString();
        };
    }

    static FunctionType functionPointer(CType t) {
        if (t instanceof Pointer(FunctionType f)) {
            return f;
        }
        if (t instanceof FunctionType f) {
            return f;
        }
        if (t instanceof Pointer(Typedef td) && td.underlying() instanceof FunctionType f) {
            return f;
        }
        return null;
    }

    private Member function(Function fn) {
        FunctionType f = fn.type();
        String n = fn.name();
        String proto = prototype(n, f);
        List<String> names = paramNames(f);
        boolean alloc = returnsRecord(f);
        String ret = carrier(f.result());
        StringBuilder args = new StringBuilder();
        if (alloc) {
            args.append("allocator");
        }
        for (String name : names) {
            if (!args.isEmpty()) {
                args.append(", ");
            }
            args.append(name);
        }
        String call = ret.equals("void") ? "mh$.invokeExact(" + args + ");"
                : "return (" + ret + ") mh$.invokeExact(" + args + ");";
        String text = """

                    private static class %1$s$ {
                        public static final FunctionDescriptor DESC = %2$s;

                        public static final MemorySegment ADDR = %3$s.findOrNull("%1$s");

                        public static final MethodHandle HANDLE = %3$s.downcallHandle("%1$s", ADDR, DESC);
                    }

                %4$s    public static FunctionDescriptor %1$s$descriptor() {
                        return %1$s$.DESC;
                    }

                %5$s    public static MethodHandle %1$s$handle() {
                        return %1$s$.HANDLE;
                    }

                %6$s    public static MemorySegment %1$s$address() {
                        return %3$s.requireAddress(%1$s$.ADDR, "%1$s");
                    }

                %7$s    public static %8$s %1$s(%9$s) {
                        var mh$ = %1$s$.HANDLE;
                        try {
                            %10$s
                        } catch (Error | RuntimeException ex$) {
                            throw ex$;
                        } catch (Throwable ex$) {
                            throw new AssertionError("should not reach here", ex$);
                        }
                    }
                """.formatted(n, descriptor(f), h,
                doc("    ", "Function descriptor for:", proto),
                doc("    ", "Downcall method handle for:", proto),
                doc("    ", "Address for:", proto),
                snippet("    ", proto, releaseNote(n)), ret, parameterList(f, names, alloc), call);
        return new Member(text);
    }

    private Member variadicFunction(Function fn) {
        FunctionType f = fn.type();
        String n = fn.name();
        String proto = prototype(n, f);
        List<String> names = paramNames(f);
        boolean alloc = returnsRecord(f);
        String ret = carrier(f.result());
        String params = parameterList(f, names, alloc);
        String vaName = "x" + names.size();
        while (names.contains(vaName)) {
            vaName += "_";
        }
        params = params.isEmpty() ? "Object... " + vaName : params + ", Object... " + vaName;
        StringBuilder args = new StringBuilder();
        if (alloc) {
            args.append("allocator, ");
        }
        for (String name : names) {
            args.append(name).append(", ");
        }
        args.append(vaName);
        String call = ret.equals("void") ? "spreader.invokeExact(" + args + ");"
                : "return (" + ret + ") spreader.invokeExact(" + args + ");";
        String text = """

                %1$s    public static class %2$s {
                        private static final FunctionDescriptor BASE_DESC = %3$s;

                        private static final MemorySegment ADDR = %4$s.findOrNull("%2$s");

                        private final MethodHandle handle;
                        private final FunctionDescriptor descriptor;
                        private final MethodHandle spreader;

                        private %2$s(MethodHandle handle, FunctionDescriptor descriptor, MethodHandle spreader) {
                            this.handle = handle;
                            this.descriptor = descriptor;
                            this.spreader = spreader;
                        }

                        /**
                         * Variadic invoker factory for:
                         * {@snippet lang=c :
                         * %5$s
                         * }
                         * @param layouts the layouts of the variadic arguments, after C's default promotions
                         * @return an invoker for calls with arguments of those layouts
                         */
                        public static %2$s makeInvoker(MemoryLayout... layouts) {
                            FunctionDescriptor desc$ = BASE_DESC.appendArgumentLayouts(layouts);
                            Linker.Option fva$ = Linker.Option.firstVariadicArg(BASE_DESC.argumentLayouts().size());
                            var mh$ = Linker.nativeLinker().downcallHandle(address(), desc$, fva$);
                            var spreader$ = mh$.asSpreader(Object[].class, layouts.length);
                            return new %2$s(mh$, desc$, spreader$);
                        }

                        /** @return the address of {@code %2$s} */
                        public static MemorySegment address() {
                            return %4$s.requireAddress(ADDR, "%2$s");
                        }

                        /** @return the downcall method handle of this invoker */
                        public MethodHandle handle() {
                            return handle;
                        }

                        /** @return the function descriptor of this invoker */
                        public FunctionDescriptor descriptor() {
                            return descriptor;
                        }

                        /** Calls {@code %2$s} with the fixed arguments and the variadic ones. */
                        public %6$s apply(%7$s) {
                            try {
                                %8$s
                            } catch (IllegalArgumentException | ClassCastException ex$) {
                                throw ex$; // argument mismatch
                            } catch (Error | RuntimeException ex$) {
                                throw ex$;
                            } catch (Throwable ex$) {
                                throw new AssertionError("should not reach here", ex$);
                            }
                        }
                    }
                """.formatted(doc("    ", "Variadic invoker class for:", proto, releaseNote(n)), n,
                descriptor(f), h,
                escapeDoc(proto), ret, params, call);
        return new Member(text);
    }

    private Member variable(Variable v) {
        String n = v.name();
        String decl = "extern " + declare(v.cSpelling(), n);
        CType r = resolve(v.type());
        String lt = layoutType(v.type());
        String access;
        if (r instanceof Primitive || r instanceof Pointer) {
            String c = carrier(v.type());
            access = """
                    %4$s    public static %2$s %1$s() {
                            return %1$s$.SEGMENT.get(%1$s$.LAYOUT, 0L);
                        }

                    %4$s    public static void %1$s(%2$s varValue) {
                            %1$s$.SEGMENT.set(%1$s$.LAYOUT, 0L, varValue);
                        }
                    """.formatted(n, c, lt, doc("    ", "Getter and setter for the variable:", decl));
        } else {
            access = """
                    %2$s    public static MemorySegment %1$s() {
                            return %1$s$.SEGMENT;
                        }

                    %2$s    public static void %1$s(MemorySegment varValue) {
                            MemorySegment.copy(varValue, 0L, %1$s$.SEGMENT, 0L, %1$s$.LAYOUT.byteSize());
                        }
                    """.formatted(n, doc("    ", "Getter and setter for the variable:", decl));
        }
        String text = """

                    private static class %1$s$ {
                        public static final %2$s LAYOUT = %3$s;

                        public static final MemorySegment SEGMENT = %4$s.requireAddress(%4$s.findOrNull("%1$s"), "%1$s")
                            .reinterpret(LAYOUT.byteSize());
                    }

                %5$s    public static %2$s %1$s$layout() {
                        return %1$s$.LAYOUT;
                    }

                %6$s    public static MemorySegment %1$s$segment() {
                        return %1$s$.SEGMENT;
                    }

                %7$s""".formatted(n, lt, layout(v.type()), h,
                doc("    ", "Layout for the variable:", decl),
                snippet("    ", decl, ("The segment of the variable. " + releaseNote(n)).strip()), access);
        return new Member(text);
    }

    private Member constant(Constant c) {
        String n = c.name();
        String note = releaseNote(n);
        String type = c.value() instanceof String ? "String" : c.pointer() ? "MemorySegment" : c.type().carrier;
        String cText = c.value() instanceof String s ? "#define " + n + " " + javaString(s)
                : c.pointer() ? "#define " + n + " (void*) " + c.value()
                : (c.type() == Prim.INT || c.type() == Prim.LONG ? "enum or #define " : "#define ") + n + " = "
                        + cValue(c.type(), c.value());
        List<Release> changes = new ArrayList<>();
        List<String> literals = new ArrayList<>();
        StringBuilder perRelease = new StringBuilder();
        for (Release r : releases) {
            Release.Value v = r.constants.get(n);
            if (v == null) {
                continue;
            }
            String literal = c.value() instanceof String ? stringLiteral(c, v, r) : literal(c, parse(c, v, r));
            perRelease.append(perRelease.isEmpty() ? "" : ", ").append(v.text()).append(" in ").append(r.name());
            if (literals.isEmpty() || !literals.getLast().equals(literal)) {
                changes.add(r);
                literals.add(literal);
            }
        }
        if (changes.size() > 1) {
            return releaseDependentConstant(c, type, changes, literals, perRelease.toString(), note);
        }
        String literal = literal(c, c.value());
        String doc = snippet("    ", cText, note);
        if (c.value() instanceof String || c.pointer()) {
            return new Member("""

                    %2$s    public static %4$s %1$s() {
                            return %3$s;
                        }
                    """.formatted(n, doc, literal, type));
        }
        return new Member("""

                    private static final %2$s %1$s = %3$s;

                %4$s    public static %2$s %1$s() {
                        return %1$s;
                    }
                """.formatted(n, type, literal, doc));
    }

    /**
     * A constant whose value differs between the recorded releases: a holder class resolves it once, from the loaded
     * library's release, into a static final that the JIT folds like a literal.
     */
    private Member releaseDependentConstant(Constant c, String type, List<Release> changes, List<String> literals,
                                            String perRelease, String note) {
        String n = c.name();
        String kind = c.value() instanceof String || c.pointer() ? "#define " : c.type() == Prim.INT
                || c.type() == Prim.LONG ? "enum or #define " : "#define ";
        String from = headersRelease == null ? "" : "; the " + label() + " " + headersRelease
                + " headers these bindings were generated from say " + cValue(c);
        String text = "Its value differs between " + label() + " releases: " + perRelease + from + ". This returns "
                + "the value of the newest recorded release not newer than the loaded " + label() + " (of the oldest "
                + "recorded release when the loaded one is older than all of them), resolved once, on first use. "
                + note;
        StringBuilder codes = new StringBuilder();
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < changes.size(); i++) {
            Release r = changes.get(i);
            codes.append(i == 0 ? "" : ", ").append(String.format("0x%06x", r.code));
            String label = i + 1 < changes.size() ? "case " + i : "default";
            cases.append("            ").append(label).append(" -> ").append(literals.get(i)).append("; // ")
                    .append(r.name()).append(i + 1 < changes.size() ? "" : " and later").append('\n');
        }
        return new Member("""

                    private static final class %1$s$ {
                        static final %2$s VALUE = switch (%3$s$shared.releaseIndex(%4$s)) {
                %5$s        };
                    }

                %6$s    public static %2$s %1$s() {
                        return %1$s$.VALUE;
                    }
                """.formatted(n, type, h, codes, cases, snippet("    ", kind + n, text.strip())));
    }

    /** A release record writes a string constant as a Java literal already. */
    private static String stringLiteral(Constant c, Release.Value v, Release r) {
        if (!v.type().equals("string") || !v.text().startsWith("\"")) {
            throw new GeneratorException(c.name() + " is a string but " + r.name() + " records " + v.type() + " "
                    + v.text());
        }
        return v.text();
    }

    /** The value a release record gives, as the Java type of the constant the headers define. */
    private static Object parse(Constant c, Release.Value v, Release r) {
        try {
            return switch (c.type()) {
                case INT, LONG, LONG_LONG -> Long.parseLong(v.text());
                case FLOAT, DOUBLE -> Double.parseDouble(v.text());
                default -> throw new GeneratorException("constant " + c.name() + " has an unexpected type " + c.type());
            };
        } catch (NumberFormatException e) {
            throw new GeneratorException(r.name() + " records " + c.name() + " as " + v.text()
                    + ", which is no " + c.type());
        }
    }

    /** The Java expression of a constant's value; a string from a release record is a literal already. */
    private static String literal(Constant c, Object value) {
        if (c.value() instanceof String) {
            return javaString((String) value);
        }
        if (c.pointer()) {
            return "MemorySegment.ofAddress(" + value + "L)";
        }
        return switch (c.type()) {
            case INT -> Integer.toString((int) (long) (Long) value);
            case LONG, LONG_LONG -> (Long) value + "L";
            case FLOAT -> {
                float v = (float) (double) (Double) value;
                yield Float.isNaN(v) ? "Float.NaN" : Float.isInfinite(v)
                        ? (v > 0 ? "Float.POSITIVE_INFINITY" : "Float.NEGATIVE_INFINITY") : v + "f";
            }
            case DOUBLE -> {
                double v = (Double) value;
                yield Double.isNaN(v) ? "Double.NaN" : Double.isInfinite(v)
                        ? (v > 0 ? "Double.POSITIVE_INFINITY" : "Double.NEGATIVE_INFINITY") : Double.toString(v);
            }
            default -> throw new GeneratorException("constant " + c.name() + " has an unexpected type " + c.type());
        };
    }

    private static String cValue(Constant c) {
        if (c.value() instanceof String s) {
            return javaString(s);
        }
        return c.pointer() ? "(void*) " + c.value() : cValue(c.type(), c.value());
    }

    private static String cValue(Prim type, Object value) {
        return switch (type) {
            case INT -> Integer.toString((int) (long) (Long) value);
            case LONG, LONG_LONG -> Long.toString((Long) value);
            case FLOAT -> Float.toString((float) (double) (Double) value);
            case DOUBLE -> Double.toString((Double) value);
            case null, default -> String.valueOf(value);
        };
    }

    static String javaString(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                case '\r' -> sb.append("\\r");
                default -> {
                    if (ch < 0x20 || ch > 0x7e) {
                        sb.append(String.format("\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /**
     * The header class, split as jextract splits large ones: at most {@code --decls-per-header} declarations a
     * part, {@code H extends H_1 extends H_2 ... extends H$shared}, so that every declaration is reachable through
     * {@code H}.
     */
    private void headerClasses(List<Member> members) {
        int perPart = options.declsPerHeader;
        int parts = members.isEmpty() ? 1 : (members.size() - 1) / perPart + 1; // no overflow for a huge perPart
        for (int part = 0; part < parts; part++) {
            String name = part == 0 ? h : h + "_" + part;
            String parent = part + 1 < parts ? h + "_" + (part + 1) : h + "$shared";
            StringBuilder sb = new StringBuilder();
            if (part == 0) {
                sb.append("/**\n * Functions, constants, typedef layouts and variables of ")
                        .append(Path.of(options.header).getFileName());
                if (headersRelease != null) {
                    sb.append(", generated from the headers of ").append(label()).append(' ').append(headersRelease);
                }
                sb.append(".\n */\n");
            } else {
                sb.append("/** Part ").append(part).append(" of {@link ").append(h).append("}. */\n");
            }
            sb.append("public class ").append(name).append(" extends ").append(parent).append(" {\n\n");
            sb.append("    ").append(name).append("() {\n        // Should not be called directly\n    }\n");
            int from = part * perPart;
            int to = from + Math.min(members.size() - from, perPart);
            for (Member m : members.subList(from, to)) {
                sb.append(m.text());
            }
            sb.append("}\n");
            files.put(name + ".java", fileOf(sb.toString()));
        }
        files.put(h + "$shared.java", fileOf(sharedClass()));
    }

    private String sharedClass() {
        StringBuilder lookup = new StringBuilder();
        for (String lib : options.libraries) {
            lookup.append("            .or(").append(h).append("$shared.library(").append(javaString(lib))
                    .append("))\n");
        }
        String hook = options.libraryHook;
        String before = hook == null ? "" : "        " + hook + ".beforeLoad();\n";
        String describe = hook == null ? "\"the loaded libraries\"" : "\"the loaded \" + " + hook + ".describe()";
        return """
                /**
                 * Layouts and lookup helpers shared by the parts of {@link %1$s}.
                 */
                public class %1$s$shared {

                    %1$s$shared() {
                        // Should not be called directly
                    }

                    private static final Map<String, MemoryLayout> CANONICAL = Linker.nativeLinker().canonicalLayouts();

                    /** C {@code bool}. */
                    public static final ValueLayout.OfBoolean C_BOOL = (ValueLayout.OfBoolean) CANONICAL.get("bool");
                    /** C {@code char}. */
                    public static final ValueLayout.OfByte C_CHAR = (ValueLayout.OfByte) CANONICAL.get("char");
                    /** C {@code short}. */
                    public static final ValueLayout.OfShort C_SHORT = (ValueLayout.OfShort) CANONICAL.get("short");
                    /** C {@code int}. */
                    public static final ValueLayout.OfInt C_INT = (ValueLayout.OfInt) CANONICAL.get("int");
                    /** C {@code long long}. */
                    public static final ValueLayout.OfLong C_LONG_LONG = (ValueLayout.OfLong) CANONICAL.get("long long");
                    /** C {@code float}. */
                    public static final ValueLayout.OfFloat C_FLOAT = (ValueLayout.OfFloat) CANONICAL.get("float");
                    /** C {@code double}. */
                    public static final ValueLayout.OfDouble C_DOUBLE = (ValueLayout.OfDouble) CANONICAL.get("double");
                    /** C pointers, readable up to any length. */
                    public static final AddressLayout C_POINTER = ((AddressLayout) CANONICAL.get("void*"))
                        .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, JAVA_BYTE));
                    /** C {@code long}. */
                    public static final ValueLayout.OfLong C_LONG = (ValueLayout.OfLong) CANONICAL.get("long");

                    static final Arena LIBRARY_ARENA = Arena.ofAuto();

                    static final SymbolLookup SYMBOL_LOOKUP;

                    static {
                %2$s        SYMBOL_LOOKUP = SymbolLookup.loaderLookup()
                %3$s            .or(Linker.nativeLinker().defaultLookup());
                    }

                    private static SymbolLookup library(String name) {
                        try {
                            return SymbolLookup.libraryLookup(name, LIBRARY_ARENA);
                        } catch (IllegalArgumentException e) {
                            throw new UnsatisfiedLinkError("cannot load " + name + ": " + e.getMessage());
                        }
                    }

                    static MemorySegment findOrNull(String symbol) {
                        return SYMBOL_LOOKUP.find(symbol).orElse(null);
                    }

                    static UnsatisfiedLinkError missing(String symbol) {
                        String availability = availability(symbol);
                        return new UnsatisfiedLinkError(symbol + " is not in " + %4$s
                            + (availability == null ? "" : " (" + availability + ")"));
                    }
                %5$s
                    static MemorySegment requireAddress(MemorySegment address, String symbol) {
                        if (address == null) {
                            throw missing(symbol);
                        }
                        return address;
                    }

                    /**
                     * The downcall handle for a symbol, or, when the library lacks it, a handle of the same type that
                     * throws {@link UnsatisfiedLinkError} naming it: a missing function fails only when called.
                     */
                    static MethodHandle downcallHandle(String symbol, MemorySegment address, FunctionDescriptor desc,
                                                      Linker.Option... options) {
                        if (address != null) {
                            return Linker.nativeLinker().downcallHandle(address, desc, options);
                        }
                        MethodType type = Linker.nativeLinker().downcallHandle(desc, options).type().dropParameterTypes(0, 1);
                        try {
                            MethodHandle thrower = MethodHandles.lookup().findStatic(%1$s$shared.class, "missing",
                                MethodType.methodType(UnsatisfiedLinkError.class, String.class)).bindTo(symbol);
                            MethodHandle raise = MethodHandles.foldArguments(
                                MethodHandles.throwException(type.returnType(), UnsatisfiedLinkError.class), thrower);
                            return MethodHandles.dropArguments(raise, 0, type.parameterList());
                        } catch (ReflectiveOperationException e) {
                            throw new AssertionError(e);
                        }
                    }

                    static MethodHandle upcallHandle(Class<?> fi, String name, FunctionDescriptor fdesc) {
                        try {
                            return MethodHandles.lookup().findVirtual(fi, name, fdesc.toMethodType());
                        } catch (ReflectiveOperationException ex) {
                            throw new AssertionError(ex);
                        }
                    }
                }
                """.formatted(h, before, lookup, describe, indentBlock(releaseMembers(), "    "));
    }

    /** The shared class's record of releases: which recorded releases have the names some lack, and the version test. */
    private String releaseMembers() {
        StringBuilder sb = new StringBuilder();
        StringBuilder recorded = new StringBuilder();
        for (Release r : releases) {
            recorded.append(recorded.isEmpty() ? "" : ", ").append(javaString(r.version));
        }
        Map<String, List<String>> byReleases = new TreeMap<>();
        for (Map.Entry<String, List<Release>> e : partial.entrySet()) {
            String key = String.join(", ", e.getValue().stream().map(r -> javaString(r.version)).toList());
            byReleases.computeIfAbsent(key, k -> new ArrayList<>()).add(e.getKey());
        }
        StringBuilder cases = new StringBuilder();
        for (Map.Entry<String, List<String>> e : byReleases.entrySet()) {
            cases.append("        case ");
            int width = 13;
            List<String> names = e.getValue();
            for (int i = 0; i < names.size(); i++) {
                String item = javaString(names.get(i)) + (i + 1 < names.size() ? "," : "");
                if (i > 0 && width + 1 + item.length() > 116) {
                    cases.append("\n            ");
                    width = 12;
                } else if (i > 0) {
                    cases.append(' ');
                    width++;
                }
                cases.append(item);
                width += item.length();
            }
            cases.append("\n            -> List.of(").append(e.getKey()).append(");\n");
        }
        sb.append("""

                /** The releases of %1$s whose records these bindings were generated with, oldest first. */
                static final List<String> RECORDED_RELEASES = List.of(%2$s);

                /**
                 * The recorded releases that declare {@code name} (a function, constant, record, typedef or variable of
                 * these bindings), oldest first, when some recorded releases lack it; null when all or none of them
                 * declare it.
                 */
                static List<String> releasesOf(String name) {
                    return switch (name) {
                %3$s        default -> null;
                    };
                }

                /** Which recorded releases have {@code name} and which lack it, for messages; null when all have it. */
                static String availability(String name) {
                    List<String> has = releasesOf(name);
                    if (has == null) {
                        return null;
                    }
                    List<String> lacks = new ArrayList<>(RECORDED_RELEASES);
                    lacks.removeAll(has);
                    boolean newest = RECORDED_RELEASES.subList(RECORDED_RELEASES.size() - has.size(),
                        RECORDED_RELEASES.size()).equals(has);
                    String haveIt = newest && has.size() > 1 ? "%1$s " + has.getFirst() + " and later have it"
                        : "%1$s " + String.join(", ", has) + (has.size() > 1 ? " have it" : " has it");
                    return haveIt + ", %1$s " + String.join(", ", lacks) + (lacks.size() > 1 ? " lack it" : " lacks it");
                }
                """.formatted(label(), recorded, cases));
        String hook = options.libraryHook;
        if (hook != null && !releases.isEmpty()) {
            sb.append("""

                    /**
                     * Index of the newest of {@code firsts} (release codes {@code MAJOR << 16 | MINOR << 8 | PATCH},
                     * ascending) not newer than the loaded %1$s, or 0 when the loaded one is older than all of them.
                     */
                    static int releaseIndex(int... firsts) {
                        int loaded = %2$s.version();
                        int i = firsts.length - 1;
                        while (i > 0 && firsts[i] > loaded) {
                            i--;
                        }
                        return i;
                    }
                    """.formatted(label(), hook));
        }
        return sb.toString();
    }

    // ---- records ----------------------------------------------------------------------------------------------

    /** A field as the class sees it: anonymous members flattened, with the layout path from the class's layout. */
    private record FlatField(Field field, String path, long offset) {
    }

    private void flatten(Record r, String path, long base, List<FlatField> out) {
        for (Field f : r.fields) {
            if (f.bitField()) {
                continue;
            }
            long offset = base + f.offsetBits() / 8;
            if (f.anonymousMember()) {
                Record m = ((RecordRef) f.type()).record();
                flatten(m, path + "groupElement(\"" + anonName(f) + "\"), ", offset, out);
            } else {
                out.add(new FlatField(f, path + "groupElement(\"" + f.name() + "\")", offset));
            }
        }
    }

    private static String anonName(Field f) {
        return "$anon$" + f.line() + ":" + f.column();
    }

    private String recordLayout(Record r, String indent) {
        List<String> elements = new ArrayList<>();
        long cursor = 0;
        long maxAlign = 1;
        for (Field f : r.fields) {
            if (f.bitField()) {
                continue;
            }
            long offset = f.offsetBits() / 8;
            if (f.offsetBits() % 8 != 0) {
                throw new GeneratorException(r.cSpelling + "." + f.name() + " is not byte-aligned");
            }
            if (!r.union && offset > cursor) {
                elements.add("MemoryLayout.paddingLayout(" + (offset - cursor) + ")");
                cursor = offset;
            }
            if (!r.union && offset < cursor) {
                throw new GeneratorException(r.cSpelling + "." + f.name() + " overlaps the field before it");
            }
            String expr;
            long size;
            long align;
            if (f.anonymousMember()) {
                Record m = ((RecordRef) f.type()).record();
                expr = recordLayout(m, indent + "    ") + ".withName(\"" + anonName(f) + "\")";
                size = m.size;
                align = m.align;
            } else {
                size = sizeOf(f.type());
                align = alignOf(f.type());
                String base = layout(f.type());
                long natural = align;
                long allowed = offset == 0 ? natural : Math.min(natural, Long.lowestOneBit(offset));
                allowed = Math.min(allowed, r.align);
                if (allowed < natural) {
                    if (resolve(f.type()) instanceof RecordRef) {
                        throw new GeneratorException(r.cSpelling + "." + f.name()
                                + ": a packed record member is not supported");
                    }
                    base = base + ".withByteAlignment(" + allowed + ")";
                    align = allowed;
                }
                expr = base + ".withName(\"" + f.name() + "\")";
            }
            maxAlign = Math.max(maxAlign, align);
            elements.add(expr);
            cursor = r.union ? Math.max(cursor, size) : offset + size;
        }
        if (cursor < r.size) {
            if (r.union) {
                elements.add("MemoryLayout.paddingLayout(" + r.size + ")");
            } else {
                elements.add("MemoryLayout.paddingLayout(" + (r.size - cursor) + ")");
            }
        } else if (cursor > r.size) {
            throw new GeneratorException(r.cSpelling + ": fields end at " + cursor + " but clang says sizeof is " + r.size);
        }
        StringBuilder sb = new StringBuilder(r.union ? "MemoryLayout.unionLayout(" : "MemoryLayout.structLayout(");
        for (int i = 0; i < elements.size(); i++) {
            sb.append('\n').append(indent).append("    ").append(elements.get(i));
            if (i + 1 < elements.size()) {
                sb.append(',');
            }
        }
        sb.append('\n').append(indent).append(')');
        if (r.align > maxAlign) {
            sb.append(".withByteAlignment(").append(r.align).append(")");
        }
        return sb.toString();
    }

    private String cDeclaration(Record r, String indent) {
        StringBuilder sb = new StringBuilder();
        sb.append(r.keyword());
        if (!r.anonymous()) {
            sb.append(' ').append(r.tag);
        }
        sb.append(" {\n");
        for (Field f : r.fields) {
            if (f.anonymousMember()) {
                sb.append(indent).append("    ")
                        .append(cDeclaration(((RecordRef) f.type()).record(), indent + "    ")).append(";\n");
            } else if (f.type() instanceof RecordRef(Record m) && m.anonymous()) {
                sb.append(indent).append("    ").append(cDeclaration(m, indent + "    ")).append(' ')
                        .append(f.name()).append(";\n");
            } else {
                sb.append(indent).append("    ").append(declare(f.cSpelling(), f.name())).append(";\n");
            }
        }
        sb.append(indent).append("}");
        return sb.toString();
    }

    /** Class text for a record; nested for anonymous records named by a field. */
    private String recordClass(Record r, boolean nested) {
        String name = r.javaName;
        String in = ""; // a nested class is indented by collectNested, one level per enclosing class
        String mod = nested ? "public static class " : "public class ";
        String cDecl = r.anonymous() && !nested ? "typedef " + cDeclaration(r, "") + " " + r.javaName
                : cDeclaration(r, "");
        StringBuilder sb = new StringBuilder();
        sb.append(snippet(in, cDecl, nested ? "" : releaseNote(r.javaName)));
        sb.append(in).append(mod).append(name).append(" {\n\n");
        sb.append(in).append("    ").append(name).append("() {\n").append(in)
                .append("        // Should not be called directly\n").append(in).append("    }\n\n");
        String layoutName = r.anonymous() ? r.javaName : r.tag;
        sb.append(in).append("    private static final GroupLayout $LAYOUT = ").append(recordLayout(r, in + "    "))
                .append(".withName(\"").append(layoutName).append("\");\n\n");
        sb.append(in).append("    /**\n").append(in).append("     * The layout of this ").append(r.keyword())
                .append("\n").append(in).append("     */\n");
        sb.append(in).append("    public static final GroupLayout layout() {\n").append(in)
                .append("        return $LAYOUT;\n").append(in).append("    }\n");

        List<FlatField> flat = new ArrayList<>();
        flatten(r, "", 0, flat);
        List<String> nestedClasses = new ArrayList<>();
        collectNested(r, nestedClasses, new HashSet<>());
        for (FlatField ff : flat) {
            sb.append(fieldAccessors(ff, in + "    "));
        }
        for (String nc : nestedClasses) {
            sb.append('\n').append(nc);
        }
        sb.append(helpers(in + "    ", r));
        sb.append(in).append("}\n");
        return sb.toString();
    }

    /** Nested classes for anonymous records named by a field, and for anonymous function-pointer fields. */
    private void collectNested(Record r, List<String> out, Set<Record> done) {
        for (Field f : r.fields) {
            if (f.bitField()) {
                continue;
            }
            if (f.anonymousMember()) {
                collectNested(((RecordRef) f.type()).record(), out, done);
            } else if (f.type() instanceof RecordRef(Record m) && m.anonymous()) {
                if (done.add(m)) { // struct { ... } a, b; declares one type for two fields
                    out.add(indentBlock(recordClass(m, true), "    "));
                }
            } else if (f.type() instanceof Pointer(FunctionType fp) && supported(fp, "field " + f.name())) {
                out.add(indentBlock(functionPointerClass(javaName(f.name()), fp, "    ",
                        declare(f.cSpelling(), f.name())), ""));
            } else if (f.type() instanceof Array a && arrayElement(a) instanceof RecordRef(Record m) && m.anonymous()
                    && done.add(m)) {
                out.add(indentBlock(recordClass(m, true), "    "));
            }
        }
    }

    /** The element type of a possibly multi-dimensional array. */
    private static CType arrayElement(Array a) {
        CType e = a;
        while (e instanceof Array(CType inner, long ignored)) {
            e = inner;
        }
        return e;
    }

    private static String indentBlock(String text, String indent) {
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            sb.append(line.isEmpty() ? "" : indent + line).append('\n');
        }
        return sb.substring(0, sb.length() - 1);
    }

    private String fieldAccessors(FlatField ff, String in) {
        Field f = ff.field();
        String n = javaName(f.name());
        String cDecl = declare(f.cSpelling(), f.name());
        CType t = resolve(f.type());
        String lt = layoutType(f.type());
        StringBuilder sb = new StringBuilder();
        sb.append('\n');
        sb.append(in).append("private static final ").append(lt).append(' ').append(n).append("$LAYOUT = (").append(lt)
                .append(")$LAYOUT.select(").append(ff.path()).append(");\n\n");
        sb.append(doc(in, "Layout for field:", cDecl));
        sb.append(in).append("public static final ").append(lt).append(' ').append(n).append("$layout() {\n")
                .append(in).append("    return ").append(n).append("$LAYOUT;\n").append(in).append("}\n\n");
        sb.append(in).append("private static final long ").append(n).append("$OFFSET = ").append(ff.offset())
                .append(";\n\n");
        sb.append(doc(in, "Offset for field:", cDecl));
        sb.append(in).append("public static final long ").append(n).append("$offset() {\n")
                .append(in).append("    return ").append(n).append("$OFFSET;\n").append(in).append("}\n\n");
        String getterDoc = doc(in, "Getter for field:", cDecl);
        String setterDoc = doc(in, "Setter for field:", cDecl);
        if (t instanceof Primitive || t instanceof Pointer) {
            String c = carrier(f.type());
            sb.append(getterDoc).append(in).append("public static ").append(c).append(' ').append(n)
                    .append("(MemorySegment struct) {\n").append(in).append("    return struct.get(").append(n)
                    .append("$LAYOUT, ").append(n).append("$OFFSET);\n").append(in).append("}\n\n");
            sb.append(setterDoc).append(in).append("public static void ").append(n)
                    .append("(MemorySegment struct, ").append(c).append(" fieldValue) {\n").append(in)
                    .append("    struct.set(").append(n).append("$LAYOUT, ").append(n)
                    .append("$OFFSET, fieldValue);\n").append(in).append("}\n");
        } else {
            sb.append(getterDoc).append(in).append("public static MemorySegment ").append(n)
                    .append("(MemorySegment struct) {\n").append(in).append("    return struct.asSlice(").append(n)
                    .append("$OFFSET, ").append(n).append("$LAYOUT.byteSize());\n").append(in).append("}\n\n");
            sb.append(setterDoc).append(in).append("public static void ").append(n)
                    .append("(MemorySegment struct, MemorySegment fieldValue) {\n").append(in)
                    .append("    MemorySegment.copy(fieldValue, 0L, struct, ").append(n).append("$OFFSET, ")
                    .append(n).append("$LAYOUT.byteSize());\n").append(in).append("}\n");
        }
        if (t instanceof Array) {
            sb.append(arrayAccessors(f, n, cDecl, in));
        }
        return sb.toString();
    }

    private String arrayAccessors(Field f, String n, String cDecl, String in) {
        List<Long> dims = new ArrayList<>();
        CType e = resolve(f.type());
        while (e instanceof Array a) {
            dims.add(Math.max(0, a.count()));
            e = resolve(a.element());
        }
        List<Long> strides = new ArrayList<>();
        long stride = sizeOf(e);
        for (int i = dims.size() - 1; i >= 0; i--) {
            strides.addFirst(stride);
            stride *= dims.get(i);
        }
        StringBuilder dimList = new StringBuilder();
        StringBuilder indexParams = new StringBuilder();
        StringBuilder offsetExpr = new StringBuilder(n + "$OFFSET");
        StringBuilder elementPath = new StringBuilder();
        for (int i = 0; i < dims.size(); i++) {
            dimList.append(i == 0 ? "" : ", ").append(dims.get(i)).append('L');
            indexParams.append(", long index").append(i);
            offsetExpr.append(" + index").append(i).append(" * ").append(strides.get(i)).append('L');
            elementPath.append(i == 0 ? "" : ", ").append("sequenceElement()");
        }
        StringBuilder sb = new StringBuilder("\n");
        sb.append(in).append("private static final long[] ").append(n).append("$DIMS = { ").append(dimList)
                .append(" };\n\n");
        sb.append(doc(in, "Dimensions for array field:", cDecl));
        sb.append(in).append("public static long[] ").append(n).append("$dimensions() {\n").append(in)
                .append("    return ").append(n).append("$DIMS.clone();\n").append(in).append("}\n");
        CType elem = e;
        String elt = layoutType(elem);
        sb.append(in).append("private static final ").append(elt).append(' ').append(n).append("$ELEM = (")
                .append(elt).append(")").append(n).append("$LAYOUT.select(").append(elementPath).append(");\n\n");
        String idxGet = doc(in, "Indexed getter for field:", cDecl);
        String idxSet = doc(in, "Indexed setter for field:", cDecl);
        if (elem instanceof Primitive || elem instanceof Pointer) {
            String c = carrier(elem);
            sb.append(idxGet).append(in).append("public static ").append(c).append(' ').append(n)
                    .append("(MemorySegment struct").append(indexParams).append(") {\n").append(in)
                    .append("    return struct.get(").append(n).append("$ELEM, ").append(offsetExpr).append(");\n")
                    .append(in).append("}\n\n");
            sb.append(idxSet).append(in).append("public static void ").append(n).append("(MemorySegment struct")
                    .append(indexParams).append(", ").append(c).append(" fieldValue) {\n").append(in)
                    .append("    struct.set(").append(n).append("$ELEM, ").append(offsetExpr)
                    .append(", fieldValue);\n").append(in).append("}\n");
        } else {
            sb.append(idxGet).append(in).append("public static MemorySegment ").append(n)
                    .append("(MemorySegment struct").append(indexParams).append(") {\n").append(in)
                    .append("    return struct.asSlice(").append(offsetExpr).append(", ").append(n)
                    .append("$ELEM.byteSize());\n").append(in).append("}\n\n");
            sb.append(idxSet).append(in).append("public static void ").append(n).append("(MemorySegment struct")
                    .append(indexParams).append(", MemorySegment fieldValue) {\n").append(in)
                    .append("    MemorySegment.copy(fieldValue, 0L, struct, ").append(offsetExpr).append(", ")
                    .append(n).append("$ELEM.byteSize());\n").append(in).append("}\n");
        }
        return sb.toString();
    }

    private String helpers(String in, Record r) {
        return """

                %1$s/**
                %1$s * Obtains a slice of {@code arrayParam} which selects the array element at {@code index}.
                %1$s * The returned segment has address {@code arrayParam.address() + index * layout().byteSize()}
                %1$s */
                %1$spublic static MemorySegment asSlice(MemorySegment array, long index) {
                %1$s    return array.asSlice(layout().byteSize() * index);
                %1$s}

                %1$s/**
                %1$s * The size (in bytes) of this %2$s
                %1$s */
                %1$spublic static long sizeof() {
                %1$s    return layout().byteSize();
                %1$s}

                %1$s/**
                %1$s * Allocate a segment of size {@code layout().byteSize()} using {@code allocator}
                %1$s */
                %1$spublic static MemorySegment allocate(SegmentAllocator allocator) {
                %1$s    return allocator.allocate(layout());
                %1$s}

                %1$s/**
                %1$s * Allocate an array of size {@code elementCount} using {@code allocator}.
                %1$s * The returned segment has size {@code elementCount * layout().byteSize()}.
                %1$s */
                %1$spublic static MemorySegment allocateArray(long elementCount, SegmentAllocator allocator) {
                %1$s    return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
                %1$s}

                %1$s/**
                %1$s * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
                %1$s * The returned segment has size {@code layout().byteSize()}
                %1$s */
                %1$spublic static MemorySegment reinterpret(MemorySegment addr, Arena arena, Consumer<MemorySegment> cleanup) {
                %1$s    return reinterpret(addr, 1, arena, cleanup);
                %1$s}

                %1$s/**
                %1$s * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
                %1$s * The returned segment has size {@code elementCount * layout().byteSize()}
                %1$s */
                %1$spublic static MemorySegment reinterpret(MemorySegment addr, long elementCount, Arena arena, Consumer<MemorySegment> cleanup) {
                %1$s    return addr.reinterpret(layout().byteSize() * elementCount, arena, cleanup);
                %1$s}
                """.formatted(in, r.keyword());
    }

    // ---- function pointers ------------------------------------------------------------------------------------

    private String functionPointerClass(String name, FunctionType f, String in, String cDecl) {
        List<String> names = paramNames(f);
        boolean alloc = returnsRecord(f);
        String ret = carrier(f.result());
        StringBuilder params = new StringBuilder();
        for (int i = 0; i < names.size(); i++) {
            params.append(i == 0 ? "" : ", ").append(carrier(f.params().get(i))).append(' ').append(names.get(i));
        }
        StringBuilder invokeParams = new StringBuilder("MemorySegment funcPtr");
        StringBuilder invokeArgs = new StringBuilder("funcPtr");
        if (alloc) {
            invokeParams.append(", SegmentAllocator allocator");
            invokeArgs.append(", allocator");
        }
        for (int i = 0; i < names.size(); i++) {
            invokeParams.append(", ").append(carrier(f.params().get(i))).append(' ').append(names.get(i));
            invokeArgs.append(", ").append(names.get(i));
        }
        String call = ret.equals("void") ? "DOWN$MH.invokeExact(" + invokeArgs + ");"
                : "return (" + ret + ") DOWN$MH.invokeExact(" + invokeArgs + ");";
        String mod = in.isEmpty() ? "public class " : "public static class ";
        String body;
        if (f.variadic()) {
            body = """
                    /** The fixed part of the signature; variadic function pointers have no upcall or invoker. */
                    private static final FunctionDescriptor $DESC = %1$s;

                    /**
                     * The descriptor of the fixed arguments.
                     */
                    public static FunctionDescriptor descriptor() {
                        return $DESC;
                    }
                    """.formatted(descriptor(f));
        } else {
            body = """
                    /**
                     * The function pointer signature, expressed as a functional interface
                     */
                    public interface Function {
                        %1$s apply(%2$s);
                    }

                    private static final FunctionDescriptor $DESC = %3$s;

                    /**
                     * The descriptor of this function pointer
                     */
                    public static FunctionDescriptor descriptor() {
                        return $DESC;
                    }

                    private static final MethodHandle UP$MH = %4$s.upcallHandle(%5$s.Function.class, "apply", $DESC);

                    /**
                     * Allocates a new upcall stub, whose implementation is defined by {@code fi}.
                     * The lifetime of the returned segment is managed by {@code arena}
                     */
                    public static MemorySegment allocate(%5$s.Function fi, Arena arena) {
                        return Linker.nativeLinker().upcallStub(UP$MH.bindTo(fi), $DESC, arena);
                    }

                    private static final MethodHandle DOWN$MH = Linker.nativeLinker().downcallHandle($DESC);

                    /**
                     * Invoke the function pointed to by {@code funcPtr} with the given arguments
                     */
                    public static %1$s invoke(%6$s) {
                        try {
                            %7$s
                        } catch (Error | RuntimeException ex$) {
                            throw ex$;
                        } catch (Throwable ex$) {
                            throw new AssertionError("should not reach here", ex$);
                        }
                    }
                    """.formatted(ret, params, descriptor(f), h, name, invokeParams, call);
        }
        String text = snippet("", cDecl, in.isEmpty() ? releaseNote(name) : "") + mod + name + " {\n\n    " + name
                + "() {\n        // Should not be called directly\n    }\n\n" + indentBlock(body, "    ") + "}\n";
        return in.isEmpty() ? text : indentBlock(text, in);
    }

    // ---- dump ---------------------------------------------------------------------------------------------------

    /** An argument file naming every symbol of the filtered headers, grouped by header. */
    static String dump(Unit unit, Options options) {
        Map<String, List<String>> byFile = new LinkedHashMap<>();
        Map<String, Integer> kindOrder = new HashMap<>();
        for (Options.Kind k : Options.Kind.values()) {
            kindOrder.put(k.option, k.ordinal());
        }
        java.util.function.BiConsumer<String, String> add = (file, line) -> {
            if (options.headerFilters.isEmpty() || options.headerFilters.stream().anyMatch(file::contains)) {
                byFile.computeIfAbsent(file, x -> new ArrayList<>()).add(line);
            }
        };
        for (Function f : unit.functions) {
            add.accept(f.file(), Options.Kind.FUNCTION.option + " " + f.name());
        }
        for (Constant c : unit.constants) {
            add.accept(c.file(), Options.Kind.CONSTANT.option + " " + c.name());
        }
        for (Record r : unit.records) {
            if (!r.anonymous()) {
                add.accept(r.file, (r.union ? Options.Kind.UNION : Options.Kind.STRUCT).option + " " + r.tag);
            }
        }
        for (TypedefDecl t : unit.typedefs) {
            add.accept(t.file(), Options.Kind.TYPEDEF.option + " " + t.name());
        }
        for (Variable v : unit.variables) {
            add.accept(v.file(), Options.Kind.VAR.option + " " + v.name());
        }
        List<Map.Entry<String, List<String>>> groups = new ArrayList<>(byFile.entrySet());
        // Grouped by subsystem in the order a reader needs them: the protocol layer, transports, then services.
        // Groups of one subsystem stay together, each under one heading.
        groups.sort(Comparator.comparingInt((Map.Entry<String, List<String>> e) -> subsystemRank(e.getKey()))
                .thenComparing(e -> subsystemOf(e.getKey())));
        StringBuilder sb = new StringBuilder();
        String subsystem = "";
        for (Map.Entry<String, List<String>> e : groups) {
            String s = subsystemOf(e.getKey());
            if (!s.equals(subsystem)) {
                subsystem = s;
                sb.append("\n### ").append(s).append('\n');
            }
            List<String> lines = new ArrayList<>(e.getValue());
            lines.sort((a, b) -> Integer.compare(kindOrder.get(a.substring(0, a.indexOf(' '))),
                    kindOrder.get(b.substring(0, b.indexOf(' ')))));
            sb.append("\n#### Extracted from: ").append(shortPath(e.getKey())).append("\n\n");
            for (String line : lines) {
                sb.append(line).append('\n');
            }
        }
        return sb.toString();
    }

    private static final List<String> SUBSYSTEMS = List.of("ucp/", "uct/", "ucs/");

    private static int subsystemRank(String file) {
        String p = shortPath(file);
        for (int i = 0; i < SUBSYSTEMS.size(); i++) {
            if (p.startsWith(SUBSYSTEMS.get(i))) {
                return i;
            }
        }
        return SUBSYSTEMS.size();
    }

    private static String subsystemOf(String file) {
        String p = shortPath(file);
        int slash = p.indexOf('/');
        return slash > 0 ? p.substring(0, slash).toUpperCase(java.util.Locale.ROOT) : "other";
    }

    static String shortPath(String file) {
        int i = file.lastIndexOf("/include/");
        return i >= 0 ? file.substring(i + "/include/".length()) : file;
    }

    static void write(Path dir, Map<String, String> files) {
        try {
            Files.createDirectories(dir);
            for (Map.Entry<String, String> e : files.entrySet()) {
                Files.writeString(dir.resolve(e.getKey()), e.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
