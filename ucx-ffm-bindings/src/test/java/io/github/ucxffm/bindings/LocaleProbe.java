package io.github.ucxffm.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;

/**
 * Run by {@link LocaleSafetyTest} in a JVM started under a locale whose decimal separator is a comma. First shows
 * that the C library of this process really parses "2.5" as 2 (the hazard is present), then loads UCX and has it
 * parse a fractional configuration value.
 */
public final class LocaleProbe {

    private LocaleProbe() {
    }

    public static void main(String[] args) throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle strtod = linker.downcallHandle(linker.defaultLookup().find("strtod").orElseThrow(),
                FunctionDescriptor.of(JAVA_DOUBLE, ADDRESS, ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            double before = (double) strtod.invokeExact(arena.allocateFrom("2.5"), MemorySegment.NULL);
            System.out.println("strtod before loading UCX: " + before);

            MemorySegment configP = arena.allocate(ADDRESS);
            byte read = ucx_h.ucp_config_read(MemorySegment.NULL, MemorySegment.NULL, configP);
            MemorySegment config = configP.get(ADDRESS, 0);
            byte modified = ucx_h.ucp_config_modify(config, arena.allocateFrom("KEEPALIVE_INTERVAL"),
                    arena.allocateFrom("2.5s"));
            ucx_h.ucp_config_release(config);
            double after = (double) strtod.invokeExact(arena.allocateFrom("2.5"), MemorySegment.NULL);
            System.out.println("ucp_config_read " + read + ", ucp_config_modify(KEEPALIVE_INTERVAL=2.5s) " + modified
                    + ", strtod after loading UCX: " + after);
        }
    }
}
