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

/**
 * The am-pingpong sample as two processes, over tcp and shared memory, with pings small enough to go eager and
 * large enough to go by rendezvous; and a client that goes away.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AmPingPongTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=am-pingpong transport=(\\S+) size=(\\d+) iterations=(\\d+) p50_oneway_us=([0-9.]+) "
                    + "p99_oneway_us=([0-9.]+) msgs_per_s=(\\d+)");
    private static final Pattern SERVED = Pattern.compile("am-pingpong: served (\\d+) round trips \\((\\d+) by "
            + "rendezvous\\)");
    private static final Pattern CLIENT_RNDV = Pattern.compile("am-pingpong: (\\d+) of (\\d+) pongs came by "
            + "rendezvous");

    @ParameterizedTest(name = "{0}, size {1}, iterations {2}")
    @CsvSource({"tcp, 64, 2000", "shm, 64, 2000", "tcp, 1048576, 100", "shm, 1048576, 100"})
    void shouldAnswerEagerPingsInTheHandlerAndRendezvousPingsFromTheMainLoop(String transport, int size,
                                                                           int iterations) throws Exception {
        int total = iterations + 10;
        try (ChildProcess server = SampleRun.start("am-pingpong", "--server", "--port", "0", "--transport",
                transport)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("am-pingpong", "--client", "127.0.0.1:" + port, "--size",
                    String.valueOf(size), "--iterations", String.valueOf(iterations), "--warmup", "10",
                    "--transport", transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                Matcher m = RESULT.matcher(client.output());
                assertTrue(m.find(), client.output());
                assertTransport(transport, m.group(1));
                assertEquals(String.valueOf(size), m.group(2));
                assertEquals(String.valueOf(iterations), m.group(3));
                double p50 = Double.parseDouble(m.group(4));
                assertTrue(p50 > 0 && p50 <= Double.parseDouble(m.group(5)), client.output());
                assertTrue(Long.parseLong(m.group(6)) > 0, client.output());
                Matcher c = CLIENT_RNDV.matcher(client.output());
                assertTrue(c.find(), client.output());
                assertEquals(String.valueOf(total), c.group(2));
                assertRendezvous(size, Long.parseLong(c.group(1)), total, client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            Matcher s = SERVED.matcher(server.output());
            assertTrue(s.find(), server.output());
            assertEquals(String.valueOf(total), s.group(1));
            assertRendezvous(size, Long.parseLong(s.group(2)), total, server.output());
        }
    }

    /** 64 bytes always go eager; 1 MiB goes by rendezvous (UCX may still send the very first one eager). */
    private static void assertRendezvous(int size, long byRendezvous, int total, String output) {
        if (size <= 64) {
            assertEquals(0, byRendezvous, output);
        } else {
            assertTrue(byRendezvous >= total - 1, output);
        }
    }

    @Test
    void shouldReportAClientThatGoesAwayMidRunAndExitOne() throws Exception {
        try (ChildProcess server = SampleRun.start("am-pingpong", "--server", "--port", "0", "--transport", "tcp")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("am-pingpong", "--client", "127.0.0.1:" + port,
                    "--iterations", "1000000000", "--warmup", "0", "--transport", "tcp")) {
                server.awaitOutput("connected", 30);
                Thread.sleep(1000);
                client.kill();
                assertFailedCleanly(server, 1, "the client went away");
            }
        }
    }
}
