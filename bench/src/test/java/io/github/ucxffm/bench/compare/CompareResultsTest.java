package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.compare.CompareResults.Cell;
import io.github.ucxffm.bench.compare.CompareResults.Impl;
import io.github.ucxffm.bench.compare.CompareResults.Run;
import io.github.ucxffm.bench.perftest.PairedBlocks;
import io.github.ucxffm.bench.perftest.PerfFinal;
import io.github.ucxffm.bench.perftest.PerfTestType;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.OptionalDouble;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Medians, ratios, the table and the CSV files, from synthetic runs. */
class CompareResultsTest {

    static PerfFinal latency(double p50) {
        return new PerfFinal(1000, p50, p50 * 1.1, p50 * 1.2, 1, 1, 1e6 / p50, 1e6 / p50);
    }

    static PerfFinal bandwidth(double mbs) {
        return new PerfFinal(1000, 1, 1, 1, mbs * 1.1, mbs, 1, 1);
    }

    /** Three repetitions of three implementations in four cells, one failed run. */
    static CompareResults sample() {
        CompareResults r = new CompareResults();
        Cell lat8 = new Cell("shm", PerfTestType.TAG_LAT, 8);
        Cell lat64k = new Cell("shm", PerfTestType.TAG_LAT, 65536);
        Cell bw8 = new Cell("tcp", PerfTestType.TAG_BW, 8);
        Cell bw64k = new Cell("tcp", PerfTestType.TAG_BW, 65536);
        double[][] native8 = {{0.10, 0.30, 0.11}};
        for (int rep = 1; rep <= 3; rep++) {
            r.add(new Run(Impl.NATIVE, lat8, rep, 1000, latency(native8[0][rep - 1]), null, 0.5));
            r.add(new Run(Impl.FFM, lat8, rep, 1000, latency(0.2 + rep * 0.01), null, 1.5));
            r.add(new Run(Impl.JUCX, lat8, rep, 1000, latency(0.4), null, 1.0));
            r.add(new Run(Impl.NATIVE, lat64k, rep, 1000, latency(5), null, 0.5));
            r.add(new Run(Impl.FFM, lat64k, rep, 1000, rep == 2 ? null : latency(6), rep == 2 ? "timed out" : null,
                    1.5));
            r.add(new Run(Impl.JUCX, lat64k, rep, 1000, latency(7), null, 1.0));
            r.add(new Run(Impl.NATIVE, bw8, rep, 1000, bandwidth(2), null, 0.5));
            r.add(new Run(Impl.FFM, bw8, rep, 1000, bandwidth(1), null, 1.5));
            r.add(new Run(Impl.JUCX, bw8, rep, 1000, bandwidth(1.6), null, 1.0));
            r.add(new Run(Impl.NATIVE, bw64k, rep, 1000, bandwidth(2000), null, 0.5));
            r.add(new Run(Impl.FFM, bw64k, rep, 1000, bandwidth(1000 + rep), null, 1.5));
            r.add(new Run(Impl.JUCX, bw64k, rep, 1000, bandwidth(1500), null, 1.0));
        }
        return r;
    }

    @Test
    void shouldTakeTheMiddleValueOrTheMeanOfTheTwoMiddleOnes() {
        assertEquals(OptionalDouble.of(2), CompareResults.median(3, 1, 2));
        assertEquals(OptionalDouble.of(2.5), CompareResults.median(4, 1, 3, 2));
        assertEquals(OptionalDouble.empty(), CompareResults.median());
        assertEquals(OptionalDouble.empty(), CompareResults.ratio(OptionalDouble.of(1), OptionalDouble.of(0)));
        assertEquals(OptionalDouble.of(0.5), CompareResults.ratio(OptionalDouble.of(1), OptionalDouble.of(2)));
    }

