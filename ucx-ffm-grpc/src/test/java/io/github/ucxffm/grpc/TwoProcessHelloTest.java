package io.github.ucxffm.grpc;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hello-world server and client ({@link HelloServerApp}, {@link HelloClientApp}: plain gRPC, nothing of UCX) in
 * two JVMs that have this module on their class path and {@code -Dio.github.ucxffm.grpc=true}: the providers must
 * put both on UCX, over tcp and over shared memory, which the UCX transport's counters of each process prove.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TwoProcessHelloTest {

    private static final Pattern LISTENING = Pattern.compile("listening on port (\\d+)");
    private static final Pattern STATS = Pattern.compile(
            "ucx-stats bytesSent=(\\d+) bytesReceived=(\\d+) messagesSent=(\\d+) channelsOpened=(\\d+)");
    /** The client's HTTP/2 connection preface alone is 24 bytes. */
    private static final int PREFACE = 24;
    private static final int SIGTERM = 15;

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldGreetOverUcxBetweenTwoProcessesChosenByTheProviders(String transport) throws Exception {
        try (ChildProcess server = app(transport, HelloServerApp.class, "0").name("grpc-server").start()) {
            int port = Integer.parseInt(server.awaitOutput(LISTENING, 60).group(1));
            String name = "ucx-" + transport;
            long[] client;
            try (ChildProcess c = app(transport, HelloClientApp.class, "127.0.0.1:" + port, name)
                    .name("grpc-client").start()) {
                assertEquals(0, c.waitFor(60), c.output());
                assertTrue(c.output().contains("answer: hello, " + name), c.output());
                client = stats(c);
            }
            ChildProcess.signal(server.pid(), SIGTERM); // stopped by PID; its shutdown hook prints the counters
            server.awaitExit(30);
            long[] served = stats(server);

            assertTrue(client[3] >= 1 && served[3] >= 1, "a UCX channel opened on each side: " + server.output());
            assertTrue(client[0] >= PREFACE + name.length(), "client sent over UCX: " + client[0]);
            assertTrue(served[1] >= PREFACE + name.length(), "server received over UCX: " + served[1]);
            assertTrue(served[1] <= client[0], "server received " + served[1] + " of " + client[0] + " sent");
            assertTrue(client[1] >= ("hello, " + name).length(), "client received over UCX: " + client[1]);
            assertTrue(client[1] <= served[0], "client received " + client[1] + " of " + served[0] + " sent");
            assertTrue(client[2] >= 1 && served[2] >= 1, "UCX messages on each side");
        }
    }

    private static ChildProcess.Builder app(String transport, Class<?> main, String... args) {
        List<String> flags = new ArrayList<>(ChildProcess.JVM_FLAGS);
        flags.add("-D" + UcxGrpc.ENABLE_PROPERTY + "=true");
        // connections are set up over TCP by UCX's connection manager whatever carries the data: tcp stays listed
        flags.add("-D" + UcxGrpc.UCX_PROPERTY_PREFIX + "TLS=" + (transport.equals("tcp") ? "tcp" : transport + ",tcp"));
        if (!transport.equals("tcp")) {
            // UCX 1.13 keeps shared memory out of endpoints with peer error handling (as the samples do)
            flags.add("-D" + UcxGrpc.PEER_ERRORS_PROPERTY + "=false");
        }
        List<String> all = new ArrayList<>(List.of(main.getName()));
        all.addAll(List.of(args));
        return ChildProcess.java(WithUcxStats.class).jvmFlags(flags).args(all);
    }

    /** bytesSent, bytesReceived, messagesSent, channelsOpened from the child's last counters line. */
    private static long[] stats(ChildProcess child) throws InterruptedException {
        String out = child.outputToEnd(30);
        MatchResult last = null;
        for (MatchResult m : STATS.matcher(out).results().toList()) {
            last = m;
        }
        assertTrue(last != null, "no counters printed: " + out);
        return new long[] {Long.parseLong(last.group(1)), Long.parseLong(last.group(2)),
            Long.parseLong(last.group(3)), Long.parseLong(last.group(4))};
    }
}
