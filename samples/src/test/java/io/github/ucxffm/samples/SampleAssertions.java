package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;

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

    /** A failed run: the status, one line naming the cause, no stack trace. */
    static void assertFailedCleanly(ChildProcess run, int status, String cause) throws InterruptedException {
        assertEquals(status, run.waitFor(30), run.output());
        assertTrue(run.output().contains(cause), "expected '" + cause + "' in:\n" + run.output());
        assertFalse(run.output().contains("\tat ") || run.output().contains("Exception in thread"),
                "no stack trace: " + run.output());
    }
}
