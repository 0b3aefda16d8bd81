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
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The netty-echo and grpc-hello samples, each as a server and client process, over tcp and shared memory. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NettyEchoAndGrpcHelloTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=(\\S+) transport=(\\S+) size=(\\d+) iterations=(\\d+) p50_oneway_us=([0-9.]+) "
                    + "p99_oneway_us=([0-9.]+) msgs_per_s=(\\d+)");
    private static final Pattern STATS = Pattern.compile(
            "ucx-stats bytesSent=(\\d+) bytesReceived=(\\d+) messagesSent=(\\d+) channelsOpened=(\\d+)");

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldEchoAndVerifyEveryRoundOverUcx(String transport) throws Exception {
        try (ChildProcess server = SampleRun.start("netty-echo", "--server", "--port", "0", "--transport",
                transport)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("netty-echo", "--client", "127.0.0.1:" + port, "--size",
                    "1000", "--iterations", "2000", "--warmup", "100", "--transport", transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                assertTrue(client.output().contains("2000 echoes of 1000 bytes verified"), client.output());
                assertResult(client.output(), "netty-echo", transport, 1000, 2000);
                long[] c = stats(client.output());
                assertTrue(c[0] >= 2100L * 1000 && c[1] >= 2100L * 1000, "every round trip went through UCX: "
                        + client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("served 1 client"), server.output());
            long[] s = stats(server.output());
            assertTrue(s[0] >= 2100L * 1000 && s[1] >= 2100L * 1000 && s[3] >= 1, server.output());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldGreetOverGrpcOnUcx(String transport) throws Exception {
        try (ChildProcess server = SampleRun.start("grpc-hello", "--server", "--port", "0", "--transport",
                transport)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("grpc-hello", "--client", "127.0.0.1:" + port,
                    "--iterations", "300", "--warmup", "30", "--transport", transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                assertTrue(client.output().contains("server says 'hello, ucx-ffm 0'"), client.output());
                assertResult(client.output(), "grpc-hello", transport, "ucx-ffm 0".length(), 300);
                long[] c = stats(client.output());
                assertTrue(c[0] >= 330L * "ucx-ffm 0".length() && c[1] >= 330L * "hello, ucx-ffm 0".length()
                        && c[3] >= 1, client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("served 1 connection"), server.output());
        }
    }

    @Test
    void shouldServeTheGivenNumberOfClientsThenEnd() throws Exception {
        try (ChildProcess server = SampleRun.start("netty-echo", "--server", "--port", "0", "--clients", "2")) {
            int port = SampleRun.port(server, 30);
            for (int i = 0; i < 2; i++) {
                assertTrue(server.isAlive(), "still serving before client " + (i + 1));
                try (ChildProcess client = SampleRun.start("netty-echo", "--client", "127.0.0.1:" + port,
                        "--iterations", "50", "--warmup", "0")) {
                    assertEquals(0, client.waitFor(60), client.output());
                }
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("served 2 clients"), server.output());
        }
    }

    @Test
    void shouldFailClearlyOnAnUnreachableServer() throws Exception {
        try (ChildProcess client = SampleRun.start("netty-echo", "--client", "127.0.0.1:1", "--iterations", "10")) {
            SampleAssertions.assertFailedCleanly(client, 1, "cannot reach 127.0.0.1:1");
        }
        try (ChildProcess client = SampleRun.start("grpc-hello", "--client", "127.0.0.1:1", "--iterations", "10")) {
            SampleAssertions.assertFailedCleanly(client, 1, "cannot reach 127.0.0.1:1");
        }
    }

    private static void assertResult(String output, String sample, String transport, long size, long iterations) {
        Matcher m = RESULT.matcher(output);
        assertTrue(m.find(), output);
        assertEquals(sample, m.group(1));
        assertEquals(transport, m.group(2));
        assertEquals(size, Long.parseLong(m.group(3)));
        assertEquals(iterations, Long.parseLong(m.group(4)));
        assertTrue(Double.parseDouble(m.group(5)) > 0 && Double.parseDouble(m.group(5))
                <= Double.parseDouble(m.group(6)), output);
    }

    private static long[] stats(String output) {
        Matcher m = STATS.matcher(output);
        assertTrue(m.find(), "no counters in: " + output);
        return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
            Long.parseLong(m.group(4))};
    }
}
