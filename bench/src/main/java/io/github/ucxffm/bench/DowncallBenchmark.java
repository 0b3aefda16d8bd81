package io.github.ucxffm.bench;

import io.github.ucxffm.bindings.ucx_h;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * What one downcall costs, three ways, on the same trivial UCX function ({@code ucs_status_string}): through the
 * generated handle, through a critical handle ({@code Linker.Option.critical}, no thread-state transition), and
 * through a critical handle that returns the pointer as a {@code long}, the form the library's hot paths use
 * ({@code RawCalls}). Each returns the address, not the segment, so what is measured is the call and not an object
 * made for the result.
 */
@State(Scope.Thread)
public class DowncallBenchmark extends BenchmarkBase {

    private static final MethodHandle CRITICAL = Linker.nativeLinker().downcallHandle(
            ucx_h.ucs_status_string$address(), ucx_h.ucs_status_string$descriptor(), Linker.Option.critical(false));
    private static final MethodHandle CRITICAL_RAW = Linker.nativeLinker().downcallHandle(
            ucx_h.ucs_status_string$address(), FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_BYTE),
            Linker.Option.critical(false));

    private byte status = (byte) ucx_h.UCS_ERR_NO_MEMORY();

    /**
     * Through the generated binding.
     *
     * @return the message's address
     */
    @Benchmark
    public long regular() {
        return ucx_h.ucs_status_string(status).address();
    }

    /**
     * Through a critical downcall handle.
     *
     * @return the message's address
     * @throws Throwable never
     */
    @Benchmark
    public long critical() throws Throwable {
        return ((MemorySegment) CRITICAL.invokeExact(status)).address();
    }

    /**
     * Through a critical handle returning a raw address.
     *
     * @return the message's address
     * @throws Throwable never
     */
    @Benchmark
    public long criticalRaw() throws Throwable {
        return (long) CRITICAL_RAW.invokeExact(status);
    }
}
