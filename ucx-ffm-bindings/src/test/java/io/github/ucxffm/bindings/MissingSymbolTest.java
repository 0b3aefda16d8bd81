package io.github.ucxffm.bindings;

import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

    @Test
    void shouldSayWhichRecordedReleasesHaveTheMissingFunction() {
        String version = io.github.ucxffm.bindings.support.UcxLibraryHook.versionString();
        assertEquals(java.util.List.of("1.18.1", "1.23.0"), ucx_h$shared.releasesOf("ucp_memh_pack"));
        if (ucx_h$shared.findOrNull("ucp_memh_pack") != null) {
            System.out.println("ucp_memh_pack exists in UCX " + version + "; its missing-symbol message is checked "
                    + "on UCX 1.13");
            return;
        }
        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class, () -> ucx_h.ucp_memh_pack(
                MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL));
        assertEquals("ucp_memh_pack is not in the loaded UCX " + version
                + " (UCX 1.18.1 and later have it, UCX 1.13.1 lacks it)", e.getMessage());
        UnsatisfiedLinkError address = assertThrows(UnsatisfiedLinkError.class, ucx_h::ucp_memh_pack$address);
        assertEquals(e.getMessage(), address.getMessage());
    }
}
