package io.github.ucxffm.bindings;

import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A function the installed UCX lacks fails when it is called, not when the bindings load, and the error names the
 * function and the UCX version found. {@code ucp_memh_pack} arrived in UCX 1.14, so 1.13 lacks it.
 */
class MissingSymbolTest {

    @Test
    void shouldFailOnlyWhenAMissingFunctionIsCalledNamingItAndTheUcxVersion() throws Throwable {
        assertNotNull(ucx_h$shared.findOrNull("ucp_init_version"));
        MemorySegment address = ucx_h$shared.findOrNull("ucp_memh_pack");
        String version = io.github.ucxffm.bindings.support.UcxLibraryHook.describe();
        if (address != null) {
            System.out.println("ucp_memh_pack exists in " + version + "; checking with an invented symbol");
        }
        String symbol = address == null ? "ucp_memh_pack" : "ucp_no_such_function_in_any_release";
        assertNull(ucx_h$shared.findOrNull(symbol));
        FunctionDescriptor desc = FunctionDescriptor.of(ucx_h.C_CHAR, ucx_h.C_POINTER, ucx_h.C_POINTER);
        MethodHandle handle = ucx_h$shared.downcallHandle(symbol, null, desc); // creating it is fine
        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class,
                () -> {
                    byte ignored = (byte) handle.invokeExact(MemorySegment.NULL, MemorySegment.NULL);
                });
        assertTrue(e.getMessage().contains(symbol), e.getMessage());
        assertTrue(e.getMessage().contains(version), e.getMessage());
        assertTrue(version.matches("UCX \\d+\\.\\d+\\.\\d+"), version);
        assertThrows(UnsatisfiedLinkError.class, () -> ucx_h$shared.requireAddress(null, symbol));
    }
}
