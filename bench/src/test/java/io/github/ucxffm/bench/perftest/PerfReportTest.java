package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The table and the Final line, against what ucx_perftest 1.13.1 printed on this machine. */
class PerfReportTest {

    /** ucx_perftest 127.0.0.1 -t tag_lat -s 8 -n 100000, as printed. */
    static final String NATIVE_TAG_LAT = """
            +--------------+--------------+------------------------------+---------------------+-----------------------+
            |              |              |        latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |
            +--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
            |    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |
            +--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
            Final:                100000      0.110     0.110     0.110       69.18      69.18     9067393     9067393
            """;

    /** The header of a bandwidth test (ucx_perftest -t tag_bw). */
    static final String NATIVE_BW_LABEL = "|              |              |       overhead (usec)        |"
            + "   bandwidth (MB/s)  |  message rate (msg/s) |";

    /** A progress row and a Final line of ucx_perftest over tcp. */
    static final String NATIVE_ROWS = """
            [thread 0]            113857      4.338     4.061     4.061        1.88       1.88      246252      246252
            [thread 0]           2875032      4.354  3949.153     5.813        0.00       1.31         253      172014
            Final:               3000000      4.424     4.338     6.771        1.76       1.13      230546      147697
            """;

    @Test
    void shouldPrintTheHeaderExactlyAsUcxPerftest() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PerfReport r = new PerfReport(new PrintStream(b, true, StandardCharsets.UTF_8), PerfTestType.TAG_LAT, 8,
                50.0, false);
        r.printHeader(PerfTestType.TAG_LAT);
        String[] expected = NATIVE_TAG_LAT.split("\n");
        String[] got = b.toString(StandardCharsets.UTF_8).split("\n");
        for (int i = 0; i < 5; i++) {
            assertEquals(expected[i], got[i]);
        }
        ByteArrayOutputStream bw = new ByteArrayOutputStream();
        new PerfReport(new PrintStream(bw, true, StandardCharsets.UTF_8), PerfTestType.TAG_BW, 8, 50.0, false)
                .printHeader(PerfTestType.TAG_BW);
        assertEquals(NATIVE_BW_LABEL, bw.toString(StandardCharsets.UTF_8).split("\n")[1]);
    }

    @Test
    void shouldFormatRowsInUcxPerftestsColumns() {
        assertEquals(NATIVE_TAG_LAT.split("\n")[5], PerfReport.formatRow("Final:",
                new PerfFinal(100000, 0.110, 0.110, 0.110, 69.18, 69.18, 9067393, 9067393)));
        String[] rows = NATIVE_ROWS.split("\n");
        assertEquals(rows[1], PerfReport.formatRow("[thread 0]",
                new PerfFinal(2875032, 4.354, 3949.153, 5.813, 0.00, 1.31, 253, 172014)));
        assertEquals(rows[2], PerfReport.formatRow("Final:",
                new PerfFinal(3000000, 4.424, 4.338, 6.771, 1.76, 1.13, 230546, 147697)));
    }

    @Test
    void shouldHalveAPingPongAndDeriveBandwidthAndRateFromTheTime() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PerfReport r = new PerfReport(new PrintStream(b, true, StandardCharsets.UTF_8), PerfTestType.TAG_LAT,
                1 << 20, 50.0, false);
        long t = 1_000_000_000L;
        r.begin(t);
        for (int i = 0; i < 100; i++) {
            t += 2_000; // a round trip of 2 us: 1 us one way
            r.update(t);
        }
        r.finish(t);
        PerfFinal f = r.result();
        assertEquals(100, f.iterations());
        assertEquals(1.0, f.percentileMicros(), 1e-9);
        assertEquals(1.0, f.overallMicros(), 1e-9);
        assertEquals(1.0, f.averageMicros(), 1e-9);
        assertEquals(1e6, f.rateOverall(), 1e-3);
        assertEquals(1e6, f.bandwidthOverall(), 1e-3); // 1 MiB per microsecond is 10^6 MB/s (MB = 2^20 bytes)
        r.printFinal();
        PerfFinal parsed = PerfFinal.lastIn(b.toString(StandardCharsets.UTF_8)).orElseThrow();
        assertEquals(100, parsed.iterations());
        assertEquals(1.0, parsed.overallMicros(), 1e-3);
    }

    @Test
    void shouldNotHalveAOneWayStreamAndCountDrainingInTheOverallTime() {
        PerfReport r = new PerfReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                PerfTestType.TAG_BW, 1000, 50.0, true);
        long t = 0;
        r.begin(t);
        for (int i = 0; i < 10; i++) {
            t += 1_000;
            r.update(t);
        }
        r.finish(t + 10_000); // draining the window took as long as the loop
        PerfFinal f = r.result();
        assertEquals(1.0, f.percentileMicros(), 1e-9);
        assertEquals(2.0, f.overallMicros(), 1e-9);
        assertEquals(1000 / 2e-6 / (1 << 20), f.bandwidthOverall(), 1e-6);
    }

    @Test
    void shouldTakeThePercentileOverRecentIterationsOnly() {
        PerfReport r = new PerfReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                PerfTestType.TAG_BW, 8, 50.0, true);
        long t = 0;
        r.begin(t);
        for (int i = 0; i < PerfReport.QUEUE; i++) {
            t += 100_000; // old and slow
            r.update(t);
        }
        for (int i = 0; i < PerfReport.QUEUE / 2 + 1; i++) {
            t += 1_000; // recent and fast: the majority of the queue
            r.update(t);
        }
        assertEquals(1.0, r.result().percentileMicros(), 1e-9);
    }

    @Test
    void shouldPrintProgressRowsAboutOnceASecondAndTheFinalRowLast() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PerfReport r = new PerfReport(new PrintStream(b, true, StandardCharsets.UTF_8), PerfTestType.TAG_LAT, 8,
                50.0, false);
        long t = 0;
        r.begin(t);
        for (int i = 0; i < 5; i++) {
            t += 600_000_000L;
            r.update(t);
        }
        r.printFinal();
        String[] lines = b.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(3, lines.length, b.toString());
        assertTrue(lines[0].startsWith("[thread 0]"));
        assertTrue(lines[2].startsWith("Final:"));
    }

    @Test
    void shouldPrintTheServerBoxInUcxPerftestsWidth() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PerfReport.printServerInfo(new PrintStream(b, true, StandardCharsets.UTF_8), "x", PerfTestType.UCP_PUT_LAT,
                8);
        for (String line : b.toString(StandardCharsets.UTF_8).split("\n")) {
            assertEquals(108, line.length(), line);
        }
        assertTrue(b.toString(StandardCharsets.UTF_8).contains("| Test:         put latency "));
    }

    @Test
    void shouldCountABatchAsItsIterationsEachWithTheBatchAverage() {
        PerfReport r = new PerfReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                PerfTestType.TAG_BW, 8, 50.0, true);
        r.begin(1_000);
        r.update(1_000 + 16 * 40, 16);  // 16 operations of 40 ns
        r.update(1_000 + 16 * 40 + 4 * 100, 4); // 4 of 100 ns
        r.finish(1_000 + 16 * 40 + 4 * 100);
        PerfFinal f = r.result();
        assertEquals(20, f.iterations());
        assertEquals(0.040, f.percentileMicros(), 1e-9, "16 of the 20 samples are 40 ns");
        assertEquals((16 * 40 + 4 * 100) / 20.0 / 1000, f.overallMicros(), 1e-9);
    }

    @Test
    void shouldTakeRanksOverTheLast2048IterationsAsUcxPerftest() {
        PerfReport r = new PerfReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                PerfTestType.TAG_BW, 8, 99.9, true);
        long t = 0;
        r.begin(t);
        // 5000 iterations of 1 us, then 2048 of 1..2048 ns + 10 us: only the last 2048 count
        for (int i = 0; i < 5000; i++) {
            t += 1_000;
            r.update(t);
        }
        for (int i = 1; i <= PerfReport.QUEUE; i++) {
            t += 10_000 + i;
            r.update(t);
        }
        // floor(2048 * 99.9 / 100) = 2045: the 3rd-highest of the last 2048
        assertEquals((10_000 + 2046) / 1000.0, r.result().percentileMicros(), 1e-9);
        PerfReport max = new PerfReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                PerfTestType.TAG_BW, 8, 100.0, true);
        PerfReport min = new PerfReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                PerfTestType.TAG_BW, 8, 0.0, true);
        t = 0;
        max.begin(t);
        min.begin(t);
        for (int i = 1; i <= 1000; i++) {
            t += i * 1_000L;
            max.update(t);
            min.update(t);
        }
        // fewer than 2048 iterations: the measured ones only, -R 100 the maximum and -R 0 the minimum
        assertEquals(1000.0, max.result().percentileMicros(), 1e-9);
        assertEquals(1.0, min.result().percentileMicros(), 1e-9);
    }

    @Test
    void shouldLabelEachThreadsProgressRows() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PerfReport r = new PerfReport(new PrintStream(b, true, StandardCharsets.UTF_8), PerfTestType.TAG_BW, 8, 50.0,
                false, 3);
        r.begin(0);
        r.update(2_000_000_000L); // past the one-second interval: a progress row
        assertTrue(b.toString(StandardCharsets.UTF_8).startsWith("[thread 3]"), b.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldLeaveSkippedTimeOutOfTheAveragesAndPercentiles() {
        PerfReport r = new PerfReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                PerfTestType.TAG_LAT, 8, 50.0, true);
        r.begin(0);
        r.update(2_000); // round trips of 2 us: 1 us one way
        r.update(4_000);
        r.skipTo(1_000_000); // a millisecond of native blocks in between
        r.update(1_002_000);
        r.update(1_004_000);
        r.finish(1_004_000);
        PerfFinal f = r.result();
        assertEquals(4, f.iterations());
        assertEquals(1.0, f.percentileMicros(), 1e-9);
        assertEquals(1.0, f.overallMicros(), 1e-9);
        assertEquals(1.0, f.averageMicros(), 1e-9);
    }
}
