package io.github.ucxffm.bench.perftest;

import io.github.ucxffm.testsupport.RunnerPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ucx-ffm runner as a user runs it: a server process and a client process on 127.0.0.1, every test with a few
 * iterations. Functional only: the numbers must parse and be positive, never be fast.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PerfTestRunTest {

    static final String MAIN = PerfTest.class.getName();

    /**
     * Checks a run of either runner: both exit 0, the client printed the header and a Final line with the iterations
     * asked for and positive times and rate, the server accepted the connection. Not the bandwidth: 8 bytes per
     * iteration on a loaded machine may print as 0.00 MB/s.
     */
    static PerfFinal assertFinal(RunnerPair.Outcome[] o, long iterations) {
        String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
        assertEquals(0, o[0].exit(), all);
        assertEquals(0, o[1].exit(), all);
        assertTrue(o[0].output().contains("| # iterations |"), all);
        assertTrue(o[1].output().contains("Accepted connection from"), all);
        PerfFinal f = PerfFinal.lastIn(o[0].output()).orElseThrow(() -> new AssertionError("no Final line\n" + all));
        assertEquals(iterations, f.iterations(), all);
        assertTrue(f.percentileMicros() > 0 && f.overallMicros() > 0 && f.rateOverall() > 0, all);
        return f;
    }

    /** {@link #assertFinal}, a positive bandwidth, and both sides' CPU line. */
    static PerfFinal assertRan(RunnerPair.Outcome[] o, long iterations) {
        PerfFinal f = assertFinal(o, iterations);
        String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
        assertTrue(f.bandwidthOverall() > 0, all);
        // both sides report the CPU time of their measured loop, which bench compare reads
        assertTrue(o[0].output().contains(PerfRunner.CPU_LINE) && o[1].output().contains(PerfRunner.CPU_LINE), all);
        return f;
    }

    @ParameterizedTest
    @EnumSource(value = PerfTestType.class, mode = EnumSource.Mode.EXCLUDE,
            names = {"AM_LAT", "PUT_LAT", "AM_BW", "PUT_BW"}) // UCT: UctPerfTestRunTest
    void shouldRunEveryTestBetweenTwoProcesses(PerfTestType test) throws Exception {
        String size = test.operation().isAtomic() ? "8" : "1000";
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "shm"))) {
            RunnerPair.Outcome[] o = pair.run(List.of("-t", test.testName(), "-s", size, "-n", "300", "-w", "20"), 90);
            assertRan(o, 300);
            assertTrue(o[0].output().contains("transports: "), o[0].output());
            // -w 20 is raised to the JIT floor, and rounds of it repeat until the minimum time is over
            java.util.regex.Matcher m = WARMUP.matcher(o[0].output());
            assertTrue(m.find(), o[0].output());
            assertEquals(PerfRunner.JIT_WARMUP, Long.parseLong(m.group(2)), m.group());
            assertTrue(Long.parseLong(m.group(3)) >= PerfRunner.WARMUP_MIN_NANOS / 1_000_000, m.group());
        }
    }

    /** The client's warm-up line: rounds, iterations per round, milliseconds. */
    static final java.util.regex.Pattern WARMUP =
            java.util.regex.Pattern.compile("warm-up: (\\d+) rounds? of (\\d+) iterations, (\\d+) ms");

    @Test
    void shouldRunRendezvousSizesOverTcpWithAWindow() throws Exception {
        for (String test : List.of("tag_bw", "ucp_am_lat", "ucp_put_lat")) {
            try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "tcp"))) {
                RunnerPair.Outcome[] o = pair.run(List.of("-t", test, "-s", "300000", "-n", "40", "-w", "4", "-O",
                        "4"), 90);
                assertRan(o, 40);
                assertTrue(o[0].output().contains("transports: tcp"), o[0].output());
                java.util.regex.Matcher m = WARMUP.matcher(o[0].output());
                assertTrue(m.find(), o[0].output());
                if (test.endsWith("_lat")) {
                    // a large ping-pong: one round of -w's iterations, however short
                    assertEquals("1", m.group(1), m.group());
                    assertEquals("4", m.group(2), m.group());
                } else {
                    // a bandwidth test under 1 MiB warms up for the JIT floor
                    assertEquals(PerfRunner.JIT_WARMUP, Long.parseLong(m.group(2)), m.group());
                }
            }
        }
    }

    @Test
    void shouldPrintOnlyTheNumbersWithMinusF() throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of())) {
            RunnerPair.Outcome[] o = pair.run(List.of("-t", "tag_lat", "-n", "100", "-f"), 60);
            assertEquals(0, o[0].exit(), o[0].output());
            assertTrue(o[0].output().contains("|     Test     |"), o[0].output());
            assertTrue(PerfFinal.lastIn(o[0].output()).isEmpty(), "-f prints the numbers without Final:");
            assertTrue(o[0].output().lines().anyMatch(l -> l.matches("\\s+100\\s+[0-9.]+(\\s+[0-9.]+){6}")),
                    o[0].output());
        }
    }

    @Test
    void shouldFailWithAMessageWhenNoServerListens() throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of())) {
            RunnerPair.Outcome o = pair.runAlone(List.of("127.0.0.1", "-p", Integer.toString(RunnerPair.freePort()),
                    "-t", "tag_lat", "-n", "10"), 60);
            assertNotEquals(0, o.exit(), o.output());
            assertTrue(o.output().contains("ucx-ffm perftest: failed"), o.output());
        }
    }

    @Test
    void shouldSleepOnTheEventFdWithMinusESleepOverShmAndTcp() throws Exception {
        for (List<String> cell : List.of(List.of("shm", "tag_lat"), List.of("tcp", "tag_bw"))) {
            try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", cell.get(0)))) {
                RunnerPair.Outcome[] o = pair.run(List.of("-E", "sleep"), List.of("-t", cell.get(1), "-n", "2000",
                        "-w", "10", "-E", "sleep"), 60);
                assertRan(o, 2000);
            }
        }
    }

    @Test
    void shouldTellTheUserToStartTheServerWithMinusESleepToo() throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "shm"))) {
            RunnerPair.Outcome[] o = pair.run(List.of("-t", "tag_lat", "-n", "100", "-E", "sleep"), 60);
            assertNotEquals(0, o[1].exit(), o[1].output());
            assertTrue(o[1].output().contains("start the server with -E sleep too"), o[1].output());
        }
    }

    /** A thread's progress row. */
    static final java.util.regex.Pattern THREAD_ROW = java.util.regex.Pattern.compile("^\\[thread (\\d+)]",
            java.util.regex.Pattern.MULTILINE);

    @Test
    void shouldRunAWorkerPerThreadWithMinusTAndAggregateAsUcxPerftest() throws Exception {
        for (String tls : List.of("shm", "tcp")) {
            try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", tls))) {
                RunnerPair.Outcome[] o = pair.run(List.of("-T", "2"), List.of("-t", "tag_bw", "-n", "3000", "-w",
                        "10", "-T", "2"), 90);
                String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
                assertEquals(0, o[0].exit(), all);
                assertEquals(0, o[1].exit(), all);
                PerfFinal f = PerfFinal.lastIn(o[0].output()).orElseThrow(() -> new AssertionError(all));
                // ucx_perftest's aggregate: the iterations of one thread, the latency and the rates of all
                assertTrue(f.isAggregate(), all);
                assertEquals(3000, f.iterations(), all);
                assertTrue(f.overallMicros() > 0 && f.rateOverall() > 0 && f.bandwidthOverall() > 0, all);
                // one Final line and one transports line for the process, however many threads
                assertEquals(1, o[0].output().lines().filter(l -> l.startsWith("Final:")).count(), all);
                assertEquals(1, o[0].output().lines().filter(l -> l.contains("transports: ")).count(), all);
            }
        }
    }

    @Test
    void shouldRunPingPongsInThreads() throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", "shm"))) {
            RunnerPair.Outcome[] o = pair.run(List.of("-T", "2"), List.of("-t", "tag_lat", "-n", "500", "-w", "10",
                    "-T", "2", "-f"), 90);
            String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
            assertEquals(0, o[0].exit(), all);
            // -f: the aggregate's four numbers without the prefix
            assertTrue(o[0].output().lines().anyMatch(l -> PerfFinal.numbers(l).map(PerfFinal::isAggregate)
                    .orElse(false) && PerfFinal.numbers(l).get().iterations() == 500), all);
        }
    }

    /** Builds the C half of {@code --paired} as {@code ./ucx-ffm perftest} does; returns the library's path. */
    static String pairedLibrary() throws Exception {
        java.nio.file.Path source = java.nio.file.Path.of("native", "ucp_paired.c");
        assertTrue(java.nio.file.Files.isRegularFile(source), "run from the bench module: " + source.toAbsolutePath());
        java.nio.file.Path lib = java.nio.file.Path.of("target", "libucp_paired-test.so").toAbsolutePath();
        java.nio.file.Files.createDirectories(lib.getParent());
        io.github.ucxffm.testsupport.ChildProcess gcc = io.github.ucxffm.testsupport.ChildProcess.command("gcc",
                "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", lib.toString(), source.toString(), "-lucp",
                "-lucs").run(java.time.Duration.ofSeconds(120));
        assertEquals(0, gcc.exitCode(), "gcc:\n" + gcc.output());
        return lib.toString();
    }

    /** The client's Paired: line: pairs, block size, one-way p50 of each kind, median ratio. */
    static final java.util.regex.Pattern PAIRED = java.util.regex.Pattern.compile("Paired: (\\d+) pairs of (\\d+) "
            + "round trips; one-way p50 ucx-ffm ([0-9.]+) us, native ([0-9.]+) us; ratio per pair median ([0-9.]+)");
    /** The Paired FFM: line: turns, the plain FFM loop's one-way p50 and its two median ratios. */
    static final java.util.regex.Pattern PAIRED_FFM = java.util.regex.Pattern.compile("Paired FFM: (\\d+) turns; "
            + "one-way p50 plain FFM ([0-9.]+) us; plain FFM / native median ([0-9.]+) \\(quartiles [0-9.]+ to "
            + "[0-9.]+\\); ucx-ffm / plain FFM median ([0-9.]+)");

    @ParameterizedTest
    @EnumSource(value = PerfTestType.class, names = {"TAG_LAT", "TAG_SYNC_LAT", "STREAM_LAT", "UCP_AM_LAT"})
    void shouldCycleBindingNativeAndPlainFfmBlocksOnOneEndpointWithPaired(PerfTestType test) throws Exception {
        String lib = pairedLibrary();
        for (String tls : List.of("shm", "tcp")) {
            try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", tls, NativePairedLoop.LIBRARY_VARIABLE,
                    lib))) {
                // 10 blocks of 100: binding, C, plain FFM three times over, then a binding block with no partner
                RunnerPair.Outcome[] o = pair.run(List.of("-t", test.testName(), "-s", "64", "-n", "1000", "-w",
                        "10", "--paired=100"), 90);
                // Final: covers the binding's blocks alone
                assertFinal(o, 400);
                java.util.regex.Matcher m = PAIRED.matcher(o[0].output());
                assertTrue(m.find(), tls + "\n" + o[0].output());
                assertEquals("3", m.group(1), m.group());
                assertEquals("100", m.group(2), m.group());
                for (int g = 3; g <= 5; g++) {
                    assertTrue(Double.parseDouble(m.group(g)) > 0, m.group());
                }
                java.util.regex.Matcher f = PAIRED_FFM.matcher(o[0].output());
                assertTrue(f.find(), tls + "\n" + o[0].output());
                assertEquals("3", f.group(1), f.group());
                for (int g = 2; g <= 4; g++) {
                    assertTrue(Double.parseDouble(f.group(g)) > 0, f.group());
                }
            }
        }
    }

    @Test
    void shouldFetchRendezvousActiveMessagesInEveryKindOfPairedBlock() throws Exception {
        String lib = pairedLibrary();
        for (String tls : List.of("shm", "tcp")) {
            try (RunnerPair pair = new RunnerPair(MAIN, Map.of("UCX_TLS", tls, NativePairedLoop.LIBRARY_VARIABLE,
                    lib))) {
                // 256 KiB goes by rendezvous: each kind's handler keeps the data and its waiting loop fetches it
                RunnerPair.Outcome[] o = pair.run(List.of("-t", "ucp_am_lat", "-s", "262144", "-n", "300", "-w", "3",
                        "--paired=50"), 90);
                assertFinal(o, 100);
                java.util.regex.Matcher m = PAIRED.matcher(o[0].output());
                assertTrue(m.find(), tls + "\n" + o[0].output());
                assertEquals("2", m.group(1), m.group());
                java.util.regex.Matcher f = PAIRED_FFM.matcher(o[0].output());
                assertTrue(f.find(), tls + "\n" + o[0].output());
                assertEquals("2", f.group(1), f.group());
            }
        }
    }

    @Test
    void shouldRefusePairedWithoutTheLibraryBeforeConnecting() throws Exception {
        try (RunnerPair pair = new RunnerPair(MAIN, Map.of(NativePairedLoop.LIBRARY_VARIABLE, "/nonexistent/lib.so"))) {
            RunnerPair.Outcome o = pair.runAlone(List.of("127.0.0.1", "-p", Integer.toString(RunnerPair.freePort()),
                    "-t", "tag_lat", "--paired"), 60);
            assertEquals(1, o.exit(), o.output());
            assertTrue(o.output().contains(NativePairedLoop.LIBRARY_VARIABLE + " names no file"), o.output());
        }
    }
}
