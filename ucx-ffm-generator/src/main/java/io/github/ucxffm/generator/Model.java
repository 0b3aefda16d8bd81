package io.github.ucxffm.generator;

import java.util.ArrayList;
import java.util.List;

/**
 * The generator's picture of a C header: types and declarations, independent of libclang, in source order.
 */
final class Model {

    private Model() {
    }

    /** A C type as far as the Java side needs it. */
    sealed interface CType {
    }

    /** Scalar kinds the FFM linker knows; signedness does not change a layout, so it is kept only for docs. */
    enum Prim {
        BOOL("C_BOOL", "OfBoolean", "boolean"),
        CHAR("C_CHAR", "OfByte", "byte"),
        SHORT("C_SHORT", "OfShort", "short"),
        INT("C_INT", "OfInt", "int"),
        LONG("C_LONG", "OfLong", "long"),
        LONG_LONG("C_LONG_LONG", "OfLong", "long"),
        FLOAT("C_FLOAT", "OfFloat", "float"),
        DOUBLE("C_DOUBLE", "OfDouble", "double");

        final String layoutName;
        final String layoutType;
        final String carrier;

        Prim(String layoutName, String layoutType, String carrier) {
            this.layoutName = layoutName;
            this.layoutType = layoutType;
            this.carrier = carrier;
        }
    }

    record Void() implements CType {
    }

    record Primitive(Prim prim) implements CType {
    }

    record Pointer(CType pointee) implements CType {
    }

    /** {@code count} is -1 for an array of unknown size ({@code T x[]}). */
    record Array(CType element, long count) implements CType {
    }

    record RecordRef(Record record) implements CType {
    }

    record EnumRef(String name, CType integer) implements CType {
    }

    record Typedef(String name, CType underlying) implements CType {
    }

    /** {@code noPrototype} marks {@code f()} in C: treated as taking no arguments (not as variadic). */
    record FunctionType(CType result, List<CType> params, List<String> paramNames, List<String> paramSpellings,
                        String resultSpelling, boolean variadic, boolean noPrototype) implements CType {
    }

    /** A type the Java side cannot express (long double, __int128, vectors); declarations using it are skipped. */
    record Unsupported(String spelling) implements CType {
    }

    /** A struct or union. Records are identified by clang's USR and shared between all references. */
    static final class Record {
        final String usr;
        final boolean union;
        /** The C tag, empty for an anonymous record. */
        final String tag;
        /** The Java class name; for anonymous records set when a typedef or a field names them. */
        String javaName;
        /** How C code can name this type (e.g. "struct ucp_params", "ucs_sock_addr_t"); empty for nested ones. */
        String cSpelling = "";
        boolean complete;
        long size;
        long align;
        final List<Field> fields = new ArrayList<>();
        /** Set for anonymous records that live inside another record. */
        Record enclosing;
        String file = "";
        int line;
        int column;

        Record(String usr, boolean union, String tag) {
            this.usr = usr;
            this.union = union;
            this.tag = tag;
        }

        boolean anonymous() {
            return tag.isEmpty();
        }

        String keyword() {
            return union ? "union" : "struct";
        }
    }

    /**
     * A field of a record. {@code name} is empty for an anonymous struct/union member, whose fields are reached
     * through the enclosing record as in C.
     */
    record Field(String name, CType type, String cSpelling, long offsetBits, boolean bitField, int line,
                 int column) {
        boolean anonymousMember() {
            return name.isEmpty();
        }
    }

    record Function(String name, FunctionType type, String file) {
    }

    /** A constant from an enum or an object-like macro. {@code value} is a Long, Double or String. */
    record Constant(String name, Prim type, Object value, boolean pointer, String file) {
    }

    record TypedefDecl(String name, CType underlying, String file) {
    }

    record Variable(String name, CType type, String cSpelling, String file) {
    }

    /** Everything read from a translation unit, in source order. */
    static final class Unit {
        final List<Function> functions = new ArrayList<>();
        final List<Constant> constants = new ArrayList<>();
        final List<Record> records = new ArrayList<>();
        final List<TypedefDecl> typedefs = new ArrayList<>();
        final List<Variable> variables = new ArrayList<>();
    }
}
