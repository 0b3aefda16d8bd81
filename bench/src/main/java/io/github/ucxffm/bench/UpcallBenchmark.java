package io.github.ucxffm.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What one upcall costs, the floor under every active message (UCX calls its handler through an upcall stub): the
 * C library's {@code qsort} of two one-byte elements calls its comparator exactly once, so the same call with a C
 * comparator ({@code strcmp}, which compares the two empty strings the elements are) and with a Java one gives the
 * price of going from native code into Java and back. The Java comparator is made the two ways the library could:
 * with raw {@code long} addresses (what {@code Upcalls} does) and with {@link MemorySegment} parameters.
 */
@State(Scope.Thread)
public class UpcallBenchmark extends BenchmarkBase {

    private static final Linker LINKER = Linker.nativeLinker();
    // void qsort(void *base, size_t nmemb, size_t size, int (*compar)(const void *, const void *))
    private static final MethodHandle QSORT = LINKER.downcallHandle(
            LINKER.defaultLookup().find("qsort").orElseThrow(),
            FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));

    private Arena arena;
    private long base;
    private long nativeComparator;
    private long rawComparator;
    private long segmentComparator;

    /** Counted by the Java comparators, so their work is not optimized away. */
    private static int calls;

    @Setup
    public void setUp() throws ReflectiveOperationException {
        arena = Arena.ofConfined();
        base = arena.allocate(2).address(); // two zero bytes: two empty strings for strcmp
        nativeComparator = LINKER.defaultLookup().find("strcmp").orElseThrow().address();
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        rawComparator = LINKER.upcallStub(
                lookup.findStatic(UpcallBenchmark.class, "compareRaw",
                        MethodType.methodType(int.class, long.class, long.class)),
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG), arena).address();
        segmentComparator = LINKER.upcallStub(
                lookup.findStatic(UpcallBenchmark.class, "compareSegments",
                        MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class)),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), arena).address();
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    private static int compareRaw(long a, long b) {
        calls++;
        return 0;
    }

    private static int compareSegments(MemorySegment a, MemorySegment b) {
        calls++;
        return 0;
    }

    /**
     * {@code qsort} with a C comparator: the downcall and the sort, no upcall.
     *
     * @throws Throwable never
     */
    @Benchmark
    public void nativeComparator() throws Throwable {
        QSORT.invokeExact(base, 2L, 1L, nativeComparator);
    }

    /**
     * {@code qsort} with a Java comparator taking raw addresses: one upcall more.
     *
     * @return the comparator's call count
     * @throws Throwable never
     */
    @Benchmark
    public int rawUpcall() throws Throwable {
        QSORT.invokeExact(base, 2L, 1L, rawComparator);
        return calls;
    }

    /**
     * {@code qsort} with a Java comparator taking {@link MemorySegment}s: one upcall and two segments.
     *
     * @return the comparator's call count
     * @throws Throwable never
     */
    @Benchmark
    public int segmentUpcall() throws Throwable {
        QSORT.invokeExact(base, 2L, 1L, segmentComparator);
        return calls;
    }
}
