package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.github.ucxffm.samples.SampleAssertions.assertFailedCleanly;
import static io.github.ucxffm.samples.SampleAssertions.assertTransport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bandwidth sample as two processes, over tcp and shared memory; and its failures. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BandwidthTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=bandwidth transport=(\\S+) size=(\\d+) iterations=(\\d+) mb_per_s=([0-9.]+) "
                    + "msgs_per_s=(\\d+)");

    @ParameterizedTest(name = "{0}, size {1}, window {2}")
    @CsvSource({"tcp, 262144, 8", "shm, 262144, 8", "tcp, 8, 32", "shm, 8, 32"})
    void shouldMeasureBandwidthAndHaveEveryByteAcknowledged(String transport, int size, int window)
            throws Exception {
        int iterations = 1000;
        int warmup = 100;
        try (ChildProcess server = SampleRun.start("bandwidth", "--server", "--port", "0", "--transport", transport,
                "--window", String.valueOf(window))) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("bandwidth", "--client", "127.0.0.1:" + port, "--size",
                    String.valueOf(size), "--iterations", String.valueOf(iterations), "--warmup",
                    String.valueOf(warmup), "--window", String.valueOf(window), "--transport", transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                Matcher m = RESULT.matcher(client.output());
                assertTrue(m.find(), client.output());
                assertTransport(transport, m.group(1));
                assertEquals(String.valueOf(size), m.group(2));
                assertEquals(String.valueOf(iterations), m.group(3));
                double mbPerSecond = Double.parseDouble(m.group(4));
                long messagesPerSecond = Long.parseLong(m.group(5));
                assertTrue(mbPerSecond > 0 && messagesPerSecond > 0, client.output());
                // The two figures describe the same run.
                assertEquals(messagesPerSecond * (double) size / 1e6, mbPerSecond, 0.01 * mbPerSecond + 0.001,
                        client.output());
                assertTrue(client.output().contains("window " + window), client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            int total = iterations + warmup;
            assertTrue(server.output().contains(window + " receives posted"), server.output());
            assertTrue(server.output().contains("served " + total + " messages, " + (long) total * size + " bytes"),
                    server.output());
        }
    }

    @Test
    void shouldUseOneMebibyteMessagesByDefault() throws Exception {
        try (ChildProcess server = SampleRun.start("bandwidth", "--server", "--port", "0", "--transport", "shm")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("bandwidth", "--client", "127.0.0.1:" + port, "--iterations",
                    "50", "--warmup", "0", "--transport", "shm")) {
                assertEquals(0, client.waitFor(60), client.output());
                assertTrue(client.output().contains("size=1048576 iterations=50 "), client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("served 50 messages, 52428800 bytes"), server.output());
        }
    }

    @Test
    void shouldReportAClientThatGoesAwayMidRunAndExitOne() throws Exception {
        try (ChildProcess server = SampleRun.start("bandwidth", "--server", "--port", "0", "--transport", "tcp")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("bandwidth", "--client", "127.0.0.1:" + port, "--iterations",
                    "1000000000", "--warmup", "0", "--transport", "tcp")) {
                server.awaitOutput("receives posted", 30);
                Thread.sleep(500);
                client.kill();
                assertFailedCleanly(server, 1, "the client went away");
            }
        }
    }

    @Test
    void shouldRejectBadArgumentsWithOneLineAndStatusTwo() throws Exception {
        String[][] cases = {
            {"--client", "127.0.0.1:1", "--size", "7"},
            {"--client", "127.0.0.1:1", "--size", "1m", "--window", "2048"},
            {"--client", "127.0.0.1:1", "--window", "0"},
        };
        for (String[] c : cases) {
            try (ChildProcess run = SampleRun.start("bandwidth", c)) {
                assertFailedCleanly(run, 2, "bandwidth: ");
                assertEquals(1, run.output().strip().lines().count(), String.join(" ", c) + ": " + run.output());
            }
        }
    }
}
