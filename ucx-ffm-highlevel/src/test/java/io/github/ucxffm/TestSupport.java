package io.github.ucxffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** Helpers shared by the tests: patterned buffers and progress loops over two workers. */
final class TestSupport {

    private TestSupport() {
    }

    /** A native segment of {@code n} bytes holding a pattern that differs per seed and per position. */
    static MemorySegment pattern(Arena arena, long n, int seed) {
        MemorySegment s = arena.allocate(Math.max(1, n)).asSlice(0, n);
        fill(s, seed);
        return s;
    }

    static void fill(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 31 + seed * 7 + (i >>> 8)));
        }
    }

    /** The concatenation of the segments' bytes. */
    static byte[] concat(MemorySegment... parts) {
        long total = 0;
        for (MemorySegment p : parts) {
            total += p.byteSize();
        }
        byte[] out = new byte[Math.toIntExact(total)];
        int at = 0;
        for (MemorySegment p : parts) {
            MemorySegment.copy(p, JAVA_BYTE, 0, out, at, (int) p.byteSize());
            at += (int) p.byteSize();
        }
        return out;
    }

    static void assertBytes(byte[] expected, MemorySegment actual, String what) {
        assertArrayEquals(expected, actual.toArray(JAVA_BYTE), what);
    }

    /** Progresses both workers until each token has completed (successfully; a failure is thrown). */
    static void awaitBoth(UcpWorker w1, long t1, UcpWorker w2, long t2) {
        boolean d1 = false;
        boolean d2 = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!(d1 && d2)) {
            w1.progress();
            w2.progress();
            d1 = d1 || w1.poll(t1);
            d2 = d2 || w2.poll(t2);
            if (System.nanoTime() - deadline > 0) {
                fail("operations did not complete in time (first " + d1 + ", second " + d2 + ")");
            }
        }
    }

    /** Progresses the workers until the condition holds. */
    static void progressUntil(java.util.function.BooleanSupplier condition, long timeoutMillis, UcpWorker... workers) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!condition.getAsBoolean()) {
            for (UcpWorker w : workers) {
                w.progress();
            }
            if (System.nanoTime() - deadline > 0) {
                fail("condition not reached within " + timeoutMillis + " ms");
            }
        }
    }

    /** Progresses the workers for a while, for assertions that something does not happen. */
    static void progressFor(long millis, UcpWorker... workers) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - end < 0) {
            for (UcpWorker w : workers) {
                w.progress();
            }
        }
    }
}
