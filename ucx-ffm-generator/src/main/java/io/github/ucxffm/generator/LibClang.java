package io.github.ucxffm.generator;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The part of libclang's C API the generator uses, bound by hand (a generator cannot generate its own parser's
 * bindings before it exists). All by-value libclang records are kept as {@link MemorySegment}s allocated in the
 * session arena, which lives as long as the translation units.
 */
final class LibClang implements AutoCloseable {

    static final StructLayout CX_CURSOR = MemoryLayout.structLayout(
            JAVA_INT.withName("kind"), JAVA_INT.withName("xdata"),
            MemoryLayout.sequenceLayout(3, ADDRESS).withName("data"));
    static final StructLayout CX_TYPE = MemoryLayout.structLayout(
            JAVA_INT.withName("kind"), MemoryLayout.paddingLayout(4),
            MemoryLayout.sequenceLayout(2, ADDRESS).withName("data"));
    static final StructLayout CX_STRING = MemoryLayout.structLayout(
            ADDRESS.withName("data"), JAVA_INT.withName("private_flags"), MemoryLayout.paddingLayout(4));
    static final StructLayout CX_SOURCE_LOCATION = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(2, ADDRESS).withName("ptr_data"), JAVA_INT.withName("int_data"),
            MemoryLayout.paddingLayout(4));
    static final StructLayout CX_UNSAVED_FILE = MemoryLayout.structLayout(
            ADDRESS.withName("Filename"), ADDRESS.withName("Contents"), JAVA_LONG.withName("Length"));

    // CXCursorKind
    static final int CURSOR_STRUCT_DECL = 2;
    static final int CURSOR_UNION_DECL = 3;
    static final int CURSOR_ENUM_DECL = 5;
    static final int CURSOR_FIELD_DECL = 6;
    static final int CURSOR_ENUM_CONSTANT_DECL = 7;
    static final int CURSOR_FUNCTION_DECL = 8;
    static final int CURSOR_VAR_DECL = 9;
    static final int CURSOR_PARM_DECL = 10;
    static final int CURSOR_TYPEDEF_DECL = 20;
    static final int CURSOR_MACRO_DEFINITION = 501;

    // CXTypeKind
    static final int TYPE_INVALID = 0;
    static final int TYPE_VOID = 2;
    static final int TYPE_BOOL = 3;
    static final int TYPE_CHAR_U = 4;
    static final int TYPE_UCHAR = 5;
    static final int TYPE_USHORT = 8;
    static final int TYPE_UINT = 9;
    static final int TYPE_ULONG = 10;
    static final int TYPE_ULONGLONG = 11;
    static final int TYPE_UINT128 = 12;
    static final int TYPE_CHAR_S = 13;
    static final int TYPE_SCHAR = 14;
    static final int TYPE_SHORT = 16;
    static final int TYPE_INT = 17;
    static final int TYPE_LONG = 18;
    static final int TYPE_LONGLONG = 19;
    static final int TYPE_INT128 = 20;
    static final int TYPE_FLOAT = 21;
    static final int TYPE_DOUBLE = 22;
    static final int TYPE_LONGDOUBLE = 23;
    static final int TYPE_POINTER = 101;
    static final int TYPE_RECORD = 105;
    static final int TYPE_ENUM = 106;
    static final int TYPE_TYPEDEF = 107;
    static final int TYPE_FUNCTION_NO_PROTO = 110;
    static final int TYPE_FUNCTION_PROTO = 111;
    static final int TYPE_CONSTANT_ARRAY = 112;
    static final int TYPE_INCOMPLETE_ARRAY = 114;
    static final int TYPE_ELABORATED = 119;
    static final int TYPE_ATOMIC = 177;

    // CXLinkageKind
    static final int LINKAGE_EXTERNAL = 4;
    // CX_StorageClass
    static final int STORAGE_STATIC = 3;
    // CXEvalResultKind
    static final int EVAL_INT = 1;
    static final int EVAL_FLOAT = 2;
    static final int EVAL_STR_LITERAL = 4;
    // CXDiagnosticSeverity
    static final int DIAGNOSTIC_ERROR = 3;
    // CXTranslationUnit_Flags
    static final int TU_DETAILED_PREPROCESSING_RECORD = 0x01;
    static final int TU_SKIP_FUNCTION_BODIES = 0x40;

    /**
     * Where libclang is looked for when neither the option nor UCXFFM_LIBCLANG names it: every installed LLVM
     * ({@code /usr/lib/llvm-N/lib}, newest first; Debian's libclang1-N puts {@code libclang-N.so.1} there, and
     * up to LLVM 18 also {@code libclang.so.1}), then the unversioned names of other distributions.
     */
    private static final List<Path> LLVM_ROOTS = List.of(Path.of("/usr/lib"), Path.of("/usr/lib64"));

    private static final List<Path> OTHER_CANDIDATES = List.of(
            Path.of("/usr/lib/x86_64-linux-gnu/libclang.so.1"), Path.of("/usr/lib/libclang.so"),
            Path.of("/usr/lib64/libclang.so"));

    private static final Linker LINKER = Linker.nativeLinker();

    final Arena arena = Arena.ofConfined();
    final Path libraryPath;
    private final SymbolLookup lookup;

    private final MethodHandle createIndex;
    private final MethodHandle disposeIndex;
    private final MethodHandle parseTranslationUnit;
    private final MethodHandle disposeTranslationUnit;
    private final MethodHandle getNumDiagnostics;
    private final MethodHandle getDiagnostic;
    private final MethodHandle getDiagnosticSeverity;
    private final MethodHandle formatDiagnostic;
    private final MethodHandle disposeDiagnostic;
    private final MethodHandle getTranslationUnitCursor;
    private final MethodHandle visitChildren;
    private final MethodHandle getCursorKind;
    private final MethodHandle getCursorSpelling;
    private final MethodHandle getCursorUSR;
    private final MethodHandle getCursorLocation;
    private final MethodHandle getSpellingLocation;
    private final MethodHandle getDiagnosticLocation;
    private final MethodHandle getExpansionLocation;
    private final MethodHandle getFileName;
    private final MethodHandle getCursorType;
    private final MethodHandle getCanonicalType;
    private final MethodHandle getTypedefDeclUnderlyingType;
    private final MethodHandle getTypeDeclaration;
    private final MethodHandle getPointeeType;
    private final MethodHandle getArrayElementType;
    private final MethodHandle getArraySize;
    private final MethodHandle typeGetSizeOf;
    private final MethodHandle typeGetAlignOf;
    private final MethodHandle typeGetNamedType;
    private final MethodHandle typeGetValueType;
    private final MethodHandle getResultType;
    private final MethodHandle getNumArgTypes;
    private final MethodHandle getArgType;
    private final MethodHandle isFunctionTypeVariadic;
    private final MethodHandle getTypeSpelling;
    private final MethodHandle cursorGetNumArguments;
    private final MethodHandle cursorGetArgument;
    private final MethodHandle cursorIsFunctionInlined;
    private final MethodHandle getCursorLinkage;
    private final MethodHandle cursorGetStorageClass;
    private final MethodHandle cursorIsAnonymous;
    private final MethodHandle cursorIsAnonymousRecordDecl;
    private final MethodHandle cursorIsBitField;
    private final MethodHandle cursorGetOffsetOfField;
    private final MethodHandle typeGetOffsetOf;
    private final MethodHandle getEnumDeclIntegerType;
    private final MethodHandle getEnumConstantDeclValue;
    private final MethodHandle getEnumConstantDeclUnsignedValue;
    private final MethodHandle cursorIsMacroFunctionLike;
    private final MethodHandle cursorIsMacroBuiltin;
    private final MethodHandle isCursorDefinition;
    private final MethodHandle getCursorDefinition;
    private final MethodHandle cursorEvaluate;
    private final MethodHandle evalGetKind;
    private final MethodHandle evalGetAsLongLong;
    private final MethodHandle evalIsUnsignedInt;
    private final MethodHandle evalGetAsUnsigned;
    private final MethodHandle evalGetAsDouble;
    private final MethodHandle evalGetAsStr;
    private final MethodHandle evalDispose;
    private final MethodHandle isInvalidDeclaration;
    private final MethodHandle getCString;
    private final MethodHandle disposeString;
    private final MethodHandle getClangVersion;
    private final MethodHandle visitorUpcall;

    private List<MemorySegment> collecting;

    LibClang(Optional<Path> explicitPath) {
        this.libraryPath = locate(explicitPath);
        disableCrashRecovery();
        this.lookup = SymbolLookup.libraryLookup(libraryPath, Arena.global());
        AddressLayout p = ADDRESS;
        createIndex = fn("clang_createIndex", FunctionDescriptor.of(p, JAVA_INT, JAVA_INT));
        disposeIndex = fn("clang_disposeIndex", FunctionDescriptor.ofVoid(p));
        parseTranslationUnit = fn("clang_parseTranslationUnit",
                FunctionDescriptor.of(p, p, p, p, JAVA_INT, p, JAVA_INT, JAVA_INT));
        disposeTranslationUnit = fn("clang_disposeTranslationUnit", FunctionDescriptor.ofVoid(p));
        getNumDiagnostics = fn("clang_getNumDiagnostics", FunctionDescriptor.of(JAVA_INT, p));
        getDiagnostic = fn("clang_getDiagnostic", FunctionDescriptor.of(p, p, JAVA_INT));
        getDiagnosticSeverity = fn("clang_getDiagnosticSeverity", FunctionDescriptor.of(JAVA_INT, p));
        formatDiagnostic = fn("clang_formatDiagnostic", FunctionDescriptor.of(CX_STRING, p, JAVA_INT));
        disposeDiagnostic = fn("clang_disposeDiagnostic", FunctionDescriptor.ofVoid(p));
        getTranslationUnitCursor = fn("clang_getTranslationUnitCursor", FunctionDescriptor.of(CX_CURSOR, p));
        visitChildren = fn("clang_visitChildren", FunctionDescriptor.of(JAVA_INT, CX_CURSOR, p, p));
        getCursorKind = fn("clang_getCursorKind", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        getCursorSpelling = fn("clang_getCursorSpelling", FunctionDescriptor.of(CX_STRING, CX_CURSOR));
        getCursorUSR = fn("clang_getCursorUSR", FunctionDescriptor.of(CX_STRING, CX_CURSOR));
        getCursorLocation = fn("clang_getCursorLocation", FunctionDescriptor.of(CX_SOURCE_LOCATION, CX_CURSOR));
        getSpellingLocation = fn("clang_getSpellingLocation",
                FunctionDescriptor.ofVoid(CX_SOURCE_LOCATION, p, p, p, p));
        getFileName = fn("clang_getFileName", FunctionDescriptor.of(CX_STRING, p));
        getDiagnosticLocation = fn("clang_getDiagnosticLocation", FunctionDescriptor.of(CX_SOURCE_LOCATION, p));
        getExpansionLocation = fn("clang_getExpansionLocation",
                FunctionDescriptor.ofVoid(CX_SOURCE_LOCATION, p, p, p, p));
        getCursorType = fn("clang_getCursorType", FunctionDescriptor.of(CX_TYPE, CX_CURSOR));
        getCanonicalType = fn("clang_getCanonicalType", FunctionDescriptor.of(CX_TYPE, CX_TYPE));
        getTypedefDeclUnderlyingType = fn("clang_getTypedefDeclUnderlyingType",
                FunctionDescriptor.of(CX_TYPE, CX_CURSOR));
        getTypeDeclaration = fn("clang_getTypeDeclaration", FunctionDescriptor.of(CX_CURSOR, CX_TYPE));
        getPointeeType = fn("clang_getPointeeType", FunctionDescriptor.of(CX_TYPE, CX_TYPE));
        getArrayElementType = fn("clang_getArrayElementType", FunctionDescriptor.of(CX_TYPE, CX_TYPE));
        getArraySize = fn("clang_getArraySize", FunctionDescriptor.of(JAVA_LONG, CX_TYPE));
        typeGetSizeOf = fn("clang_Type_getSizeOf", FunctionDescriptor.of(JAVA_LONG, CX_TYPE));
        typeGetAlignOf = fn("clang_Type_getAlignOf", FunctionDescriptor.of(JAVA_LONG, CX_TYPE));
        typeGetNamedType = fn("clang_Type_getNamedType", FunctionDescriptor.of(CX_TYPE, CX_TYPE));
        typeGetValueType = fn("clang_Type_getValueType", FunctionDescriptor.of(CX_TYPE, CX_TYPE));
        getResultType = fn("clang_getResultType", FunctionDescriptor.of(CX_TYPE, CX_TYPE));
        getNumArgTypes = fn("clang_getNumArgTypes", FunctionDescriptor.of(JAVA_INT, CX_TYPE));
        getArgType = fn("clang_getArgType", FunctionDescriptor.of(CX_TYPE, CX_TYPE, JAVA_INT));
        isFunctionTypeVariadic = fn("clang_isFunctionTypeVariadic", FunctionDescriptor.of(JAVA_INT, CX_TYPE));
        getTypeSpelling = fn("clang_getTypeSpelling", FunctionDescriptor.of(CX_STRING, CX_TYPE));
        cursorGetNumArguments = fn("clang_Cursor_getNumArguments", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        cursorGetArgument = fn("clang_Cursor_getArgument", FunctionDescriptor.of(CX_CURSOR, CX_CURSOR, JAVA_INT));
        cursorIsFunctionInlined = fn("clang_Cursor_isFunctionInlined", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        getCursorLinkage = fn("clang_getCursorLinkage", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        cursorGetStorageClass = fn("clang_Cursor_getStorageClass", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        cursorIsAnonymous = fn("clang_Cursor_isAnonymous", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        cursorIsAnonymousRecordDecl = fn("clang_Cursor_isAnonymousRecordDecl",
                FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        cursorIsBitField = fn("clang_Cursor_isBitField", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        cursorGetOffsetOfField = fn("clang_Cursor_getOffsetOfField", FunctionDescriptor.of(JAVA_LONG, CX_CURSOR));
        typeGetOffsetOf = fn("clang_Type_getOffsetOf", FunctionDescriptor.of(JAVA_LONG, CX_TYPE, p));
        getEnumDeclIntegerType = fn("clang_getEnumDeclIntegerType", FunctionDescriptor.of(CX_TYPE, CX_CURSOR));
        getEnumConstantDeclValue = fn("clang_getEnumConstantDeclValue", FunctionDescriptor.of(JAVA_LONG, CX_CURSOR));
        getEnumConstantDeclUnsignedValue = fn("clang_getEnumConstantDeclUnsignedValue",
                FunctionDescriptor.of(JAVA_LONG, CX_CURSOR));
        cursorIsMacroFunctionLike = fn("clang_Cursor_isMacroFunctionLike",
                FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        cursorIsMacroBuiltin = fn("clang_Cursor_isMacroBuiltin", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        isCursorDefinition = fn("clang_isCursorDefinition", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        getCursorDefinition = fn("clang_getCursorDefinition", FunctionDescriptor.of(CX_CURSOR, CX_CURSOR));
        cursorEvaluate = fn("clang_Cursor_Evaluate", FunctionDescriptor.of(p, CX_CURSOR));
        evalGetKind = fn("clang_EvalResult_getKind", FunctionDescriptor.of(JAVA_INT, p));
        evalGetAsLongLong = fn("clang_EvalResult_getAsLongLong", FunctionDescriptor.of(JAVA_LONG, p));
        evalIsUnsignedInt = fn("clang_EvalResult_isUnsignedInt", FunctionDescriptor.of(JAVA_INT, p));
        evalGetAsUnsigned = fn("clang_EvalResult_getAsUnsigned", FunctionDescriptor.of(JAVA_LONG, p));
        evalGetAsDouble = fn("clang_EvalResult_getAsDouble", FunctionDescriptor.of(ValueLayout.JAVA_DOUBLE, p));
        evalGetAsStr = fn("clang_EvalResult_getAsStr", FunctionDescriptor.of(p, p));
        evalDispose = fn("clang_EvalResult_dispose", FunctionDescriptor.ofVoid(p));
        isInvalidDeclaration = fn("clang_isInvalidDeclaration", FunctionDescriptor.of(JAVA_INT, CX_CURSOR));
        getCString = fn("clang_getCString", FunctionDescriptor.of(p, CX_STRING));
        disposeString = fn("clang_disposeString", FunctionDescriptor.ofVoid(CX_STRING));
        getClangVersion = fn("clang_getClangVersion", FunctionDescriptor.of(CX_STRING));
        try {
            MethodHandle visit = MethodHandles.lookup().findVirtual(LibClang.class, "visit",
                    MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, MemorySegment.class));
            visitorUpcall = visit.bindTo(this);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * clang_createIndex turns on libclang's crash recovery unless LIBCLANG_DISABLE_CRASH_RECOVERY is set. Its
     * SIGSEGV handler stays installed after the call and re-raises every SIGSEGV that happens outside libclang as a
     * fatal one, but the JVM takes SIGSEGV on purpose (implicit null checks, safepoint polls): the JVM would die at
     * a random later point. So the variable is set before the first index exists.
     */
    private static void disableCrashRecovery() {
        MemorySegment setenv = LINKER.defaultLookup().find("setenv").orElseThrow(
                () -> new GeneratorException("the C library has no setenv"));
        MethodHandle handle = LINKER.downcallHandle(setenv, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        try (Arena scratch = Arena.ofConfined()) {
            int rc = (int) handle.invokeExact(scratch.allocateFrom("LIBCLANG_DISABLE_CRASH_RECOVERY"),
                    scratch.allocateFrom("1"), 1);
            if (rc != 0) {
                throw new GeneratorException("setenv(LIBCLANG_DISABLE_CRASH_RECOVERY) failed");
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static Path locate(Optional<Path> explicitPath) {
        if (explicitPath.isPresent()) {
            return requireFile(explicitPath.get(), "--libclang");
        }
        String env = System.getenv("UCXFFM_LIBCLANG");
        if (env != null && !env.isBlank()) {
            return requireFile(Path.of(env), "UCXFFM_LIBCLANG");
        }
        List<Path> candidates = candidates();
        for (Path candidate : candidates) {
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new GeneratorException("libclang not found (looked in " + candidates + "); install your "
                + "distribution's libclang (Debian: libclang1-N and libclang-common-N-dev; ./ucx-ffm regen does), or "
                + "name the library with --libclang PATH or UCXFFM_LIBCLANG");
    }

    /** The places {@link #locate} tries, in order: the newest LLVM first. */
    static List<Path> candidates() {
        List<Path> found = new ArrayList<>();
        for (Path root : LLVM_ROOTS) {
            try (var dirs = Files.list(root)) {
                dirs.filter(d -> llvmVersion(d) >= 0)
                        .sorted(Comparator.comparingInt(LibClang::llvmVersion).reversed())
                        .forEach(d -> {
                            int v = llvmVersion(d);
                            found.add(d.resolve("lib/libclang-" + v + ".so.1"));
                            found.add(d.resolve("lib/libclang.so.1"));
                        });
            } catch (java.io.IOException e) {
                // no such directory: nothing installed there
            }
        }
        found.addAll(OTHER_CANDIDATES);
        return found;
    }

    /** N of a directory named {@code llvm-N}, or -1. */
    private static int llvmVersion(Path dir) {
        String name = dir.getFileName().toString();
        if (!name.startsWith("llvm-")) {
            return -1;
        }
        try {
            return Integer.parseInt(name.substring(5));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static Path requireFile(Path path, String source) {
        if (!Files.isRegularFile(path)) {
            throw new GeneratorException(source + " names " + path + ", which is not a file");
        }
        return path;
    }

    private MethodHandle fn(String name, FunctionDescriptor descriptor) {
        MemorySegment address = lookup.find(name).orElseThrow(
                () -> new GeneratorException(libraryPath + " has no symbol " + name + "; libclang 14 or newer is needed"));
        return LINKER.downcallHandle(address, descriptor);
    }

    /** The builtin header directory that belongs to this libclang (for stddef.h and friends). */
    Optional<Path> resourceIncludeDir() {
        // .../llvm-N/lib/libclang*.so.1 has clang/VERSION/include beside it; Debian's LLVM 19 and later link
        // that name to the multiarch directory, so look beside the name first and beside the real file second.
        List<Path> dirs = new ArrayList<>();
        dirs.add(libraryPath.toAbsolutePath().getParent());
        try {
            dirs.add(libraryPath.toRealPath().getParent());
        } catch (java.io.IOException e) {
            // a dangling name: only the directory it is in
        }
        for (Path dir : dirs) {
            Path clangDir = dir.resolve("clang");
            if (!Files.isDirectory(clangDir)) {
                continue;
            }
            try (var versions = Files.list(clangDir)) {
                Optional<Path> include = versions.map(v -> v.resolve("include"))
                        .filter(p -> Files.isRegularFile(p.resolve("stddef.h"))).sorted().reduce((a, b) -> b);
                if (include.isPresent()) {
                    return include;
                }
            } catch (java.io.IOException e) {
                // unreadable: try the next place
            }
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        arena.close();
    }

    // ---- invocation helpers -------------------------------------------------------------------------------------

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private String takeString(MemorySegment cxString) {
        try {
            MemorySegment chars = (MemorySegment) getCString.invokeExact(cxString);
            String s = chars.equals(MemorySegment.NULL) ? "" : chars.reinterpret(Long.MAX_VALUE).getString(0);
            disposeString.invokeExact(cxString);
            return s;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String version() {
        try {
            return takeString((MemorySegment) getClangVersion.invokeExact((SegmentAllocator) arena));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- translation units --------------------------------------------------------------------------------------

    /** A parsed translation unit with its diagnostics; the cursors handed out stay valid until close. */
    final class TranslationUnit implements AutoCloseable {
        final MemorySegment index;
        final MemorySegment unit;

        TranslationUnit(MemorySegment index, MemorySegment unit) {
            this.index = index;
            this.unit = unit;
        }

        MemorySegment cursor() {
            try {
                return (MemorySegment) getTranslationUnitCursor.invokeExact((SegmentAllocator) arena, unit);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        /** Formatted diagnostics of error severity or worse. */
        List<String> errors() {
            return errorDiagnostics().stream().map(Diagnostic::text).toList();
        }

        /**
         * Diagnostics of error severity or worse, each with where it was expanded: for an error inside a macro's
         * body that is the line that used the macro (libclang 19 and later place the error itself in the macro's
         * header, 14 at the use).
         */
        List<Diagnostic> errorDiagnostics() {
            List<Diagnostic> errors = new ArrayList<>();
            try (Arena call = Arena.ofConfined()) {
                MemorySegment file = call.allocate(ADDRESS);
                MemorySegment line = call.allocate(JAVA_INT);
                int n = (int) getNumDiagnostics.invokeExact(unit);
                for (int i = 0; i < n; i++) {
                    MemorySegment diag = (MemorySegment) getDiagnostic.invokeExact(unit, i);
                    int severity = (int) getDiagnosticSeverity.invokeExact(diag);
                    if (severity >= DIAGNOSTIC_ERROR) {
                        String text = takeString((MemorySegment) formatDiagnostic.invokeExact(
                                (SegmentAllocator) arena, diag, 0x1 | 0x2));
                        MemorySegment loc = (MemorySegment) getDiagnosticLocation.invokeExact(
                                (SegmentAllocator) call, diag);
                        getExpansionLocation.invokeExact(loc, file, line, MemorySegment.NULL, MemorySegment.NULL);
                        MemorySegment f = file.get(ADDRESS, 0);
                        String name = f.equals(MemorySegment.NULL) ? ""
                                : takeString((MemorySegment) getFileName.invokeExact((SegmentAllocator) arena, f));
                        errors.add(new Diagnostic(text, name, line.get(JAVA_INT, 0)));
                    }
                    disposeDiagnostic.invokeExact(diag);
                }
            } catch (Throwable t) {
                throw rethrow(t);
            }
            return errors;
        }

        @Override
        public void close() {
            try {
                disposeTranslationUnit.invokeExact(unit);
                disposeIndex.invokeExact(index);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    /**
     * Parses {@code file} with the given compiler arguments; {@code unsavedName}/{@code unsavedText}, when not
     * null, supply an in-memory file.
     */
    TranslationUnit parse(String file, List<String> args, String unsavedName, String unsavedText) {
        try {
            MemorySegment index = (MemorySegment) createIndex.invokeExact(0, 0);
            MemorySegment argv = arena.allocate(ADDRESS, Math.max(1, args.size()));
            for (int i = 0; i < args.size(); i++) {
                argv.setAtIndex(ADDRESS, i, arena.allocateFrom(args.get(i)));
            }
            MemorySegment unsaved = MemorySegment.NULL;
            int unsavedCount = 0;
            if (unsavedName != null) {
                unsaved = arena.allocate(CX_UNSAVED_FILE);
                MemorySegment text = arena.allocateFrom(unsavedText);
                unsaved.set(ADDRESS, 0, arena.allocateFrom(unsavedName));
                unsaved.set(ADDRESS, 8, text);
                unsaved.set(JAVA_LONG, 16, text.byteSize() - 1);
                unsavedCount = 1;
            }
            MemorySegment unit = (MemorySegment) parseTranslationUnit.invokeExact(index, arena.allocateFrom(file),
                    argv, args.size(), unsaved, unsavedCount, TU_DETAILED_PREPROCESSING_RECORD);
            if (unit.equals(MemorySegment.NULL)) {
                disposeIndex.invokeExact(index);
                throw new GeneratorException("libclang could not parse " + file + " with " + args);
            }
            return new TranslationUnit(index, unit);
        } catch (GeneratorException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- cursors --------------------------------------------------------------------------------------------------

    @SuppressWarnings("unused") // called through visitorUpcall
    private int visit(MemorySegment cursor, MemorySegment parent, MemorySegment data) {
        try {
            MemorySegment copy = arena.allocate(CX_CURSOR);
            copy.copyFrom(cursor);
            collecting.add(copy);
        } catch (Throwable t) {
            // An exception escaping an upcall would end the JVM; stop the walk instead.
            return 0;
        }
        return 1; // CXChildVisit_Continue
    }

    /** The direct children of a cursor, in source order. */
    List<MemorySegment> children(MemorySegment cursor) {
        List<MemorySegment> saved = collecting;
        List<MemorySegment> result = new ArrayList<>();
        collecting = result;
        try (Arena callArena = Arena.ofConfined()) {
            FunctionDescriptor desc = FunctionDescriptor.of(JAVA_INT, CX_CURSOR, CX_CURSOR, ADDRESS);
            MemorySegment stub = LINKER.upcallStub(visitorUpcall, desc, callArena);
            int ignored = (int) visitChildren.invokeExact(cursor, stub, MemorySegment.NULL);
            assert ignored >= 0;
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            collecting = saved;
        }
        return result;
    }

    int kind(MemorySegment cursor) {
        return cursor.get(JAVA_INT, 0);
    }

    String spelling(MemorySegment cursor) {
        try {
            return takeString((MemorySegment) getCursorSpelling.invokeExact((SegmentAllocator) arena, cursor));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String usr(MemorySegment cursor) {
        try {
            return takeString((MemorySegment) getCursorUSR.invokeExact((SegmentAllocator) arena, cursor));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * An error diagnostic.
     *
     * @param text          as clang formats it (spelling location, message)
     * @param expansionFile the file the error was expanded in ("" when it has no location)
     * @param expansionLine the line there
     */
    record Diagnostic(String text, String expansionFile, int expansionLine) {
    }

    /** Where a cursor is spelled: file, line, column. */
    record Location(String file, int line, int column) {
    }

    Location location(MemorySegment cursor) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment loc = (MemorySegment) getCursorLocation.invokeExact((SegmentAllocator) call, cursor);
            MemorySegment file = call.allocate(ADDRESS);
            MemorySegment line = call.allocate(JAVA_INT);
            MemorySegment column = call.allocate(JAVA_INT);
            getSpellingLocation.invokeExact(loc, file, line, column, MemorySegment.NULL);
            MemorySegment f = file.get(ADDRESS, 0);
            String name = f.equals(MemorySegment.NULL) ? ""
                    : takeString((MemorySegment) getFileName.invokeExact((SegmentAllocator) arena, f));
            return new Location(name, line.get(JAVA_INT, 0), column.get(JAVA_INT, 0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment type(MemorySegment cursor) {
        try {
            return (MemorySegment) getCursorType.invokeExact((SegmentAllocator) arena, cursor);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment typedefUnderlying(MemorySegment cursor) {
        try {
            return (MemorySegment) getTypedefDeclUnderlyingType.invokeExact((SegmentAllocator) arena, cursor);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int numArguments(MemorySegment cursor) {
        try {
            return (int) cursorGetNumArguments.invokeExact(cursor);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment argument(MemorySegment cursor, int i) {
        try {
            return (MemorySegment) cursorGetArgument.invokeExact((SegmentAllocator) arena, cursor, i);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private boolean flag(MethodHandle handle, MemorySegment cursor) {
        try {
            return (int) handle.invokeExact(cursor) != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private int intOf(MethodHandle handle, MemorySegment cursor) {
        try {
            return (int) handle.invokeExact(cursor);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private long longOf(MethodHandle handle, MemorySegment cursorOrType) {
        try {
            return (long) handle.invokeExact(cursorOrType);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    boolean isFunctionInlined(MemorySegment cursor) {
        return flag(cursorIsFunctionInlined, cursor);
    }

    int linkage(MemorySegment cursor) {
        return intOf(getCursorLinkage, cursor);
    }

    int storageClass(MemorySegment cursor) {
        return intOf(cursorGetStorageClass, cursor);
    }

    boolean isAnonymous(MemorySegment cursor) {
        return flag(cursorIsAnonymous, cursor);
    }

    boolean isAnonymousRecordDecl(MemorySegment cursor) {
        return flag(cursorIsAnonymousRecordDecl, cursor);
    }

    boolean isBitField(MemorySegment cursor) {
        return flag(cursorIsBitField, cursor);
    }

    long offsetOfFieldBits(MemorySegment cursor) {
        return longOf(cursorGetOffsetOfField, cursor);
    }

    MemorySegment enumIntegerType(MemorySegment cursor) {
        try {
            return (MemorySegment) getEnumDeclIntegerType.invokeExact((SegmentAllocator) arena, cursor);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    long enumConstantValue(MemorySegment cursor) {
        return longOf(getEnumConstantDeclValue, cursor);
    }

    long enumConstantUnsignedValue(MemorySegment cursor) {
        return longOf(getEnumConstantDeclUnsignedValue, cursor);
    }

    boolean isMacroFunctionLike(MemorySegment cursor) {
        return flag(cursorIsMacroFunctionLike, cursor);
    }

    boolean isMacroBuiltin(MemorySegment cursor) {
        return flag(cursorIsMacroBuiltin, cursor);
    }

    boolean isDefinition(MemorySegment cursor) {
        return flag(isCursorDefinition, cursor);
    }

    MemorySegment definition(MemorySegment cursor) {
        try {
            return (MemorySegment) getCursorDefinition.invokeExact((SegmentAllocator) arena, cursor);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    boolean isInvalidDeclaration(MemorySegment cursor) {
        return flag(isInvalidDeclaration, cursor);
    }

    /** Evaluation of a variable's initializer; empty when clang cannot evaluate it to a constant. */
    sealed interface Value {
    }

    record IntValue(long value, boolean unsigned) implements Value {
    }

    record FloatValue(double value) implements Value {
    }

    record StringValue(String value) implements Value {
    }

    Optional<Value> evaluate(MemorySegment cursor) {
        try {
            MemorySegment result = (MemorySegment) cursorEvaluate.invokeExact(cursor);
            if (result.equals(MemorySegment.NULL)) {
                return Optional.empty();
            }
            try {
                int kind = (int) evalGetKind.invokeExact(result);
                return switch (kind) {
                    case EVAL_INT -> {
                        boolean unsigned = (int) evalIsUnsignedInt.invokeExact(result) != 0;
                        long v = unsigned ? (long) evalGetAsUnsigned.invokeExact(result)
                                : (long) evalGetAsLongLong.invokeExact(result);
                        yield Optional.of(new IntValue(v, unsigned));
                    }
                    case EVAL_FLOAT -> Optional.of(new FloatValue((double) evalGetAsDouble.invokeExact(result)));
                    case EVAL_STR_LITERAL -> {
                        MemorySegment s = (MemorySegment) evalGetAsStr.invokeExact(result);
                        yield Optional.of(new StringValue(s.reinterpret(Long.MAX_VALUE).getString(0)));
                    }
                    default -> Optional.empty();
                };
            } finally {
                evalDispose.invokeExact(result);
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- types ----------------------------------------------------------------------------------------------------

    int typeKind(MemorySegment type) {
        return type.get(JAVA_INT, 0);
    }

    private MemorySegment typeOp(MethodHandle handle, MemorySegment type) {
        try {
            return (MemorySegment) handle.invokeExact((SegmentAllocator) arena, type);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment canonical(MemorySegment type) {
        return typeOp(getCanonicalType, type);
    }

    MemorySegment pointee(MemorySegment type) {
        return typeOp(getPointeeType, type);
    }

    MemorySegment elementType(MemorySegment type) {
        return typeOp(getArrayElementType, type);
    }

    MemorySegment namedType(MemorySegment type) {
        return typeOp(typeGetNamedType, type);
    }

    MemorySegment valueType(MemorySegment type) {
        return typeOp(typeGetValueType, type);
    }

    MemorySegment resultType(MemorySegment type) {
        return typeOp(getResultType, type);
    }

    MemorySegment declaration(MemorySegment type) {
        try {
            return (MemorySegment) getTypeDeclaration.invokeExact((SegmentAllocator) arena, type);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    long arraySize(MemorySegment type) {
        return longOf(getArraySize, type);
    }

    /** Offset in bits of a (possibly indirect, through anonymous members) field; negative when unknown. */
    long offsetOfBits(MemorySegment recordType, String field) {
        try (Arena call = Arena.ofConfined()) {
            return (long) typeGetOffsetOf.invokeExact(recordType, call.allocateFrom(field));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    long sizeOf(MemorySegment type) {
        return longOf(typeGetSizeOf, type);
    }

    long alignOf(MemorySegment type) {
        return longOf(typeGetAlignOf, type);
    }

    int numArgTypes(MemorySegment type) {
        try {
            return (int) getNumArgTypes.invokeExact(type);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    MemorySegment argType(MemorySegment type, int i) {
        try {
            return (MemorySegment) getArgType.invokeExact((SegmentAllocator) arena, type, i);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    boolean isVariadic(MemorySegment type) {
        try {
            return (int) isFunctionTypeVariadic.invokeExact(type) != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    String typeSpelling(MemorySegment type) {
        try {
            return takeString((MemorySegment) getTypeSpelling.invokeExact((SegmentAllocator) arena, type));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