    @Test
    void shouldReportPercentileLatencyForLatencyTestsAndOverallBandwidthOtherwise() {
        CompareResults r = sample();
        Cell lat8 = new Cell("shm", PerfTestType.TAG_LAT, 8);
        assertEquals(0.11, r.median(lat8, Impl.NATIVE).getAsDouble(), 1e-12); // 0.10, 0.30, 0.11: the outlier goes
        assertEquals(0.22, r.median(lat8, Impl.FFM).getAsDouble(), 1e-12);
        // the failed run is left out: median of two
        assertEquals(6, r.median(new Cell("shm", PerfTestType.TAG_LAT, 65536), Impl.FFM).getAsDouble(), 1e-12);
        assertEquals(1002, r.median(new Cell("tcp", PerfTestType.TAG_BW, 65536), Impl.FFM).getAsDouble(), 1e-12);
        assertTrue(CompareResults.isLatency(PerfTestType.UCP_GET));
        assertTrue(CompareResults.isLatency(PerfTestType.UCP_PUT_LAT));
        assertTrue(!CompareResults.isLatency(PerfTestType.UCP_PUT_BW));
    }

    @Test
    void shouldTakeTheLowestLatencyAndTheHighestBandwidthAsBest() {
        CompareResults r = sample();
        assertEquals(0.10, r.best(new Cell("shm", PerfTestType.TAG_LAT, 8), Impl.NATIVE).getAsDouble(), 1e-12);
        assertEquals(1003, r.best(new Cell("tcp", PerfTestType.TAG_BW, 65536), Impl.FFM).getAsDouble(), 1e-12);
        // the failed run is left out, and a cell without runs of an implementation has no best
        assertEquals(6, r.best(new Cell("shm", PerfTestType.TAG_LAT, 65536), Impl.FFM).getAsDouble(), 1e-12);
        assertTrue(r.best(new Cell("tcp", PerfTestType.TAG_LAT, 8), Impl.FFM).isEmpty());
    }

    @Test
    void shouldPrintOneRowPerCellWithRatiosAndListFailures() {
        String table = sample().table(3);
        List<String> lines = table.lines().toList();
        String row = lines.stream().filter(l -> l.startsWith("shm") && l.contains(" 8 B")).findFirst().orElseThrow();
        assertTrue(row.matches("shm\\s+tag_lat\\s+8 B\\s+p50 us\\s+0\\.110\\s+0\\.220\\s+0\\.400\\s+2\\.00\\s+0\\.55"
                + "\\s+2\\.10"),
                row);
        String bw = lines.stream().filter(l -> l.contains("64 KiB") && l.startsWith("tcp")).findFirst().orElseThrow();
        assertTrue(bw.matches("tcp\\s+tag_bw\\s+64 KiB\\s+MB/s\\s+2000\\s+1002\\s+1500\\s+0\\.50\\s+0\\.67"
                + "\\s+0\\.50"), bw);
        assertTrue(table.contains("1 run failed:"), table);
        assertTrue(table.contains("ucx-ffm shm tag_lat 64 KiB #2: timed out"), table);
        // transports in the order first seen, tests in enum order, sizes ascending
        assertTrue(table.indexOf("shm       tag_lat           8 B") < table.indexOf("shm       tag_lat        64 KiB"));
        assertTrue(table.indexOf("64 KiB") < table.indexOf("tcp       tag_bw"));
    }

    @Test
    void shouldWriteEveryRunAndTheMediansAsCsv() {
        CompareResults r = sample();
        List<String> runs = r.runsCsv().lines().toList();
        assertEquals(CompareResults.RUNS_HEADER, runs.getFirst());
        assertEquals(1 + 36, runs.size());
        int columns = CompareResults.RUNS_HEADER.split(",").length;
        for (String line : runs.subList(1, runs.size())) {
            assertEquals(columns, line.split(",", -1).length, line);
        }
        assertTrue(runs.stream().anyMatch(l -> l.startsWith("ucx-ffm,shm,tag_lat,65536,main,-,50,2,1000,0,") && l.endsWith(
                "\"timed out\"")), r.runsCsv());
        List<String> summary = r.summaryCsv().lines().toList();
        assertEquals(CompareResults.SUMMARY_HEADER, summary.getFirst());
        assertEquals(5, summary.size());
        assertTrue(summary.contains("shm,tag_lat,8,p50_latency_us,0.1100,0.2200,0.4000,2.0000,0.5500,0.1000,0.2100,"
                + "2.1000"),
                r.summaryCsv());
    }

