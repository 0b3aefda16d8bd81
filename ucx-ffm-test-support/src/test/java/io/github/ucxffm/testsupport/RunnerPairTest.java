package io.github.ucxffm.testsupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RunnerPairTest {

    /** The directory {@link FakeRunner} counts its server starts in, from the test's environment. */
    static final String STARTS = "UCXFFM_RUNNER_PAIR_TEST_STARTS";

    /**
     * A runner in the shape of the perftest runners: {@code -p PORT} alone makes a server, which says it waits and
     * echoes one line to its client; {@code HOST -p PORT} a client. The first {@code N} servers of a test (N from
     * the file {@code fail} in {@link #STARTS}) fail as a runner does whose port another socket took.
     */
    public static final class FakeRunner {
        public static void main(String[] args) throws IOException {
            Path dir = Path.of(System.getenv(STARTS));
            if (args[0].equals("-p")) {
                int port = Integer.parseInt(args[1]);
                long started;
                try (var files = Files.list(dir)) {
                    started = files.filter(f -> f.getFileName().toString().startsWith("server")).count();
                }
                Files.writeString(dir.resolve("server-" + started + "-" + port), "");
                if (started < Long.parseLong(Files.readString(dir.resolve("fail")).trim())) {
                    System.out.println("fake runner: failed: java.io.IOException: cannot listen on port " + port
                            + ": Address already in use");
                    System.exit(1);
                }
                try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                    System.out.println("Waiting for connection...");
                    try (Socket c = s.accept()) {
                        c.getOutputStream().write("served\n".getBytes());
                    }
                }
                return;
            }
            try (Socket c = new Socket(args[0], Integer.parseInt(args[2]))) {
                System.out.print(new String(c.getInputStream().readAllBytes()));
            }
        }
    }

    private static RunnerPair.Outcome[] run(Path dir, int failing) throws Exception {
        Files.writeString(dir.resolve("fail"), Integer.toString(failing));
        try (RunnerPair pair = new RunnerPair(FakeRunner.class.getName(), Map.of(STARTS, dir.toString()))) {
            return pair.run(List.of(), 60);
        }
    }

    private static long serverStarts(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith("server")).count();
        }
    }

    @Test
    void shouldTryAnotherPortWhenTheFreeOneWasTakenBeforeTheServerBoundIt(@TempDir Path dir) throws Exception {
        RunnerPair.Outcome[] o = run(dir, 2);
        assertEquals(0, o[0].exit(), o[0].output());
        assertEquals("served", o[0].output().trim());
        assertEquals(3, serverStarts(dir), "two servers found their port taken, the third listened");
    }

    @Test
    void shouldReportTheServerThatCouldNotListenAfterThreePorts(@TempDir Path dir) throws Exception {
        RunnerPair.Outcome[] o = run(dir, 10);
        assertEquals(-1, o[0].exit());
        assertEquals("(client not started)", o[0].output());
        assertTrue(o[1].output().contains("Address already in use"), o[1].output());
        assertEquals(3, serverStarts(dir));
    }
}
