package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Array;
import io.github.ucxffm.generator.Model.CType;
import io.github.ucxffm.generator.Model.EnumRef;
import io.github.ucxffm.generator.Model.Field;
import io.github.ucxffm.generator.Model.FunctionType;
import io.github.ucxffm.generator.Model.Pointer;
import io.github.ucxffm.generator.Model.Primitive;
import io.github.ucxffm.generator.Model.Record;
import io.github.ucxffm.generator.Model.RecordRef;
import io.github.ucxffm.generator.Model.Typedef;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How C types appear in Java: carrier types, value layouts, function descriptors, sizes and alignments, the class
 * names of records and parameter names Java accepts. Layouts of C scalars and pointers are the header class's
 * constants ({@code C_INT}, {@code C_POINTER}...), so an instance knows that class's name.
 */
final class TypeMapping {

    private static final Set<String> JAVA_RESERVED = Set.of("abstract", "assert", "boolean", "break", "byte", "case",
            "catch", "char", "class", "const", "continue", "default", "do", "double", "else", "enum", "extends",
            "final", "finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",
            "interface", "long", "native", "new", "package", "private", "protected", "public", "return", "short",
            "static", "strictfp", "super", "switch", "synchronized", "this", "throw", "throws", "transient", "try",
            "void", "volatile", "while", "true", "false", "null", "_", "yield", "record", "var");

    private final String h;

    TypeMapping(String headerClassName) {
        this.h = headerClassName;
    }

    /** The type behind typedefs and enums: what decides the layout. */
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

    /** The Java type that carries a value of {@code type}: a primitive, {@code void} or {@code MemorySegment}. */
    static String carrier(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> p.prim().carrier;
            case Model.Void v -> "void";
            default -> "MemorySegment";
        };
    }

    /** The static type of {@code type}'s layout ({@code OfInt}, {@code AddressLayout}, {@code GroupLayout}...). */
    static String layoutType(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> p.prim().layoutType;
            case Pointer p -> "AddressLayout";
            case RecordRef r -> "GroupLayout";
            case Array a -> "SequenceLayout";
            default -> throw new GeneratorException("no layout for " + type);
        };
    }

    /** A Java expression for {@code type}'s layout. */
    String layout(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> h + "." + p.prim().layoutName;
            case Pointer p -> h + ".C_POINTER";
            case RecordRef r -> className(r.record()) + ".layout()";
            case Array a -> "MemoryLayout.sequenceLayout(%s, %s)".formatted(Math.max(0, a.count()),
                    layout(a.element()));
            default -> throw new GeneratorException("no layout for " + type);
        };
    }

    /** {@code sizeof} on x86-64 / aarch64 Linux (LP64); an array of unknown size counts as empty. */
    static long sizeOf(CType type) {
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

    /** {@code _Alignof} on LP64, as {@link #sizeOf} sees types. */
    static long alignOf(CType type) {
        return switch (resolve(type)) {
            case Primitive p -> sizeOf(p);
            case Pointer p -> 8;
            case RecordRef r -> r.record().align;
            case Array a -> alignOf(a.element());
            default -> throw new GeneratorException("no alignment for " + type);
        };
    }

    /** The Java class of a record: a nested class for an anonymous record named by a field. */
    static String className(Record r) {
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

    /** Whether {@code r} is an anonymous struct or union member, whose fields its enclosing record reaches. */
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

    /** A Java expression for the {@code FunctionDescriptor} of {@code f}, one layout a line. */
    String descriptor(FunctionType f) {
        List<String> layouts = new ArrayList<>();
        boolean returnsVoid = resolve(f.result()) instanceof Model.Void;
        if (!returnsVoid) {
            layouts.add(layout(f.result()));
        }
        for (CType p : f.params()) {
            layouts.add(layout(p));
        }
        return "FunctionDescriptor.%s(%s\n        )".formatted(returnsVoid ? "ofVoid" : "of",
                layouts.stream().map(l -> "\n            " + l).collect(Collectors.joining(",")));
    }

    /** A C name as a Java identifier: a reserved word gets a trailing underscore. */
    static String javaName(String cName) {
        return JAVA_RESERVED.contains(cName) ? cName + "_" : cName;
    }

    /**
     * Java parameter names for {@code f}'s parameters: the C names where there are some ({@code x0}, {@code x1}...
     * where not), made unique and kept clear of the names generated code uses itself.
     */
    static List<String> paramNames(FunctionType f) {
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

    /** Whether {@code f} returns a record by value, and so takes a leading {@code SegmentAllocator}. */
    static boolean returnsRecord(FunctionType f) {
        return resolve(f.result()) instanceof RecordRef;
    }

    /** The Java parameter list of {@code f} with {@code names}, after an allocator when {@code leadingAllocator}. */
    static String parameterList(FunctionType f, List<String> names, boolean leadingAllocator) {
        List<String> ps = new ArrayList<>();
        if (leadingAllocator) {
            ps.add("SegmentAllocator allocator");
        }
        for (int i = 0; i < f.params().size(); i++) {
            ps.add(carrier(f.params().get(i)) + " " + names.get(i));
        }
        return String.join(", ", ps);
    }

    /** The function type behind a function, a function pointer or a pointer to a function typedef; else null. */
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

    /** Whether a typedef of {@code t} gets a class of its own (a record or a function pointer) rather than a layout. */
    static boolean isClassTypedef(CType t) {
        CType u = t;
        while (u instanceof Typedef td) {
            u = td.underlying();
        }
        return u instanceof RecordRef || functionPointer(u) != null;
    }

    /** How C spells {@code t}, near enough for the Javadoc of a typedef layout. */
    static String spellingOf(CType t) {
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

    /** The element type of a possibly multi-dimensional array. */
    static CType arrayElement(Array a) {
        CType e = a;
        while (e instanceof Array(CType inner, long ignored)) {
            e = inner;
        }
        return e;
    }
}
