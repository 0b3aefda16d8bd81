package io.github.ucxffm.bench.jucx;

import io.github.ucxffm.bench.perftest.PerfFinal;
import io.github.ucxffm.bench.perftest.PerfTestType;
import io.github.ucxffm.testsupport.RunnerPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JUCX runner as a user runs it, two processes on 127.0.0.1: every test JUCX can run, with a few iterations,
 * against the UCX installed here (JUCX 1.15's native library on UCX 1.13.1). Functional only.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JucxPerfTestRunTest {

    private static final String MAIN = JucxPerfTest.class.getName();

    static Stream<PerfTestType> supported() {
        return JucxPerfTest.SUPPORTED.stream();
    }

    @ParameterizedTest
    @MethodSource("supported")
    void shouldRunEveryTestJucxSupportsBetweenTwoProcesses(PerfTestType test) throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "shm"))) {
            RunnerPair.Outcome[] o = pair.run(List.of("-t", test.testName(), "-s", "1000", "-n", "300", "-w", "20"),
                    90);
            String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
            assertEquals(0, o[0].exit(), all);
            assertEquals(0, o[1].exit(), all);
            assertTrue(o[1].output().contains("JUCX 1.15 (JNI)"), all);
            PerfFinal f = PerfFinal.lastIn(o[0].output()).orElseThrow(() -> new AssertionError("no Final\n" + all));
            assertEquals(300, f.iterations(), all);
            assertTrue(f.percentileMicros() > 0 && f.overallMicros() > 0 && f.bandwidthOverall() > 0, all);
        }
    }

    @Test
    void shouldRunRendezvousSizesOverTcp() throws Exception {
        for (String test : List.of("tag_lat", "ucp_am_bw", "ucp_get")) {
            try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "tcp"))) {
                RunnerPair.Outcome[] o = pair.run(List.of("-t", test, "-s", "300000", "-n", "40", "-w", "4"), 90);
                assertEquals(0, o[0].exit(), o[0].output() + o[1].output());
                assertEquals(40, PerfFinal.lastIn(o[0].output()).orElseThrow().iterations());
            }
        }
    }

    @Test
    void shouldRefuseWhatJucxCannotDoAndSayWhy() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        for (String test : List.of("ucp_add", "ucp_fadd", "ucp_swap", "ucp_cswap")) {
            assertEquals(1, JucxPerfTest.run(o, e, "127.0.0.1", "-t", test));
        }
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("remote atomic operations, which JUCX 1.15 does "
                + "not offer"), err.toString());
        assertEquals(1, JucxPerfTest.run(o, e, "127.0.0.1", "-t", "tag_sync_lat"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("synchronous tag sends"), err.toString());
        long ucpTests = java.util.Arrays.stream(PerfTestType.values()).filter(t -> !t.isUct()).count();
        assertEquals(ucpTests - 6, JucxPerfTest.SUPPORTED.size());
        assertEquals(1, JucxPerfTest.run(o, e, "127.0.0.1", "-t", "am_lat", "-x", "posix", "-d", "memory"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("am_lat is a UCT test"), err.toString());
        assertEquals(1, JucxPerfTest.run(o, e, "127.0.0.1", "-t", "tag_lat", "--paired"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--paired is not supported"), err.toString());
    }

    @Test
    void shouldRunAWorkerPerThreadWithMinusTAndAggregateAsUcxPerftest() throws Exception {
        for (String tls : List.of("shm", "tcp")) {
            try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", tls))) {
                RunnerPair.Outcome[] o = pair.run(List.of("-T", "2"), List.of("-t", "tag_bw", "-n", "3000", "-w",
                        "10", "-T", "2"), 90);
                String all = tls + "\nclient:\n" + o[0].output() + "\nserver:\n" + o[1].output();
                assertEquals(0, o[0].exit(), all);
                assertEquals(0, o[1].exit(), all);
                PerfFinal f = PerfFinal.lastIn(o[0].output()).orElseThrow(() -> new AssertionError(all));
                // ucx_perftest's aggregate: the iterations of one thread, the latency and the rates of all
                assertTrue(f.isAggregate(), all);
                assertEquals(3000, f.iterations(), all);
                assertTrue(f.overallMicros() > 0 && f.rateOverall() > 0 && f.bandwidthOverall() > 0, all);
                // one Final line for the process, however many threads: the aggregate, which reads thread 1's report
                assertEquals(1, o[0].output().lines().filter(l -> l.startsWith("Final:")).count(), all);
            }
        }
    }

    @Test
    void shouldTellAServerStartedWithFewerThreadsThanTheClientAsks() throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "shm"))) {
            RunnerPair.Outcome[] o = pair.run(List.of(), List.of("-t", "tag_bw", "-n", "100", "-T", "2"), 60);
            String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
            assertEquals(1, o[1].exit(), all);
            assertTrue(o[1].output().contains("start the server with -T 2 too"), all);
            assertEquals(1, o[0].exit(), "the client stops too, rather than wait for ever\n" + all);
        }
    }

    @Test
    void shouldSleepOnTheEventFdWithMinusESleep() throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "tcp"))) {
            RunnerPair.Outcome[] o = pair.run(List.of("-E", "sleep"), List.of("-t", "tag_lat", "-n", "2000", "-w",
                    "10", "-E", "sleep"), 60);
            String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
            assertEquals(0, o[0].exit(), all);
            assertEquals(0, o[1].exit(), all);
            assertEquals(2000, PerfFinal.lastIn(o[0].output()).orElseThrow(() -> new AssertionError(all)).iterations());
        }
    }
}
