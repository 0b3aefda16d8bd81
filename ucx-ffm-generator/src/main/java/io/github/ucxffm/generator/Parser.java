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

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.github.ucxffm.generator.LibClang.*;

/** Walks a libclang translation unit and builds the {@link Model}. */
final class Parser {

    private static final String MACRO_FILE = "ucxffm_macros.c";
    private static final String MACRO_PREFIX = "ucxffm_macro_";
    private static final Pattern MACRO_ERROR_LINE = Pattern.compile(Pattern.quote(MACRO_FILE) + ":(\\d+):");

    private final LibClang clang;
    private final List<String> clangArgs;
    private final Map<String, Record> records = new HashMap<>();
    private final Map<String, Typedef> typedefTypes = new HashMap<>();
    private final Unit unit = new Unit();
    private final Set<String> seenFunctions = new HashSet<>();
    private final Set<String> seenConstants = new HashSet<>();
    private final Set<String> seenTypedefs = new HashSet<>();
    private final Set<String> seenVariables = new HashSet<>();

    Parser(LibClang clang, List<String> clangArgs) {
        this.clang = clang;
        List<String> args = new ArrayList<>(List.of("-x", "c", "-std=gnu11", "-ferror-limit=0"));
        clang.resourceIncludeDir().ifPresent(dir -> args.addAll(List.of("-isystem", dir.toString())));
        args.addAll(clangArgs);
        this.clangArgs = List.copyOf(args);
    }

    /**
     * Parses {@code header}. Macros are evaluated when their name passes {@code wantMacro} and their definition's
     * file passes {@code macroFile}.
     */
    Unit parse(String header, Predicate<String> macroFile, Predicate<String> wantMacro) {
        try (LibClang.TranslationUnit tu = clang.parse(header, clangArgs, null, null)) {
            List<String> errors = tu.errors();
            if (!errors.isEmpty()) {
                throw new GeneratorException("clang reports errors in " + header + ":\n  " + String.join("\n  ", errors));
            }
            Map<String, String> macros = new LinkedHashMap<>();
            for (MemorySegment cursor : clang.children(tu.cursor())) {
                switch (clang.kind(cursor)) {
                    case CURSOR_FUNCTION_DECL -> function(cursor);
                    case CURSOR_STRUCT_DECL, CURSOR_UNION_DECL -> topLevelRecord(cursor);
                    case CURSOR_ENUM_DECL -> enumeration(cursor);
                    case CURSOR_TYPEDEF_DECL -> typedef(cursor);
                    case CURSOR_VAR_DECL -> variable(cursor);
                    case CURSOR_MACRO_DEFINITION -> {
                        if (!clang.isMacroBuiltin(cursor) && !clang.isMacroFunctionLike(cursor)) {
                            String name = clang.spelling(cursor);
                            String file = clang.location(cursor).file();
                            if (!file.isEmpty() && macroFile.test(file) && wantMacro.test(name)) {
                                macros.putIfAbsent(name, file);
                            }
                        }
                    }
                    default -> {
                    }
                }
            }
            evaluateMacros(header, macros);
        }
        return unit;
    }

    // ---- declarations ---------------------------------------------------------------------------------------------

    private void function(MemorySegment cursor) {
        if (clang.isFunctionInlined(cursor) || clang.storageClass(cursor) == STORAGE_STATIC) {
            return; // static inline functions exist in no library
        }
        String name = clang.spelling(cursor);
        if (!seenFunctions.add(name)) {
            return;
        }
        List<String> names = new ArrayList<>();
        int n = clang.numArguments(cursor);
        for (int i = 0; i < n; i++) {
            names.add(clang.spelling(clang.argument(cursor, i)));
        }
        CType type = functionType(clang.type(cursor), names);
        if (type instanceof FunctionType ft) {
            unit.functions.add(new Function(name, ft, clang.location(cursor).file()));
        }
    }

    private void topLevelRecord(MemorySegment cursor) {
        Record record = record(cursor);
        if (record.complete && !unit.records.contains(record)) {
            unit.records.add(record);
        }
    }

    private void enumeration(MemorySegment cursor) {
        MemorySegment integer = clang.canonical(clang.enumIntegerType(cursor));
        int integerKind = clang.typeKind(integer);
        boolean unsigned = switch (integerKind) {
            case TYPE_UCHAR, TYPE_CHAR_U, TYPE_USHORT, TYPE_UINT, TYPE_ULONG, TYPE_ULONGLONG -> true;
            default -> false;
        };
        Prim prim = clang.sizeOf(integer) > 4 ? Prim.LONG : Prim.INT;
        String file = clang.location(cursor).file();
        for (MemorySegment child : clang.children(cursor)) {
            if (clang.kind(child) != CURSOR_ENUM_CONSTANT_DECL) {
                continue;
            }
            String name = clang.spelling(child);
            if (seenConstants.add(name)) {
                long value = unsigned ? clang.enumConstantUnsignedValue(child) : clang.enumConstantValue(child);
                unit.constants.add(new Constant(name, prim, value, false, file));
            }
        }
    }

