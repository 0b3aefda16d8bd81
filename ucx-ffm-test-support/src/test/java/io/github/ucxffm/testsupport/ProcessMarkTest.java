package io.github.ucxffm.testsupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProcessMarkTest {

    @Test
    void shouldFindTheMarkedTreeAndNothingElse() throws Exception {
        ProcessMark mark = ProcessMark.unique("UCXFFM_PROCESS_MARK_TEST");
        ProcessMark other = ProcessMark.unique("UCXFFM_PROCESS_MARK_TEST");
        assertNotEquals(mark.toString(), other.toString());
        // the child starts a grandchild, which inherits the mark; a second tree, marked by another run, looks the same
        String script = "sleep 301 & echo child $!; wait";
        try (ChildProcess marked = mark.on(ChildProcess.command("sh", "-c", script)).start();
             ChildProcess unmarked = other.on(ChildProcess.command("sh", "-c", script)).start()) {
            long grandchild = Long.parseLong(marked.expect("child", 30));
            long foreign = Long.parseLong(unmarked.expect("child", 30));
            // the shells print the pid as soon as they forked: wait until both children have become sleep itself
            // (before, the command line is the shell's, and during the exec the environment reads empty for a moment)
            for (long pid : new long[] {grandchild, foreign}) {
                Await.until("process " + pid + " to run sleep", Duration.ofSeconds(30),
                        () -> commandLine(pid).startsWith("sleep\0"));
            }
            // the shell (whose command line holds the script) and the sleep it started, not the other tree's
            assertEquals(Set.of(marked.pid(), grandchild), Set.copyOf(mark.processes("sleep 301")));
            assertFalse(mark.carriedBy(foreign));
            assertTrue(other.carriedBy(foreign));
            assertEquals(Set.of(unmarked.pid(), foreign), Set.copyOf(other.processes("no such command", "sleep 301")));
        }
        assertTrue(mark.processes("sleep 301").isEmpty(), "closed: nothing of the tree is left");
        assertFalse(mark.carriedBy(Long.MAX_VALUE));
    }

    private static String commandLine(long pid) {
        try {
            return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                    StandardCharsets.ISO_8859_1);
        } catch (IOException gone) {
            return "";
        }
    }
}
