package io.github.ucxffm;

import io.github.ucxffm.testsupport.Await;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/** Helpers of the high-level tests: byte comparisons, and {@link Await} loops that progress workers. */
final class TestSupport {

    private TestSupport() {
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
        boolean[] done = new boolean[2];
        Await.until(() -> "operations complete (first " + done[0] + ", second " + done[1] + ")",
                Duration.ofSeconds(30), () -> progress(w1, w2), () -> {
                    done[0] = done[0] || w1.poll(t1);
                    done[1] = done[1] || w2.poll(t2);
                    return done[0] && done[1];
                });
    }

    /** Progresses the workers until the condition holds. */
    static void progressUntil(BooleanSupplier condition, long timeoutMillis, UcpWorker... workers) {
        Await.until("the condition", Duration.ofMillis(timeoutMillis), () -> progress(workers), condition);
    }

    /** Progresses the workers for a while, for assertions that something does not happen. */
    static void progressFor(long millis, UcpWorker... workers) {
        Await.during(Duration.ofMillis(millis), () -> progress(workers));
    }

    /** One {@code progress()} of each worker. */
    static void progress(UcpWorker... workers) {
        for (UcpWorker w : workers) {
            w.progress();
        }
    }

    /** The value of a completed future; its failure's cause is rethrown (unchecked), or wrapped in an error. */
    static <T> T valueOf(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new AssertionError(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * {@code ThreadMXBean.getCurrentThreadCpuTime()}. Tests compile into the {@code io.github.ucxffm} module, which
     * does not read {@code java.management}; they run on the class path, where reflection reaches it.
     */
    static long threadCpuNanos() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean")
                    .invoke(null);
            return (long) Class.forName("java.lang.management.ThreadMXBean").getMethod("getCurrentThreadCpuTime")
                    .invoke(bean);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("ThreadMXBean unavailable", e);
        }
    }
}