    private void typedef(MemorySegment cursor) {
        String name = clang.spelling(cursor);
        if (!seenTypedefs.add(name)) {
            return;
        }
        CType underlying = withParamNames(convert(clang.typedefUnderlying(cursor)), cursor);
        if (underlying instanceof RecordRef(Record r) && r.anonymous() && r.javaName == null) {
            r.javaName = name;
            r.cSpelling = name;
        }
        unit.typedefs.add(new TypedefDecl(name, underlying, clang.location(cursor).file()));
    }

    private void variable(MemorySegment cursor) {
        if (clang.linkage(cursor) != LINKAGE_EXTERNAL || clang.storageClass(cursor) == STORAGE_STATIC) {
            return;
        }
        String name = clang.spelling(cursor);
        if (seenVariables.add(name)) {
            MemorySegment type = clang.type(cursor);
            unit.variables.add(new Variable(name, convert(type), clang.typeSpelling(type),
                    clang.location(cursor).file()));
        }
    }

    // ---- records ----------------------------------------------------------------------------------------------------

    private Record record(MemorySegment declaration) {
        MemorySegment definition = clang.definition(declaration);
        boolean complete = clang.kind(definition) == CURSOR_STRUCT_DECL || clang.kind(definition) == CURSOR_UNION_DECL;
        MemorySegment cursor = complete ? definition : declaration;
        String usr = clang.usr(cursor);
        Record known = records.get(usr);
        if (known != null) {
            return known;
        }
        String spelling = clang.spelling(cursor);
        // libclang versions disagree on how to report a tag-less record (a typedef may lend it its name, newer
        // ones spell "struct (unnamed at ...)"); its USR says it in every version.
        boolean anonymous = clang.isAnonymous(cursor) || spelling.isEmpty() || spelling.contains("(unnamed")
                || spelling.contains("(anonymous") || usr.contains("@SA@") || usr.contains("@UA@");
        Record record = new Record(usr, clang.kind(cursor) == CURSOR_UNION_DECL, anonymous ? "" : spelling);
        records.put(usr, record);
        LibClang.Location location = clang.location(cursor);
        record.file = location.file();
        record.line = location.line();
        record.column = location.column();
        if (!anonymous) {
            record.javaName = record.tag;
            record.cSpelling = record.keyword() + " " + record.tag;
        }
        if (!complete) {
            return record;
        }
        MemorySegment type = clang.type(cursor);
        record.complete = true;
        record.size = clang.sizeOf(type);
        record.align = clang.alignOf(type);
        for (MemorySegment child : clang.children(cursor)) {
            int kind = clang.kind(child);
            if (kind == CURSOR_FIELD_DECL) {
                field(record, child);
            } else if ((kind == CURSOR_STRUCT_DECL || kind == CURSOR_UNION_DECL) && clang.isAnonymousRecordDecl(child)) {
                Record member = record(child);
                member.enclosing = record;
                long offset = anonymousMemberOffset(type, member);
                LibClang.Location at = clang.location(child);
                record.fields.add(new Field("", new RecordRef(member), member.keyword(), offset, false,
                        at.line(), at.column()));
            } else if (kind == CURSOR_STRUCT_DECL || kind == CURSOR_UNION_DECL) {
                Record nested = record(child);
                if (!nested.anonymous() && nested.complete && !unit.records.contains(nested)) {
                    unit.records.add(nested); // a tagged struct defined inside another is file-scoped in C
                }
            }
        }
        return record;
    }

    private void field(Record record, MemorySegment cursor) {
        String name = clang.spelling(cursor);
        MemorySegment fieldType = clang.type(cursor);
        CType type = withParamNames(convert(fieldType), cursor);
        CType element = type;
        while (element instanceof Array(CType inner, long ignored)) {
            element = inner; // struct { ... } a[2][3]; names its anonymous type too
        }
        if (element instanceof RecordRef(Record nested) && nested.anonymous() && nested.javaName == null) {
            nested.javaName = name;
            nested.enclosing = record;
        }
        LibClang.Location at = clang.location(cursor);
        record.fields.add(new Field(name, type, clang.typeSpelling(fieldType), clang.offsetOfFieldBits(cursor),
                clang.isBitField(cursor), at.line(), at.column()));
    }

