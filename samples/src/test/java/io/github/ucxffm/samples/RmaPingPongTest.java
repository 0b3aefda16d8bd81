package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rma-pingpong sample as two processes, over tcp and shared memory; and how it fails. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RmaPingPongTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=rma-pingpong op=(\\S+) transport=(\\S+) size=(\\d+) iterations=(\\d+) p50_us=([0-9.]+) "
                    + "p90_us=([0-9.]+) p99_us=([0-9.]+) max_us=([0-9.]+) ops_per_s=(\\d+) mb_per_s=([0-9.]+)");
    private static final Pattern CLIENT_VERIFIED = Pattern.compile(
            "rma-pingpong: verified: the server's slots \\(CRC-32C (0x[0-9a-f]{8})\\) and counter \\((-?\\d+)\\)");
    private static final Pattern SERVER_VERIFIED = Pattern.compile(
            "rma-pingpong: verified: slots CRC-32C (0x[0-9a-f]{8}) and counter (-?\\d+) match");

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldMeasurePutGetAndFetchAddThenVerifyOnBothSides(String transport) throws Exception {
        try (ChildProcess server = SampleRun.start("rma-pingpong", "--server", "--port", "0", "--size", "100",
                "--transport", transport)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("rma-pingpong", "--client", "127.0.0.1:" + port, "--size", "100",
                    "--iterations", "200", "--warmup", "21", "--transport", transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                assertEquals(0, server.waitFor(30), server.output());
                String out = client.output();
                Map<String, MatchResult> ops = new HashMap<>();
                Matcher m = RESULT.matcher(out);
                while (m.find()) {
                    ops.put(m.group(1), m.toMatchResult());
                }
                assertEquals(java.util.Set.of("put", "get", "fetch_add"), ops.keySet(), out);
                for (MatchResult r : ops.values()) {
                    String tls = r.group(2);
                    assertEquals(transport.equals("tcp"), tls.equals("tcp"), "transport " + tls);
                    if (transport.equals("shm")) {
                        assertTrue(tls.matches(".*(posix|sysv|cma).*"), tls);
                    }
                    assertEquals(r.group(1).equals("fetch_add") ? "8" : "100", r.group(3), r.group());
                    assertEquals("200", r.group(4), r.group());
                    double p50 = Double.parseDouble(r.group(5));
                    double p99 = Double.parseDouble(r.group(7));
                    assertTrue(p50 > 0 && p50 <= Double.parseDouble(r.group(6)) && p99 >= p50
                            && Double.parseDouble(r.group(8)) >= p99, r.group());
                    assertTrue(Long.parseLong(r.group(9)) > 0, r.group());
                    assertTrue(Double.parseDouble(r.group(10)) > 0, r.group());
                }
                Matcher c = CLIENT_VERIFIED.matcher(out);
                assertTrue(c.find(), out);
                Matcher sv = SERVER_VERIFIED.matcher(server.output());
                assertTrue(sv.find(), server.output());
                // Warm-up included: 221 fetch-adds of DELTA. The CRC both sides print is the same.
                assertEquals(Long.toString(221 * RmaPingPong.DELTA), c.group(2));
                assertEquals(c.group(2), sv.group(2));
                assertEquals(c.group(1), sv.group(1));
                for (String column : new String[] {"put+flush", "get", "fetch-add", "p50 us", "p99.9 us", "MB/s"}) {
                    assertTrue(out.contains(column), column);
                }
            }
        }
    }

    @Test
    void shouldEndBothSidesWithOneLineWhenTheSizesDiffer() throws Exception {
        try (ChildProcess server = SampleRun.start("rma-pingpong", "--server", "--port", "0", "--size", "64",
                "--transport", "tcp")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("rma-pingpong", "--client", "127.0.0.1:" + port, "--size", "32",
                    "--transport", "tcp")) {
                assertEquals(1, client.waitFor(60), client.output());
                assertTrue(client.output().contains("the server's region is 136 bytes, not the 72 of --size 32"),
                        client.output());
                assertFalse(client.output().contains("\tat "), "no stack trace: " + client.output());
            }
            assertEquals(1, server.waitFor(30), server.output());
            assertTrue(server.output().contains("the client ended the run without asking for verification"),
                    server.output());
            assertFalse(server.output().contains("\tat "), "no stack trace: " + server.output());
        }
    }

    @Test
    void shouldReportAServerThatGoesAwayMidRun() throws Exception {
        try (ChildProcess server = SampleRun.start("rma-pingpong", "--server", "--port", "0", "--transport", "tcp")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("rma-pingpong", "--client", "127.0.0.1:" + port,
                    "--iterations", "100000000", "--warmup", "0", "--transport", "tcp")) {
                server.awaitOutput("connected", 60); // mid-run, however slowly a loaded machine starts the client
                Thread.sleep(500);
                server.kill();
                assertEquals(1, client.waitFor(60), client.output());
                assertTrue(client.output().contains("went away") || client.output().contains("no answer"),
                        client.output());
                assertFalse(client.output().contains("\tat "), "no stack trace: " + client.output());
            }
        }
    }

    @Test
    void shouldRejectBadArgumentsWithOneLineAndStatusTwo() throws Exception {
        String[][] cases = {
            {"--server", "--size", "0"},
            {"--server", "--iterations", "0"},
            {"--client", "127.0.0.1:1", "--transport", "tcp;rm"},
        };
        for (String[] c : cases) {
            try (ChildProcess run = SampleRun.start("rma-pingpong", c)) {
                assertEquals(2, run.waitFor(30), String.join(" ", c) + "\n" + run.output());
                assertEquals(1, run.output().strip().lines().count(), "one line: " + run.output());
            }
        }
    }
}
