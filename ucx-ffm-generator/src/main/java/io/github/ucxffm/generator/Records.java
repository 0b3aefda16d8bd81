package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Array;
import io.github.ucxffm.generator.Model.CType;
import io.github.ucxffm.generator.Model.Field;
import io.github.ucxffm.generator.Model.FunctionType;
import io.github.ucxffm.generator.Model.Pointer;
import io.github.ucxffm.generator.Model.Primitive;
import io.github.ucxffm.generator.Model.Record;
import io.github.ucxffm.generator.Model.RecordRef;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A class per struct or union: its {@code GroupLayout} with explicit padding where C pads, per field the layout,
 * offset, getter and setter (indexed ones for arrays), nested classes for anonymous records and function pointers
 * that fields declare, and the allocation helpers.
 */
final class Records {

    private final TypeMapping types;
    private final Selection selection;
    private final ReleaseNotes notes;
    private final FunctionPointers pointers;

    Records(TypeMapping types, Selection selection, ReleaseNotes notes, FunctionPointers pointers) {
        this.types = types;
        this.selection = selection;
        this.notes = notes;
        this.pointers = pointers;
    }

    /** A field as the class sees it: anonymous members flattened, with the layout path from the class's layout. */
    private record FlatField(Field field, String path, long offset) {
    }

    /** The class of a selected top-level record. */
    String topLevel(Record r) {
        return recordClass(r, false);
    }

    /** Class text for a record; nested for anonymous records named by a field (indented by the caller). */
    private String recordClass(Record r, boolean nested) {
        String cDecl = r.anonymous() && !nested ? "typedef " + cDeclaration(r, "") + " " + r.javaName
                : cDeclaration(r, "");
        String doc = Docs.snippet("", cDecl, nested ? "" : notes.note(r.javaName));
        String layout = recordLayout(r, "    "); // the record's own errors before those of its nested records
        List<FlatField> flat = new ArrayList<>();
        flatten(r, "", 0, flat);
        List<String> nestedClasses = new ArrayList<>();
        collectNested(r, nestedClasses, new HashSet<>());
        String accessors = flat.stream().map(this::fieldAccessors).collect(Collectors.joining());
        return """
                %1$s%2$s%3$s {

                    %3$s() {
                        // Should not be called directly
                    }

                    private static final GroupLayout $LAYOUT = %4$s.withName("%5$s");

                    /**
                     * The layout of this %6$s
                     */
                    public static final GroupLayout layout() {
                        return $LAYOUT;
                    }
                %7$s%8$s%9$s}
                """.formatted(doc, nested ? "public static class " : "public class ", r.javaName, layout,
                r.anonymous() ? r.javaName : r.tag, r.keyword(), Text.indent(accessors, "    "),
                nestedClasses.stream().map(c -> "\n" + c).collect(Collectors.joining()),
                Text.indent(helpers(r), "    "));
    }

    /**
     * The fields of {@code r} as C code reaches them, into {@code out}: an anonymous member's fields in its place,
     * with the layout path through it; bit-fields left out (a layout cannot address them).
     */
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

    /** The layout name of an anonymous member, unique within its record. */
    private static String anonName(Field f) {
        return "$anon$" + f.line() + ":" + f.column();
    }

    /**
     * The {@code GroupLayout} expression of {@code r}, one element a line below {@code indent}: padding where the
     * offsets clang gives leave gaps, under-aligned fields (packed records) with their real alignment, and a check
     * that the fields add up to clang's {@code sizeof}.
     */
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
                size = TypeMapping.sizeOf(f.type());
                align = TypeMapping.alignOf(f.type());
                String base = types.layout(f.type());
                long natural = align;
                long allowed = offset == 0 ? natural : Math.min(natural, Long.lowestOneBit(offset));
                allowed = Math.min(allowed, r.align);
                if (allowed < natural) {
                    if (TypeMapping.resolve(f.type()) instanceof RecordRef) {
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
            elements.add("MemoryLayout.paddingLayout(" + (r.union ? r.size : r.size - cursor) + ")");
        } else if (cursor > r.size) {
            throw new GeneratorException(r.cSpelling + ": fields end at " + cursor + " but clang says sizeof is "
                    + r.size);
        }
        return "MemoryLayout.%s(%s\n%s)%s".formatted(r.union ? "unionLayout" : "structLayout",
                elements.stream().map(e -> "\n" + indent + "    " + e).collect(Collectors.joining(",")), indent,
                r.align > maxAlign ? ".withByteAlignment(" + r.align + ")" : "");
    }