    /** Function-pointer typedefs and fields carry their parameter names as ParmDecl children. */
    private CType withParamNames(CType type, MemorySegment cursor) {
        CType target = type instanceof Pointer(CType pointee) ? pointee : type;
        if (!(target instanceof FunctionType ft) || ft.params().isEmpty()) {
            return type;
        }
        List<String> names = new ArrayList<>();
        for (MemorySegment child : clang.children(cursor)) {
            if (clang.kind(child) == CURSOR_PARM_DECL) {
                names.add(clang.spelling(child));
            }
        }
        if (names.size() != ft.params().size()) {
            return type;
        }
        FunctionType named = new FunctionType(ft.result(), ft.params(), names, ft.paramSpellings(),
                ft.resultSpelling(), ft.variadic(), ft.noPrototype());
        return type instanceof Pointer ? new Pointer(named) : named;
    }

    /** C gives the offsets of an anonymous member's fields relative to the outer record; derive the member's own. */
    private long anonymousMemberOffset(MemorySegment outerType, Record member) {
        long relative = 0;
        Record current = member;
        while (true) {
            Field first = current.fields.stream().filter(f -> !f.bitField()).findFirst()
                    .orElseThrow(() -> new GeneratorException("anonymous member without fields in " + member.file
                            + ":" + member.line));
            relative += first.offsetBits();
            if (!first.anonymousMember()) {
                long outer = clang.offsetOfBits(outerType, first.name());
                if (outer < 0) {
                    throw new GeneratorException("clang gives no offset for " + first.name() + " in " + member.file);
                }
                return outer - relative;
            }
            current = ((RecordRef) first.type()).record();
        }
    }

    // ---- types ------------------------------------------------------------------------------------------------------

    private CType convert(MemorySegment type) {
        int kind = clang.typeKind(type);
        return switch (kind) {
            case TYPE_VOID -> new Model.Void();
            case TYPE_BOOL -> new Primitive(Prim.BOOL);
            case TYPE_CHAR_U, TYPE_UCHAR, TYPE_CHAR_S, TYPE_SCHAR -> new Primitive(Prim.CHAR);
            case TYPE_SHORT, TYPE_USHORT -> new Primitive(Prim.SHORT);
            case TYPE_INT, TYPE_UINT -> new Primitive(Prim.INT);
            case TYPE_LONG, TYPE_ULONG -> new Primitive(Prim.LONG);
            case TYPE_LONGLONG, TYPE_ULONGLONG -> new Primitive(Prim.LONG_LONG);
            case TYPE_FLOAT -> new Primitive(Prim.FLOAT);
            case TYPE_DOUBLE -> new Primitive(Prim.DOUBLE);
            case TYPE_LONGDOUBLE, TYPE_INT128, TYPE_UINT128 -> new Unsupported(clang.typeSpelling(type));
            case TYPE_ELABORATED -> convert(clang.namedType(type));
            case TYPE_ATOMIC -> convert(clang.valueType(type));
            case TYPE_POINTER -> new Pointer(convert(clang.pointee(type)));
            case TYPE_CONSTANT_ARRAY -> new Array(convert(clang.elementType(type)), clang.arraySize(type));
            case TYPE_INCOMPLETE_ARRAY -> new Array(convert(clang.elementType(type)), -1);
            case TYPE_RECORD -> new RecordRef(record(clang.declaration(type)));
            case TYPE_ENUM -> {
                MemorySegment decl = clang.declaration(type);
                yield new EnumRef(clang.spelling(decl), convert(clang.enumIntegerType(decl)));
            }
            case TYPE_TYPEDEF -> {
                MemorySegment decl = clang.declaration(type);
                String name = clang.spelling(decl);
                Typedef known = typedefTypes.get(name);
                if (known == null) {
                    known = new Typedef(name, convert(clang.typedefUnderlying(decl)));
                    typedefTypes.put(name, known);
                }
                yield known;
            }
            case TYPE_FUNCTION_PROTO, TYPE_FUNCTION_NO_PROTO -> functionType(type, List.of());
            default -> {
                MemorySegment canonical = clang.canonical(type);
                yield clang.typeKind(canonical) != kind ? convert(canonical) : new Unsupported(clang.typeSpelling(type));
            }
        };
    }

