package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The uct-pingpong sample as two processes over shared memory and tcp, and refusals of what UCT cannot do. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UctPingPongTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=uct-pingpong transport=(\\S+) size=(\\d+) iterations=(\\d+) p50_oneway_us=([0-9.]+) "
                    + "p99_oneway_us=([0-9.]+) msgs_per_s=(\\d+)");

    @ParameterizedTest(name = "{0}/{1}, size {2}")
    @CsvSource({"posix, memory, 32", "tcp, lo, 1000"})
    void shouldPingPongShortActiveMessagesAndVerifyEveryPayload(String tl, String dev, int size) throws Exception {
        int iterations = 2000;
        int warmup = 100;
        try (ChildProcess server = SampleRun.start("uct-pingpong", "--server", "--port", "0", "--transport", tl,
                "--device", dev)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("uct-pingpong", "--client", "127.0.0.1:" + port, "--size",
                    String.valueOf(size), "--iterations", String.valueOf(iterations), "--warmup",
                    String.valueOf(warmup), "--transport", tl, "--device", dev)) {
                assertEquals(0, client.waitFor(60), client.output());
                Matcher m = RESULT.matcher(client.output());
                assertTrue(m.find(), client.output());
                assertEquals(tl + "/" + dev, m.group(1));
                assertEquals(String.valueOf(size), m.group(2));
                assertEquals(String.valueOf(iterations), m.group(3));
                double p50 = Double.parseDouble(m.group(4));
                assertTrue(p50 > 0 && p50 <= Double.parseDouble(m.group(5)), client.output());
                assertTrue(client.output().contains("uct-pingpong: " + (iterations + warmup)
                        + " pongs, payload verified"), client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            // the server checked every ping's payload and the client's count
            assertTrue(server.output().contains("uct-pingpong: served " + (iterations + warmup)
                    + " round trips, payload verified"), server.output());
        }
    }

    @Test
    void shouldRefuseATransportWithoutActiveMessagesAnUnknownDeviceAndATooLargeSize() throws Exception {
        try (ChildProcess p = SampleRun.start("uct-pingpong", "--server", "--port", "0", "--transport", "cma",
                "--device", "memory")) {
            assertEquals(SampleException.USAGE, p.waitFor(30), p.output());
            assertTrue(p.output().contains("cma/memory has no short active messages"), p.output());
        }
        try (ChildProcess p = SampleRun.start("uct-pingpong", "--server", "--port", "0", "--transport", "posix",
                "--device", "bogus")) {
            assertEquals(SampleException.USAGE, p.waitFor(30), p.output());
            assertTrue(p.output().contains("no UCT transport posix on device bogus here"), p.output());
        }
        try (ChildProcess p = SampleRun.start("uct-pingpong", "--client", "127.0.0.1:1", "--transport", "posix",
                "--device", "memory", "--size", "4096")) {
            assertEquals(SampleException.USAGE, p.waitFor(30), p.output());
            assertTrue(p.output().contains("--size 4096 is too large for posix/memory"), p.output());
        }
    }
}
