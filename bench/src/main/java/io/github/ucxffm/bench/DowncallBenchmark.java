package io.github.ucxffm.bench;

import io.github.ucxffm.bindings.ucx_h;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * What {@code Linker.Option.critical} would save on one downcall: the same trivial UCX function
 * ({@code ucs_status_string}) called through the generated handle and through a critical one. The saving is the
 * thread-state transition, to compare with the microseconds of a message round trip before using the option on
 * calls that can never call back into Java.
 */
@State(Scope.Thread)
public class DowncallBenchmark extends BenchmarkBase {

    private static final MethodHandle CRITICAL = Linker.nativeLinker().downcallHandle(
            ucx_h.ucs_status_string$address(), ucx_h.ucs_status_string$descriptor(), Linker.Option.critical(false));

    private byte status = (byte) ucx_h.UCS_ERR_NO_MEMORY();

    /** Through the generated binding. */
    @Benchmark
    public MemorySegment regular() {
        return ucx_h.ucs_status_string(status);
    }

    /** Through a critical downcall handle. */
    @Benchmark
    public MemorySegment critical() throws Throwable {
        return (MemorySegment) CRITICAL.invokeExact(status);
    }
}