    @Test
    void shouldTabulateThePairedRunsMediansAndCountTheFailedOnes() {
        CompareResults r = new CompareResults();
        assertEquals("", r.pairedTable(), "no paired runs, no table");
        Cell tag = new Cell("shm", PerfTestType.TAG_LAT, 8, CompareResults.Section.PAIRED, false, 1);
        Cell am = new Cell("shm", PerfTestType.UCP_AM_LAT, 8, CompareResults.Section.PAIRED, false, 1);
        r.addPaired(new CompareResults.PairedRun(tag, 1, new PairedBlocks.Figures(0.64, 0.56, 0.63, 1.15, 1.12,
                1.02), null, 12.0));
        r.addPaired(new CompareResults.PairedRun(tag, 2, new PairedBlocks.Figures(0.60, 0.50, 0.55, 1.20, 1.10,
                1.09), null, 12.0));
        r.addPaired(new CompareResults.PairedRun(tag, 3, new PairedBlocks.Figures(0.70, 0.60, 0.70, 1.10, 1.30,
                0.99), null, 12.0));
        r.addPaired(new CompareResults.PairedRun(am, 1, null, "timed out after 120 s", 120.0));
        String table = r.pairedTable();
        // each column's own median: 0.64, 0.56, 0.63, 1.15, 1.12, 1.02
        assertTrue(table.lines().anyMatch(l -> l.matches("shm\\s+tag_lat\\s+8 B\\s+0\\.640\\s+0\\.560\\s+0\\.630"
                + "\\s+1\\.150\\s+1\\.120\\s+1\\.020")), table);
        assertTrue(table.lines().anyMatch(l -> l.contains("ucp_am_lat") && l.contains("no run gave its figures")
                && l.contains("(1 failed)")), table);
        String csv = r.pairedCsv();
        assertEquals(5, csv.lines().count(), csv);
        assertTrue(csv.contains("shm,tag_lat,8,2,0.600,0.500,0.550,1.200,1.100,1.090,12.0,"), csv);
        assertTrue(csv.contains("shm,ucp_am_lat,8,1,,,,,,,120.0,\"timed out after 120 s\""), csv);
    }

    @Test
    void shouldKeepTwoSignificantDigitsOfSmallRatios() {
        CompareResults r = new CompareResults();
        Cell c = new Cell("shm", PerfTestType.TAG_BW, 8);
        r.add(new Run(Impl.NATIVE, c, 1, 10, bandwidth(190.5), null, 1));
        r.add(new Run(Impl.FFM, c, 1, 10, bandwidth(0.3), null, 1));
        String row = r.table(1).lines().filter(l -> l.startsWith("shm")).findFirst().orElseThrow();
        assertTrue(row.matches(".*\\s0\\.0016\\s+-\\s+0\\.0016$"), row);
    }

    @Test
    void shouldNameSizesTheWayTheTableShowsThem() {
        assertEquals("8 B", CompareResults.formatSize(8));
        assertEquals("4 KiB", CompareResults.formatSize(4096));
        assertEquals("64 KiB", CompareResults.formatSize(65536));
        assertEquals("1 MiB", CompareResults.formatSize(1 << 20));
        assertEquals("1000 B", CompareResults.formatSize(1000));
    }

    static PerfFinal tail(double percentile, double overall) {
        return new PerfFinal(5000, percentile, overall, overall, 1, 1, 1e6 / overall, 1e6 / overall);
    }

    static PerfFinal wake(double percentile, double overall) {
        return new PerfFinal(90_000, percentile, overall, overall, 1, 1, 1e6 / overall, 1e6 / overall);
    }