    /** The C declaration of {@code r} for Javadoc, anonymous records written out where they are declared. */
    private static String cDeclaration(Record r, String indent) {
        String members = r.fields.stream()
                .map(f -> indent + "    " + memberDeclaration(f, indent) + ";\n")
                .collect(Collectors.joining());
        return "%s%s {\n%s%s}".formatted(r.keyword(), r.anonymous() ? "" : " " + r.tag, members, indent);
    }

    /** One member of a C declaration, without the semicolon. */
    private static String memberDeclaration(Field f, String indent) {
        if (f.anonymousMember()) {
            return cDeclaration(((RecordRef) f.type()).record(), indent + "    ");
        }
        if (f.type() instanceof RecordRef(Record m) && m.anonymous()) {
            return cDeclaration(m, indent + "    ") + " " + f.name();
        }
        return Docs.declare(f.cSpelling(), f.name());
    }

    /** Nested classes for anonymous records named by a field, and for function-pointer fields. */
    private void collectNested(Record r, List<String> out, Set<Record> done) {
        for (Field f : r.fields) {
            if (f.bitField()) {
                continue;
            }
            if (f.anonymousMember()) {
                collectNested(((RecordRef) f.type()).record(), out, done);
            } else if (f.type() instanceof RecordRef(Record m) && m.anonymous()) {
                if (done.add(m)) { // struct { ... } a, b; declares one type for two fields
                    out.add(Text.indent(recordClass(m, true), "    "));
                }
            } else if (f.type() instanceof Pointer(FunctionType fp) && selection.supported(fp, "field " + f.name())) {
                out.add(pointers.nested(TypeMapping.javaName(f.name()), fp, Docs.declare(f.cSpelling(), f.name())));
            } else if (f.type() instanceof Array a && TypeMapping.arrayElement(a) instanceof RecordRef(Record m)
                    && m.anonymous() && done.add(m)) {
                out.add(Text.indent(recordClass(m, true), "    "));
            }
        }
    }

    /** A field's layout, offset, getter and setter; arrays also get dimensions and indexed accessors. */
    private String fieldAccessors(FlatField ff) {
        Field f = ff.field();
        String n = TypeMapping.javaName(f.name());
        String cDecl = Docs.declare(f.cSpelling(), f.name());
        CType t = TypeMapping.resolve(f.type());
        String lt = TypeMapping.layoutType(f.type());
        String getterDoc = Docs.doc("", "Getter for field:", cDecl);
        String setterDoc = Docs.doc("", "Setter for field:", cDecl);
        String access = t instanceof Primitive || t instanceof Pointer ? """
                %2$spublic static %4$s %1$s(MemorySegment struct) {
                    return struct.get(%1$s$LAYOUT, %1$s$OFFSET);
                }

                %3$spublic static void %1$s(MemorySegment struct, %4$s fieldValue) {
                    struct.set(%1$s$LAYOUT, %1$s$OFFSET, fieldValue);
                }
                """.formatted(n, getterDoc, setterDoc, TypeMapping.carrier(f.type())) : """
                %2$spublic static MemorySegment %1$s(MemorySegment struct) {
                    return struct.asSlice(%1$s$OFFSET, %1$s$LAYOUT.byteSize());
                }

                %3$spublic static void %1$s(MemorySegment struct, MemorySegment fieldValue) {
                    MemorySegment.copy(fieldValue, 0L, struct, %1$s$OFFSET, %1$s$LAYOUT.byteSize());
                }
                """.formatted(n, getterDoc, setterDoc);
        return """

                private static final %2$s %1$s$LAYOUT = (%2$s)$LAYOUT.select(%3$s);

                %4$spublic static final %2$s %1$s$layout() {
                    return %1$s$LAYOUT;
                }

                private static final long %1$s$OFFSET = %5$s;

                %6$spublic static final long %1$s$offset() {
                    return %1$s$OFFSET;
                }

                %7$s%8$s""".formatted(n, lt, ff.path(), Docs.doc("", "Layout for field:", cDecl), ff.offset(),
                Docs.doc("", "Offset for field:", cDecl), access,
                t instanceof Array ? arrayAccessors(f, n, cDecl) : "");
    }

