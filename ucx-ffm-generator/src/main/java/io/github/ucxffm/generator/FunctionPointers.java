package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.FunctionType;

import java.util.ArrayList;
import java.util.List;

/**
 * A class per function-pointer type: the signature as a {@code Function} interface, its descriptor, an upcall stub
 * factory and an {@code invoke} that calls a native pointer of that type. A variadic signature gets its descriptor
 * only: an upcall cannot be variadic and an invoker would need the variadic layouts.
 */
final class FunctionPointers {

    private final TypeMapping types;
    private final String h;
    private final ReleaseNotes notes;

    FunctionPointers(TypeMapping types, String headerClassName, ReleaseNotes notes) {
        this.types = types;
        this.h = headerClassName;
        this.notes = notes;
    }

    /** The top-level class of a function-pointer typedef, with its release note. */
    String topLevel(String name, FunctionType f, String cDecl) {
        return render(name, f, cDecl, notes.note(name), "public class ");
    }

    /** The class nested in a record for a function-pointer field, indented one level. */
    String nested(String name, FunctionType f, String cDecl) {
        return Text.indent(render(name, f, cDecl, "", "public static class "), "    ");
    }

    /** The class around the body: the C declaration as Javadoc, a hidden constructor. */
    private String render(String name, FunctionType f, String cDecl, String note, String modifiers) {
        String body = f.variadic() ? variadicBody(f) : body(name, f);
        return """
                %1$s%2$s%3$s {

                    %3$s() {
                        // Should not be called directly
                    }

                %4$s}
                """.formatted(Docs.snippet("", cDecl, note), modifiers, name, Text.indent(body, "    "));
    }

    /** A variadic signature: the descriptor of its fixed arguments only. */
    private String variadicBody(FunctionType f) {
        return """
                /** The fixed part of the signature; variadic function pointers have no upcall or invoker. */
                private static final FunctionDescriptor $DESC = %1$s;

                /**
                 * The descriptor of the fixed arguments.
                 */
                public static FunctionDescriptor descriptor() {
                    return $DESC;
                }
                """.formatted(types.descriptor(f));
    }

    /**
     * The {@code Function} interface, the descriptor, {@code allocate} (an upcall stub bound to a {@code Function})
     * and {@code invoke} (a downcall through a pointer); a by-value record result takes an allocator.
     */
    private String body(String name, FunctionType f) {
        List<String> names = TypeMapping.paramNames(f);
        String ret = TypeMapping.carrier(f.result());
        List<String> params = new ArrayList<>();
        List<String> invokeParams = new ArrayList<>(List.of("MemorySegment funcPtr"));
        List<String> invokeArgs = new ArrayList<>(List.of("funcPtr"));
        if (TypeMapping.returnsRecord(f)) {
            invokeParams.add("SegmentAllocator allocator");
            invokeArgs.add("allocator");
        }
        for (int i = 0; i < names.size(); i++) {
            String param = TypeMapping.carrier(f.params().get(i)) + " " + names.get(i);
            params.add(param);
            invokeParams.add(param);
            invokeArgs.add(names.get(i));
        }
        return """
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
                """.formatted(ret, String.join(", ", params), types.descriptor(f), h, name,
                String.join(", ", invokeParams), HeaderClass.call(ret, "DOWN$MH", String.join(", ", invokeArgs)));
    }
}
