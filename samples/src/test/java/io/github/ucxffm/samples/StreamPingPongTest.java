package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.github.ucxffm.samples.SampleAssertions.assertFailedCleanly;
import static io.github.ucxffm.samples.SampleAssertions.assertTransport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stream-pingpong sample as two processes, over tcp and shared memory; and its failures. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StreamPingPongTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=stream-pingpong transport=(\\S+) size=(\\d+) iterations=(\\d+) p50_oneway_us=([0-9.]+) "
                    + "p99_oneway_us=([0-9.]+) msgs_per_s=(\\d+)");

    @ParameterizedTest(name = "{0}, size {1}, wakeup {2}")
    @CsvSource({"tcp, 100, false", "shm, 100, false", "tcp, 300000, true", "shm, 300000, true"})
    void shouldMeasureStreamPingPongWithTheSizeAnnouncedInTheHeader(String transport, int size, boolean wakeup)
            throws Exception {
        // The server gets no --size: the client's first frame tells it.
        try (ChildProcess server = SampleRun.start("stream-pingpong", args(wakeup, "--server", "--port", "0",
                "--transport", transport))) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("stream-pingpong", args(wakeup, "--client", "127.0.0.1:" + port,
                    "--size", String.valueOf(size), "--iterations", "1000", "--warmup", "100", "--transport",
                    transport))) {
                assertEquals(0, client.waitFor(60), client.output());
                Matcher m = RESULT.matcher(client.output());
                assertTrue(m.find(), client.output());
                assertTransport(transport, m.group(1));
                assertEquals(String.valueOf(size), m.group(2));
                assertEquals("1000", m.group(3));
                double p50 = Double.parseDouble(m.group(4));
                assertTrue(p50 > 0 && p50 <= Double.parseDouble(m.group(5)), client.output());
                assertTrue(Long.parseLong(m.group(6)) > 0, client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("1100 round trips of " + size + " bytes announced"), server.output());
            assertTrue(server.output().contains("served 1100 round trips"), server.output());
        }
    }

    @Test
    void shouldReportAClientThatGoesAwayMidRunAndExitOne() throws Exception {
        try (ChildProcess server = SampleRun.start("stream-pingpong", "--server", "--port", "0", "--transport", "tcp")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("stream-pingpong", "--client", "127.0.0.1:" + port,
                    "--iterations", "1000000000", "--warmup", "0", "--transport", "tcp")) {
                server.awaitOutput("round trips of 8 bytes announced", 30);
                Thread.sleep(500);
                client.kill();
                assertFailedCleanly(server, 1, "the client went away while waiting for a ping");
            }
        }
    }

    @Test
    void shouldRejectAnEmptyPingWithOneLineAndStatusTwo() throws Exception {
        try (ChildProcess run = SampleRun.start("stream-pingpong", "--client", "127.0.0.1:1", "--size", "0")) {
            assertFailedCleanly(run, 2, "--size must be at least 1");
            assertEquals(1, run.output().strip().lines().count(), run.output());
        }
    }

    private static String[] args(boolean wakeup, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        if (wakeup) {
            all.add("--wakeup");
        }
        return all.toArray(String[]::new);
    }
}
