package io.github.ucxffm.testsupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChildProcessTest {

    /** The child JVM of these tests: prints its arguments and an environment variable, exits with the last one. */
    public static final class Echo {
        public static void main(String[] args) {
            System.out.println("hello " + System.getenv("ECHO_VALUE"));
            for (String a : args) {
                System.out.println("arg " + a);
            }
            System.exit(Integer.parseInt(args[args.length - 1]));
        }
    }

    @Test
    void shouldRunAJvmOnTheTestClassPathAndReportItsOutputAndStatus() throws Exception {
        try (ChildProcess p = ChildProcess.java(Echo.class).env("ECHO_VALUE", "world").args("one", "3").start()) {
            assertEquals("world", p.expect("hello", 30));
            assertEquals("one", p.expect("arg", 30));
            assertEquals("3", p.expect("arg", 30));
            assertEquals(3, p.waitFor(30));
            assertEquals("hello world\narg one\narg 3\n", p.output());
        }
    }

    @Test
    void shouldFailAWaitWithTheStatusAndTheOutput() throws Exception {
        try (ChildProcess p = ChildProcess.command("sh", "-c", "echo ready; exec sleep 30").start()) {
            MatchResult m = p.awaitOutput(Pattern.compile("re(a)dy"), 30);
            assertEquals("a", m.group(1));
            AssertionError e = assertThrows(AssertionError.class, () -> p.waitFor(1));
            assertTrue(e.getMessage().matches("(?s)sh \\(pid \\d+\\) still running after 1 s \\(running\\); "
                    + "output:\nready\n"), e.getMessage());
        }
        ChildProcess ended = ChildProcess.command("sh", "-c", "echo bye; exit 4").run(Duration.ofSeconds(30));
        assertEquals(4, ended.exitCode());
        AssertionError e = assertThrows(AssertionError.class, () -> ended.awaitOutput("never", 30));
        assertTrue(e.getMessage().contains("ended without printing") && e.getMessage().contains("exited with 4"),
                e.getMessage());
    }

    @Test
    void shouldKillTheWholeTreeOnClose() throws Exception {
        ProcessHandle grandchild;
        try (ChildProcess p = ChildProcess.command("sh", "-c", "sleep 300 & echo child $!; wait").start()) {
            long pid = Long.parseLong(p.expect("child", 30));
            grandchild = ProcessHandle.of(pid).orElseThrow();
            assertTrue(grandchild.isAlive());
        }
        grandchild.onExit().get(10, TimeUnit.SECONDS);
        assertFalse(grandchild.isAlive());
    }

    @Test
    void shouldStopAndResumeAChild() throws Exception {
        try (ChildProcess p = ChildProcess.command("sh", "-c", "read line; echo got $line").start()) {
            p.stop();
            assertTrue(p.isAlive());
            p.resume();
            p.kill();
            assertEquals(128 + ChildProcess.SIGKILL, p.waitFor(10));
        }
    }
}
