package io.github.ucxffm.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Checks shared by the sample tests. */
final class SampleAssertions {

    private SampleAssertions() {
    }

    /**
     * The transports a RESULT line reports match the ones asked for: exactly {@code tcp}, or for {@code shm} a
     * shared-memory transport (and no tcp, which only sets up the connection).
     */
    static void assertTransport(String asked, String reported) {
        if (asked.equals("shm")) {
            assertTrue(reported.matches(".*\\b(posix|sysv|cma)\\b.*"), "shared memory asked, got " + reported);
            assertFalse(reported.contains("tcp"), "shared memory asked, got " + reported);
        } else {
            assertEquals(asked, reported);
        }
    }

    /** Waits until the run has printed {@code text}. */
    static void awaitOutput(SampleRun run, String text, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!run.output().contains(text)) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no '" + text + "' within " + seconds + " s; output:\n" + run.output());
            }
            Thread.sleep(20);
        }
    }

    /** A failed run: the status, one line naming the cause, no stack trace. */
    static void assertFailedCleanly(SampleRun run, int status, String cause) throws InterruptedException {
        assertEquals(status, run.exit(30), run.output());
        assertTrue(run.output().contains(cause), "expected '" + cause + "' in:\n" + run.output());
        assertFalse(run.output().contains("\tat ") || run.output().contains("Exception in thread"),
                "no stack trace: " + run.output());
    }
}
