package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Array;
import io.github.ucxffm.generator.Model.CType;
import io.github.ucxffm.generator.Model.EnumRef;
import io.github.ucxffm.generator.Model.Field;
import io.github.ucxffm.generator.Model.FunctionType;
import io.github.ucxffm.generator.Model.Pointer;
import io.github.ucxffm.generator.Model.Record;
import io.github.ucxffm.generator.Model.RecordRef;
import io.github.ucxffm.generator.Model.Typedef;
import io.github.ucxffm.generator.Model.Unit;
import io.github.ucxffm.generator.Model.Unsupported;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the {@code --include-*} options select, and the checks that a selection can be generated: every included name
 * is declared, every record used by value is selected too, and declarations whose types Java cannot express are
 * skipped with a warning.
 */
final class Selection {

    private final Map<Options.Kind, Set<String>> includes;
    /** The included names the headers declare, each as its option would name it ("--include-struct foo"). */
    private final Set<String> found = new HashSet<>();
    private final Set<Record> records = new HashSet<>();
    private final List<String> warnings = new ArrayList<>();

    /** Selects the records of {@code unit}: by tag, or through the typedef that names an anonymous record. */
    Selection(Map<Options.Kind, Set<String>> includes, Unit unit) {
        this.includes = includes;
        for (Record r : unit.records) {
            Options.Kind kind = r.union ? Options.Kind.UNION : Options.Kind.STRUCT;
            boolean wanted = !r.anonymous() ? includes.get(kind).contains(r.tag)
                    : r.javaName != null && includes.get(Options.Kind.TYPEDEF).contains(r.javaName);
            if (wanted) {
                records.add(r);
                found.add(kind.option + " " + (r.anonymous() ? r.javaName : r.tag));
                if (r.anonymous()) {
                    found.add(Options.Kind.TYPEDEF.option + " " + r.javaName);
                }
            }
        }
    }

    /** Whether {@code name} is included as {@code kind}; if so, it counts as found. */
    boolean take(Options.Kind kind, String name) {
        if (!includes.get(kind).contains(name)) {
            return false;
        }
        found.add(kind.option + " " + name);
        return true;
    }

    /** Whether {@code name} is included as {@code kind}, without counting it as found. */
    boolean includes(Options.Kind kind, String name) {
        return includes.get(kind).contains(name);
    }

    /** Whether record {@code r} is selected: it gets a class. */
    boolean selected(Record r) {
        return records.contains(r);
    }

    /** Fails, naming them all, when some included names are declared nowhere in the headers. */
    void requireAllFound() {
        List<String> missing = new ArrayList<>();
        for (Options.Kind kind : Options.Kind.values()) {
            for (String name : includes.get(kind)) {
                if (!found.contains(kind.option + " " + name)) {
                    missing.add(kind.option + " " + name);
                }
            }
        }
        if (!missing.isEmpty()) {
            throw new GeneratorException("the headers declare nothing for " + missing.size() + " included name(s): "
                    + String.join(", ", missing));
        }
    }

    void warn(String warning) {
        warnings.add(warning);
    }

    List<String> warnings() {
        return warnings;
    }

    /** Whether Java can express {@code type}; if not, {@code what} is skipped with a warning. */
    boolean supported(CType type, String what) {
        String bad = unsupported(type, new HashSet<>());
        if (bad != null) {
            warn("skipped " + what + ": its type uses " + bad + ", which Java cannot express");
            return false;
        }
        return true;
    }

    /**
     * The spelling of the first type in {@code type} that Java cannot express, or null. Pointers need nothing of
     * their pointee, except a function pointer, whose signature is generated; bit-fields are skipped anyway.
     */
    static String unsupported(CType type, Set<Record> visiting) {
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

    /**
     * A record used by value must be selected too (pointers to records need nothing); fails naming {@code user} and
     * the option to add. An anonymous record nested in another is checked through its fields.
     */
    void requireByValue(CType type, String user) {
        switch (type) {
            case RecordRef rr -> {
                Record r = rr.record();
                if (r.enclosing != null && r.anonymous()) {
                    for (Field f : r.fields) {
                        requireByValueField(f, user);
                    }
                } else if (!records.contains(r)) {
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
    void requireByValueField(Field f, String user) {
        requireByValue(f.type(), user);
        if (!f.bitField() && f.type() instanceof Pointer(FunctionType fp) && unsupported(fp, new HashSet<>()) == null) {
            requireByValue(fp, user);
        }
    }
}
