package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hello and tag-pingpong samples, each as two processes, over tcp and shared memory; and their failures. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HelloAndTagPingPongTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=(\\S+) transport=(\\S+) size=(\\d+) iterations=(\\d+) p50_oneway_us=([0-9.]+) "
                    + "p99_oneway_us=([0-9.]+) msgs_per_s=(\\d+)");

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldGreetBothWays(String transport) throws Exception {
        try (ChildProcess server = SampleRun.start("hello", "--server", "--port", "0", "--transport", transport)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("hello", "--client", "127.0.0.1:" + port, "--transport",
                    transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                assertTrue(client.output().contains("server says 'hello from the server'"), client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("client says 'hello from the client'"), server.output());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldMeasureTagPingPongAndReportPercentiles(String transport) throws Exception {
        try (ChildProcess server = SampleRun.start("tag-pingpong", "--server", "--port", "0", "--size", "64",
                "--transport", transport)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("tag-pingpong", "--client", "127.0.0.1:" + port, "--size", "64",
                    "--iterations", "2000", "--warmup", "200", "--transport", transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                Matcher m = RESULT.matcher(client.output());
                assertTrue(m.find(), client.output());
                assertEquals("tag-pingpong", m.group(1));
                assertEquals(transport.equals("tcp"), m.group(2).equals("tcp"), "transport " + m.group(2));
                if (transport.equals("shm")) {
                    assertTrue(m.group(2).matches(".*(posix|sysv|cma).*"), m.group(2));
                }
                assertEquals("64", m.group(3));
                assertEquals("2000", m.group(4));
                double p50 = Double.parseDouble(m.group(5));
                double p99 = Double.parseDouble(m.group(6));
                assertTrue(p50 > 0 && p50 <= p99, client.output());
                assertTrue(Long.parseLong(m.group(7)) > 0);
                for (String column : new String[] {"p50", "p90", "p99", "p99.9", "max", "one way", "round trip"}) {
                    assertTrue(client.output().contains(column), column);
                }
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("served 2200 round trips"), server.output());
        }
    }

    @Test
    void shouldReportAServerThatGoesAwayMidRunAndExitNonZero() throws Exception {
        try (ChildProcess server = SampleRun.start("tag-pingpong", "--server", "--port", "0")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("tag-pingpong", "--client", "127.0.0.1:" + port,
                    "--iterations", "100000000", "--warmup", "0")) {
                server.awaitOutput("connected", 60); // mid-run, however slowly a loaded machine starts the client
                Thread.sleep(500);
                server.kill();
                int status = client.waitFor(60);
                assertEquals(1, status, client.output());
                assertTrue(client.output().contains("went away") || client.output().contains("no answer"),
                        client.output());
                assertFalse(client.output().contains("\tat "), "no stack trace: " + client.output());
            }
        }
    }

    @Test
    void shouldRejectBadArgumentsWithOneLineAndStatusTwo() throws Exception {
        String[][] cases = {
            {"tag-pingpong", "--server", "--size", "-5"},
            {"tag-pingpong", "--client"},
            {"tag-pingpong", "--server", "--client", "x:1"},
            {"tag-pingpong", "--server", "--iterations", "lots"},
            {"tag-pingpong", "--bogus"},
            {"no-such-sample"},
        };
        for (String[] c : cases) {
            try (ChildProcess run = SampleRun.start(c[0], java.util.Arrays.copyOfRange(c, 1, c.length))) {
                assertEquals(2, run.waitFor(30), String.join(" ", c) + "\n" + run.output());
                assertEquals(1, run.output().strip().lines().count(), "one line: " + run.output());
            }
        }
    }

    @Test
    void shouldFailClearlyOnAnUnreachableServerAndAPortInUse() throws Exception {
        try (ChildProcess client = SampleRun.start("tag-pingpong", "--client", "127.0.0.1:1", "--iterations", "10")) {
            assertEquals(1, client.waitFor(60), client.output());
            assertTrue(client.output().contains("cannot reach"), client.output());
        }
        try (ChildProcess first = SampleRun.start("tag-pingpong", "--server", "--port", "0")) {
            int port = SampleRun.port(first, 30);
            try (ChildProcess second = SampleRun.start("tag-pingpong", "--server", "--port", String.valueOf(port))) {
                assertEquals(1, second.waitFor(30), second.output());
                assertTrue(second.output().contains("port " + port + " is in use"), second.output());
            }
        }
    }
}