    /** A latency cell run with -R 50, 99 and 99.9, two repetitions; native and ucx-ffm. */
    static CompareResults tails() {
        CompareResults r = new CompareResults();
        Cell c = new Cell("shm", PerfTestType.TAG_LAT, 8);
        for (int rep = 1; rep <= 2; rep++) {
            r.add(new Run(Impl.NATIVE, c, rep, 5000, tail(0.10, 0.12), null, 1, 50.0, Double.NaN, 0));
            r.add(new Run(Impl.FFM, c, rep, 5000, tail(0.14, 0.16 + rep * 0.02), null, 1, 50.0, Double.NaN, 0));
            r.add(new Run(Impl.NATIVE, c, rep, 5000, tail(0.40, 0.12), null, 1, 99.0, Double.NaN, 0));
            r.add(new Run(Impl.FFM, c, rep, 5000, tail(0.80, 0.18), null, 1, 99.0, Double.NaN, 0));
            r.add(new Run(Impl.NATIVE, c, rep, 5000, tail(2.0, 0.12), null, 1, 99.9, Double.NaN, 0));
            r.add(new Run(Impl.FFM, c, rep, 5000, tail(3.0 + rep, 0.18), null, 1, 99.9, Double.NaN, 0));
        }
        return r;
    }

    @Test
    void shouldTakeEachPercentileFromTheRunsMadeWithItsRankAndTheAverageFromAll() {
        CompareResults r = tails();
        Cell c = new Cell("shm", PerfTestType.TAG_LAT, 8);
        // the main table's p50 comes from the -R 50 runs only, never from the tails
        assertEquals(0.10, r.median(c, Impl.NATIVE).getAsDouble(), 1e-12);
        assertEquals(0.14, r.best(c, Impl.FFM).getAsDouble(), 1e-12);
        assertEquals(0.40, r.median(c, Impl.NATIVE, CompareResults.Stat.P99).getAsDouble(), 1e-12);
        assertEquals(4.5, r.median(c, Impl.FFM, CompareResults.Stat.P999).getAsDouble(), 1e-12);
        // ucx-ffm's averages: 0.18, 0.20 (-R 50), 0.18, 0.18, 0.18, 0.18: median 0.18
        assertEquals(0.18, r.median(c, Impl.FFM, CompareResults.Stat.AVG).getAsDouble(), 1e-12);
        assertTrue(r.median(c, Impl.JUCX, CompareResults.Stat.P99).isEmpty());
        String t = r.secondaryTables();
        assertTrue(t.contains("Averages and tails"), t);
        String p999 = t.lines().filter(l -> l.contains("p99.9 us")).findFirst().orElseThrow();
        assertTrue(p999.matches("shm\\s+tag_lat\\s+8 B\\s+-\\s+p99\\.9 us\\s+2\\.000\\s+4\\.500\\s+-\\s+2\\.25\\s+-"), p999);
        assertTrue(t.lines().anyMatch(l -> l.matches("shm\\s+tag_lat\\s+8 B\\s+-\\s+p99 us\\s+0\\.400\\s+0\\.800.*")),
                t);
        // the main table is unchanged by the tails' runs
        assertTrue(r.table(2).lines().anyMatch(l -> l.matches("shm\\s+tag_lat\\s+8 B\\s+p50 us\\s+0\\.100\\s+0\\.140.*")),
                r.table(2));
        List<String> stats = r.statsCsv().lines().toList();
        assertEquals(CompareResults.STATS_HEADER, stats.getFirst());
        assertTrue(stats.contains("main,shm,tag_lat,8,-,p99.9_us,2.0000,4.5000,,2.2500,"), r.statsCsv());
    }

