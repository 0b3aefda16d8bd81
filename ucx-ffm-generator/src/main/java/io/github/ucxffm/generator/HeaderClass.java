package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.CType;
import io.github.ucxffm.generator.Model.Function;
import io.github.ucxffm.generator.Model.FunctionType;
import io.github.ucxffm.generator.Model.Pointer;
import io.github.ucxffm.generator.Model.Primitive;
import io.github.ucxffm.generator.Model.Variable;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The header class: a static member per function, variable, constant and typedef layout, split into a superclass
 * chain when large, over a shared class with the C layouts, the symbol lookup and the release table.
 */
final class HeaderClass {

    private final Options options;
    private final String h;
    private final TypeMapping types;
    private final ReleaseNotes notes;

    HeaderClass(Options options, TypeMapping types, ReleaseNotes notes) {
        this.options = options;
        this.h = options.headerClassName;
        this.types = types;
        this.notes = notes;
    }

    /** A typedef of a scalar, pointer or array type: a layout constant. */
    String typedefLayout(String name, CType u) {
        return Docs.snippet("    ", "typedef " + TypeMapping.spellingOf(u) + " " + name, notes.note(name))
                + "    public static final %s %s = %s;\n".formatted(TypeMapping.layoutType(u), name, types.layout(u));
    }

    /**
     * What both forms of a function member start from: the C prototype, the Java parameter names, whether a
     * {@code SegmentAllocator} leads (a record returned by value) and the Java return type.
     */
    private record Signature(String name, FunctionType type, String prototype, List<String> names, boolean allocator,
                             String ret) {

        static Signature of(Function fn) {
            FunctionType f = fn.type();
            return new Signature(fn.name(), f, Docs.prototype(fn.name(), f), TypeMapping.paramNames(f),
                    TypeMapping.returnsRecord(f), TypeMapping.carrier(f.result()));
        }

        /** The Java parameter list. */
        String parameters() {
            return TypeMapping.parameterList(type, names, allocator);
        }

        /** The arguments a call passes on to the handle: the allocator first, then the parameters. */
        List<String> arguments() {
            List<String> args = new ArrayList<>();
            if (allocator) {
                args.add("allocator");
            }
            args.addAll(names);
            return args;
        }
    }

    /**
     * A function: a holder class initialised on first use (so a missing symbol fails at the first call only), the
     * descriptor, handle and address accessors, and the typed method that calls it.
     */
    String function(Function fn) {
        Signature s = Signature.of(fn);
        String n = s.name();
        String proto = s.prototype();
        return """

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
                """.formatted(n, types.descriptor(s.type()), h,
                Docs.doc("    ", "Function descriptor for:", proto),
                Docs.doc("    ", "Downcall method handle for:", proto),
                Docs.doc("    ", "Address for:", proto),
                Docs.snippet("    ", proto, notes.note(n)), s.ret(), s.parameters(),
                call(s.ret(), "mh$", String.join(", ", s.arguments())));
    }

    /** A statement invoking {@code handle} exactly with {@code args}, returning its result unless {@code void}. */
    static String call(String ret, String handle, String args) {
        return ret.equals("void") ? "%s.invokeExact(%s);".formatted(handle, args)
                : "return (%s) %s.invokeExact(%s);".formatted(ret, handle, args);
    }

    /** A variadic function: an invoker class made per list of variadic argument layouts. */
    String variadicFunction(Function fn) {
        Signature s = Signature.of(fn);
        String n = s.name();
        String proto = s.prototype();
        String vaName = "x" + s.names().size();
        while (s.names().contains(vaName)) {
            vaName += "_";
        }
        String params = s.parameters().isEmpty() ? "Object... " + vaName : s.parameters() + ", Object... " + vaName;
        List<String> args = s.arguments();
        args.add(vaName);
        return """

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
                """.formatted(Docs.doc("    ", "Variadic invoker class for:", proto, notes.note(n)), n,
                types.descriptor(s.type()), h, Docs.escape(proto), s.ret(), params,
                call(s.ret(), "spreader", String.join(", ", args)));
    }

