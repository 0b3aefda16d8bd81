package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.CType;
import io.github.ucxffm.generator.Model.Constant;
import io.github.ucxffm.generator.Model.Field;
import io.github.ucxffm.generator.Model.Function;
import io.github.ucxffm.generator.Model.FunctionType;
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
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes the jextract-shaped Java sources for the selected part of a {@link Unit}. The work is done by parts, each
 * rendering one kind of output from text-block templates filled with {@code String.formatted}:
 * <ul>
 *   <li>{@link Selection}: what the {@code --include-*} options select, and whether it can be generated;</li>
 *   <li>{@link TypeMapping}: C types as Java carriers, layouts and descriptors;</li>
 *   <li>{@link HeaderClass} and {@link Constants}: the header class chain and its shared class;</li>
 *   <li>{@link Records}: a class per struct or union;</li>
 *   <li>{@link FunctionPointers}: a class per function-pointer type;</li>
 *   <li>{@link ReleaseNotes}: what the release records say about each name;</li>
 *   <li>{@link Docs}: the C text in Javadoc.</li>
 * </ul>
 * {@link SymbolDump} writes the argument file of {@code --dump-includes}.
 */
final class Emitter {

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
    private final Selection selection;
    private final HeaderClass header;
    private final Constants constants;
    private final Records records;
    private final FunctionPointers pointers;
    private final ReleaseNotes notes;
    /** Output file name (relative to the package folder) to contents, sorted for determinism. */
    private final Map<String, String> files = new TreeMap<>();

    Emitter(Options options, Unit unit, List<Release> releases) {
        this.options = options;
        this.unit = unit;
        this.selection = new Selection(options.includes, unit);
        this.notes = ReleaseNotes.of(unit, releases, options.releaseLabel, options.releaseVersion);
        TypeMapping types = new TypeMapping(options.headerClassName);
        this.header = new HeaderClass(options, types, notes);
        this.constants = new Constants(options.headerClassName, notes);
        this.pointers = new FunctionPointers(types, options.headerClassName, notes);
        this.records = new Records(types, selection, notes, pointers);
    }

    /** What was skipped, and why. */
    List<String> warnings() {
        return selection.warnings();
    }

    /**
     * Renders every file; returns file name to contents. Declarations are checked and rendered in the headers' order,
     * kind by kind (typedefs, functions, variables, constants, then records), so that of several problems the first
     * in that order is the one reported.
     */
    Map<String, String> render() {
        List<String> members = new ArrayList<>();
        for (TypedefDecl t : unit.typedefs) {
            if (selection.take(Options.Kind.TYPEDEF, t.name())) {
                typedef(t, members);
            }
        }
        for (Function f : unit.functions) {
            if (selection.take(Options.Kind.FUNCTION, f.name())
                    && selection.supported(f.type(), "function " + f.name())) {
                selection.requireByValue(f.type(), "function " + f.name());
                members.add(f.type().variadic() ? header.variadicFunction(f) : header.function(f));
            }
        }
        for (Variable v : unit.variables) {
            if (selection.take(Options.Kind.VAR, v.name()) && selection.supported(v.type(), "variable " + v.name())) {
                selection.requireByValue(v.type(), "variable " + v.name());
                members.add(header.variable(v));
            }
        }
        for (Constant c : unit.constants) {
            if (selection.take(Options.Kind.CONSTANT, c.name())) {
                members.add(constants.member(c));
            }
        }
        selection.requireAllFound();

        for (Record r : unit.records) {
            if (selection.selected(r)) {
                for (Field f : r.fields) {
                    selection.requireByValueField(f, r.cSpelling + "." + f.name());
                }
                put(r.javaName, records.topLevel(r));
            }
        }
        header.parts(members).forEach(this::put);
        put(options.headerClassName + "$shared", header.shared()); // last: it lists what the others noted
        return files;
    }

    /**
     * A typedef: nothing when the record class carries its name or C only ever holds pointers to it; a subclass for
     * a typedef of a record or of another class typedef; a function-pointer class; else a layout in the header class.
     */
    private void typedef(TypedefDecl t, List<String> members) {
        String name = t.name();
        CType u = t.underlying();
        if (u instanceof RecordRef(Record r)) {
            if (r.anonymous() && name.equals(r.javaName)) {
                return; // the record class itself carries this name
            }
            if (name.equals(r.javaName) || !r.complete) {
                return; // typedef struct foo foo; or an opaque type: C code only ever holds pointers to it
            }
            if (!selection.selected(r)) {
                throw new GeneratorException("typedef " + name + " names " + r.cSpelling
                        + ", which is not generated; add it to the argument file");
            }
            put(name, subclass(name, r.cSpelling, TypeMapping.className(r)));
            return;
        }
        if (u instanceof Typedef(String base, CType baseType) && TypeMapping.isClassTypedef(baseType)
                && selection.includes(Options.Kind.TYPEDEF, base)) {
            put(name, subclass(name, base, base));
            return;
        }
        FunctionType fp = TypeMapping.functionPointer(u);
        if (fp != null) {
            if (!selection.supported(fp, "typedef " + name)) {
                return;
            }
            selection.requireByValue(fp, "typedef " + name);
            put(name, pointers.topLevel(name, fp, "typedef " + Docs.prototype("(*" + name + ")", fp)));
            return;
        }
        CType resolved = TypeMapping.resolve(u);
        if (resolved instanceof Model.Void || resolved instanceof Unsupported || resolved instanceof FunctionType
                || (resolved instanceof RecordRef)) {
            selection.warn("skipped typedef " + name + ": nothing to generate for it");
            return;
        }
        if (!selection.supported(u, "typedef " + name)) {
            return;
        }
        selection.requireByValue(u, "typedef " + name);
        members.add(header.typedefLayout(name, u));
    }

    /** The class of {@code typedef cType name;} where {@code cType} has class {@code superclass}. */
    private String subclass(String name, String cType, String superclass) {
        return Docs.snippet("", "typedef " + cType + " " + name, notes.note(name)) + """
                public class %1$s extends %2$s {

                    %1$s() {
                        // Should not be called directly
                    }
                }
                """.formatted(name, superclass);
    }

    /** Adds the source file of class {@code className}: a header line, the package, the imports, the class. */
    private void put(String className, String classText) {
        String pkg = options.targetPackage.isEmpty() ? "" : "package %s;\n\n".formatted(options.targetPackage);
        files.put(className + ".java", """
                // Generated by ucx-ffm-generator from %s. Do not edit: regenerate.

                %s%s
                %s""".formatted(Path.of(options.header).getFileName(), pkg, IMPORTS, classText));
    }

    /** Writes {@code files} (name relative to {@code dir} to contents) into {@code dir}. */
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