    private CType functionType(MemorySegment type, List<String> names) {
        int kind = clang.typeKind(type);
        if (kind != TYPE_FUNCTION_PROTO && kind != TYPE_FUNCTION_NO_PROTO) {
            return convert(type);
        }
        MemorySegment result = clang.resultType(type);
        List<CType> params = new ArrayList<>();
        List<String> spellings = new ArrayList<>();
        List<String> paramNames = new ArrayList<>();
        int n = kind == TYPE_FUNCTION_PROTO ? clang.numArgTypes(type) : 0;
        for (int i = 0; i < n; i++) {
            MemorySegment arg = clang.argType(type, i);
            CType converted = convert(arg);
            if (converted instanceof Array(CType element, long ignored)) {
                converted = new Pointer(element); // parameters of array type are pointers in C
            }
            params.add(converted);
            spellings.add(clang.typeSpelling(arg));
            paramNames.add(i < names.size() ? names.get(i) : "");
        }
        return new FunctionType(convert(result), params, paramNames, spellings, clang.typeSpelling(result),
                kind == TYPE_FUNCTION_PROTO && clang.isVariadic(type), kind == TYPE_FUNCTION_NO_PROTO);
    }

    // ---- macros -----------------------------------------------------------------------------------------------------

    /**
     * Clang evaluates object-like macros for us: each becomes the initializer of an {@code __auto_type} variable in
     * a snippet that includes the header; the variable's type is the macro's C type. Macros that are not constant
     * expressions make their line fail and are dropped; the snippet is parsed again without them, so that one bad
     * line cannot hide good ones.
     */
    private void evaluateMacros(String header, Map<String, String> macros) {
        List<String> names = new ArrayList<>(macros.keySet());
        for (int round = 0; round < 8 && !names.isEmpty(); round++) {
            StringBuilder snippet = new StringBuilder("#include \"").append(header).append("\"\n");
            for (int i = 0; i < names.size(); i++) {
                snippet.append("__auto_type ").append(MACRO_PREFIX).append(i).append(" = ").append(names.get(i))
                        .append(";\n");
            }
            try (LibClang.TranslationUnit tu = clang.parse(MACRO_FILE, clangArgs, MACRO_FILE, snippet.toString())) {
                Set<Integer> badLines = new HashSet<>();
                for (LibClang.Diagnostic error : tu.errorDiagnostics()) {
                    Matcher m = MACRO_ERROR_LINE.matcher(error.text());
                    if (error.expansionFile().endsWith(MACRO_FILE)) {
                        badLines.add(error.expansionLine());
                    } else if (m.find()) {
                        badLines.add(Integer.parseInt(m.group(1)));
                    } else {
                        throw new GeneratorException("evaluating macros failed outside the snippet: " + error.text());
                    }
                }
                if (!badLines.isEmpty()) {
                    List<String> kept = new ArrayList<>();
                    for (int i = 0; i < names.size(); i++) {
                        if (!badLines.contains(i + 2)) {
                            kept.add(names.get(i));
                        }
                    }
                    names = kept;
                    continue;
                }
                for (MemorySegment cursor : clang.children(tu.cursor())) {
                    if (clang.kind(cursor) != CURSOR_VAR_DECL) {
                        continue;
                    }
                    String var = clang.spelling(cursor);
                    if (!var.startsWith(MACRO_PREFIX) || clang.isInvalidDeclaration(cursor)) {
                        continue;
                    }
                    String name = names.get(Integer.parseInt(var.substring(MACRO_PREFIX.length())));
                    macroConstant(name, macros.get(name), cursor);
                }
                return;
            }
        }
    }

    private void macroConstant(String name, String file, MemorySegment cursor) {
        if (seenConstants.contains(name)) {
            return;
        }
        MemorySegment type = clang.canonical(clang.type(cursor));
        Optional<LibClang.Value> value = clang.evaluate(cursor);
        if (value.isEmpty()) {
            return;
        }
        Constant constant = switch (value.get()) {
            case LibClang.StringValue(String s) -> clang.typeKind(type) == TYPE_POINTER
                    ? new Constant(name, null, s, false, file) : null;
            case LibClang.FloatValue(double d) -> switch (clang.typeKind(type)) {
                case TYPE_FLOAT -> new Constant(name, Prim.FLOAT, d, false, file);
                case TYPE_DOUBLE -> new Constant(name, Prim.DOUBLE, d, false, file);
                default -> null;
            };
            case LibClang.IntValue(long v, boolean ignored) -> {
                int kind = clang.typeKind(type);
                if (kind == TYPE_POINTER) {
                    yield new Constant(name, Prim.LONG, v, true, file);
                }
                if (kind == TYPE_BOOL || kind == TYPE_LONGDOUBLE || kind == TYPE_FLOAT || kind == TYPE_DOUBLE) {
                    yield null;
                }
                yield new Constant(name, clang.sizeOf(type) > 4 ? Prim.LONG : Prim.INT, v, false, file);
            }
        };
        if (constant != null) {
            seenConstants.add(name);
            unit.constants.add(constant);
        }
    }
}