    /**
     * A global variable: its layout and segment, and a getter and setter (a scalar or pointer by value, anything
     * else as a slice, set by copying).
     */
    String variable(Variable v) {
        String n = v.name();
        String decl = "extern " + Docs.declare(v.cSpelling(), n);
        CType r = TypeMapping.resolve(v.type());
        String lt = TypeMapping.layoutType(v.type());
        String doc = Docs.doc("    ", "Getter and setter for the variable:", decl);
        String access;
        if (r instanceof Primitive || r instanceof Pointer) {
            access = """
                    %3$s    public static %2$s %1$s() {
                            return %1$s$.SEGMENT.get(%1$s$.LAYOUT, 0L);
                        }

                    %3$s    public static void %1$s(%2$s varValue) {
                            %1$s$.SEGMENT.set(%1$s$.LAYOUT, 0L, varValue);
                        }
                    """.formatted(n, TypeMapping.carrier(v.type()), doc);
        } else {
            access = """
                    %2$s    public static MemorySegment %1$s() {
                            return %1$s$.SEGMENT;
                        }

                    %2$s    public static void %1$s(MemorySegment varValue) {
                            MemorySegment.copy(varValue, 0L, %1$s$.SEGMENT, 0L, %1$s$.LAYOUT.byteSize());
                        }
                    """.formatted(n, doc);
        }
        return """

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

                %7$s""".formatted(n, lt, types.layout(v.type()), h,
                Docs.doc("    ", "Layout for the variable:", decl),
                Docs.snippet("    ", decl, ("The segment of the variable. " + notes.note(n)).strip()), access);
    }

    /**
     * The header class, split as jextract splits large ones: at most {@code --decls-per-header} members a part,
     * {@code H extends H_1 extends H_2 ... extends H$shared}, so that every member is reachable through {@code H}.
     * Returns class name to class text.
     */
    Map<String, String> parts(List<String> members) {
        Map<String, String> classes = new LinkedHashMap<>();
        int perPart = options.declsPerHeader;
        int parts = members.isEmpty() ? 1 : (members.size() - 1) / perPart + 1; // no overflow for a huge perPart
        for (int part = 0; part < parts; part++) {
            String name = part == 0 ? h : h + "_" + part;
            String parent = part + 1 < parts ? h + "_" + (part + 1) : h + "$shared";
            String doc;
            if (part == 0) {
                String release = notes.headersRelease() == null ? ""
                        : ", generated from the headers of " + notes.label() + " " + notes.headersRelease();
                doc = """
                        /**
                         * Functions, constants, typedef layouts and variables of %s%s.
                         */
                        """.formatted(Path.of(options.header).getFileName(), release);
            } else {
                doc = "/** Part %s of {@link %s}. */\n".formatted(part, h);
            }
            int from = part * perPart;
            int to = from + Math.min(members.size() - from, perPart);
            classes.put(name, """
                    %1$spublic class %2$s extends %3$s {

                        %2$s() {
                            // Should not be called directly
                        }
                    %4$s}
                    """.formatted(doc, name, parent, String.join("", members.subList(from, to))));
        }
        return classes;
    }

    /**
     * The shared class at the top of the chain: canonical C layouts, the symbol lookup over the libraries (after the
     * library hook's {@code beforeLoad()}), missing-symbol handling and the release table. Render it last: the
     * release table lists the names the other classes asked {@link ReleaseNotes} about.
     */
    String shared() {
        String lookup = options.libraries.stream()
                .map(lib -> "            .or(%s$shared.library(%s))\n".formatted(h, Text.javaString(lib)))
                .collect(Collectors.joining());
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
                """.formatted(h, before, lookup, describe, Text.indent(notes.sharedMembers(hook), "    "));
    }
}