    /** An array field's dimensions and its per-element getter and setter, one index a dimension. */
    private String arrayAccessors(Field f, String n, String cDecl) {
        List<Long> dims = new ArrayList<>();
        CType e = TypeMapping.resolve(f.type());
        while (e instanceof Array a) {
            dims.add(Math.max(0, a.count()));
            e = TypeMapping.resolve(a.element());
        }
        List<Long> strides = new ArrayList<>();
        long stride = TypeMapping.sizeOf(e);
        for (int i = dims.size() - 1; i >= 0; i--) {
            strides.addFirst(stride);
            stride *= dims.get(i);
        }
        List<String> dimList = new ArrayList<>();
        List<String> indexParams = new ArrayList<>();
        List<String> offsetTerms = new ArrayList<>(List.of(n + "$OFFSET"));
        List<String> elementPath = new ArrayList<>();
        for (int i = 0; i < dims.size(); i++) {
            dimList.add(dims.get(i) + "L");
            indexParams.add(", long index" + i);
            offsetTerms.add("index" + i + " * " + strides.get(i) + "L");
            elementPath.add("sequenceElement()");
        }
        String params = String.join("", indexParams);
        String offset = String.join(" + ", offsetTerms);
        String getterDoc = Docs.doc("", "Indexed getter for field:", cDecl);
        String setterDoc = Docs.doc("", "Indexed setter for field:", cDecl);
        String access = e instanceof Primitive || e instanceof Pointer ? """
                %2$spublic static %6$s %1$s(MemorySegment struct%4$s) {
                    return struct.get(%1$s$ELEM, %5$s);
                }

                %3$spublic static void %1$s(MemorySegment struct%4$s, %6$s fieldValue) {
                    struct.set(%1$s$ELEM, %5$s, fieldValue);
                }
                """.formatted(n, getterDoc, setterDoc, params, offset, TypeMapping.carrier(e)) : """
                %2$spublic static MemorySegment %1$s(MemorySegment struct%4$s) {
                    return struct.asSlice(%5$s, %1$s$ELEM.byteSize());
                }

                %3$spublic static void %1$s(MemorySegment struct%4$s, MemorySegment fieldValue) {
                    MemorySegment.copy(fieldValue, 0L, struct, %5$s, %1$s$ELEM.byteSize());
                }
                """.formatted(n, getterDoc, setterDoc, params, offset);
        String elt = TypeMapping.layoutType(e);
        return """

                private static final long[] %1$s$DIMS = { %2$s };

                %3$spublic static long[] %1$s$dimensions() {
                    return %1$s$DIMS.clone();
                }
                private static final %4$s %1$s$ELEM = (%4$s)%1$s$LAYOUT.select(%5$s);

                %6$s""".formatted(n, String.join(", ", dimList), Docs.doc("", "Dimensions for array field:", cDecl),
                elt, String.join(", ", elementPath), access);
    }

    /** The helpers every record class has: slicing, size, allocation and reinterpretation. */
    private static String helpers(Record r) {
        return """

                /**
                 * Obtains a slice of {@code arrayParam} which selects the array element at {@code index}.
                 * The returned segment has address {@code arrayParam.address() + index * layout().byteSize()}
                 */
                public static MemorySegment asSlice(MemorySegment array, long index) {
                    return array.asSlice(layout().byteSize() * index);
                }

                /**
                 * The size (in bytes) of this %1$s
                 */
                public static long sizeof() {
                    return layout().byteSize();
                }

                /**
                 * Allocate a segment of size {@code layout().byteSize()} using {@code allocator}
                 */
                public static MemorySegment allocate(SegmentAllocator allocator) {
                    return allocator.allocate(layout());
                }

                /**
                 * Allocate an array of size {@code elementCount} using {@code allocator}.
                 * The returned segment has size {@code elementCount * layout().byteSize()}.
                 */
                public static MemorySegment allocateArray(long elementCount, SegmentAllocator allocator) {
                    return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
                }

                /**
                 * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
                 * The returned segment has size {@code layout().byteSize()}
                 */
                public static MemorySegment reinterpret(MemorySegment addr, Arena arena, Consumer<MemorySegment> cleanup) {
                    return reinterpret(addr, 1, arena, cleanup);
                }

                /**
                 * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
                 * The returned segment has size {@code elementCount * layout().byteSize()}
                 */
                public static MemorySegment reinterpret(MemorySegment addr, long elementCount, Arena arena, Consumer<MemorySegment> cleanup) {
                    return addr.reinterpret(layout().byteSize() * elementCount, arena, cleanup);
                }
                """.formatted(r.keyword());
    }
}