    @Test
    void shouldReportCpuPerMillionIterationsPollingAndSleepingAndTheThreadsMessageRate() {
        CompareResults r = new CompareResults();
        Cell poll = new Cell("tcp", PerfTestType.TAG_LAT, 8, CompareResults.Section.WAKEUP, false, 1);
        Cell sleep = new Cell("tcp", PerfTestType.TAG_LAT, 8, CompareResults.Section.WAKEUP, true, 1);
        // 90,000 measured + 10,000 warm-up iterations: 4 s of CPU is 40 s per million
        r.add(new Run(Impl.NATIVE, poll, 1, 90_000, wake(4, 5), null, 1, 50.0, 4.0, 10_000));
        // the Java runner's measured loops took 0.9 s of the 5: 10 s per million measured iterations
        r.add(new Run(Impl.FFM, poll, 1, 90_000, wake(4.2, 5), null, 1, 50.0, 5.0, 10_000, 0.9));
        r.add(new Run(Impl.NATIVE, sleep, 1, 90_000, wake(9, 10), null, 1, 50.0, 0.5, 10_000));
        r.add(new Run(Impl.FFM, sleep, 1, 90_000, wake(11, 12), null, 1, 50.0, 1.0, 10_000));
        r.add(new Run(Impl.JUCX, sleep, 1, 90_000, wake(12, 13), null, 1, 50.0, Double.NaN, 10_000));
        assertEquals(40.0, r.median(poll, Impl.NATIVE, CompareResults.Stat.CPU).getAsDouble(), 1e-9);
        assertEquals(10.0, r.median(sleep, Impl.FFM, CompareResults.Stat.CPU).getAsDouble(), 1e-9);
        assertTrue(r.median(sleep, Impl.JUCX, CompareResults.Stat.CPU).isEmpty(), "unknown CPU is no number");
        assertEquals(10.0, r.median(poll, Impl.FFM, CompareResults.Stat.LOOP_CPU).getAsDouble(), 1e-9);
        // ucx_perftest reports no loop CPU: its whole run's stands in
        assertEquals(40.0, r.median(poll, Impl.NATIVE, CompareResults.Stat.LOOP_CPU).getAsDouble(), 1e-9);
        assertTrue(r.median(sleep, Impl.FFM, CompareResults.Stat.LOOP_CPU).isEmpty());
        Cell one = new Cell("shm", PerfTestType.TAG_BW, 8, CompareResults.Section.THREADS, false, 1);
        Cell two = new Cell("shm", PerfTestType.TAG_BW, 8, CompareResults.Section.THREADS, false, 2);
        r.add(new Run(Impl.NATIVE, one, 1, 1000, bandwidth(10), null, 1));
        r.add(new Run(Impl.NATIVE, two, 1, 1000, PerfFinal.aggregate(1000, 0.05, 150, 4e7), null, 1));
        r.add(new Run(Impl.FFM, two, 1, 1000, PerfFinal.aggregate(1000, 0.1, 75, 2e7), null, 1));
        r.note("jucx: no atomic cells");
        String t = r.secondaryTables();
        assertTrue(t.lines().anyMatch(l -> l.matches("tcp\\s+tag_lat\\s+8 B\\s+sleep\\s+cpu s/M\\s+5\\.000\\s+10\\.0\\s+-"
                + "\\s+2\\.00\\s+-")), t);
        assertTrue(t.lines().anyMatch(l -> l.matches("tcp\\s+tag_lat\\s+8 B\\s+poll\\s+cpu s/M\\s+40\\.0\\s+50\\.0.*")), t);
        assertTrue(t.lines().anyMatch(l -> l.matches("shm\\s+tag_bw\\s+8 B\\s+2 thr\\s+msg/s\\s+40000000\\s+20000000\\s+-"
                + "\\s+0\\.50\\s+-")), t);
        assertTrue(t.contains("note: jucx: no atomic cells"), t);
        // poll before sleep, 1 thread before 2; secondary cells stay out of the main table and the plot
        assertTrue(t.indexOf(" poll ") < t.indexOf(" sleep "), t);
        assertTrue(r.cells().isEmpty());
        assertEquals(List.of(one, two), r.cells(CompareResults.Section.THREADS));
        String runs = r.runsCsv();
        assertTrue(runs.contains("ucx-ffm,tcp,tag_lat,8,wakeup,sleep,50,1,90000,1,"), runs);
        assertTrue(runs.lines().anyMatch(l -> l.startsWith("native,shm,tag_bw,8,threads,2 thr,50,1,1000,1,1000,,,0.0500,,150.0000,,")), runs);
    }
}
