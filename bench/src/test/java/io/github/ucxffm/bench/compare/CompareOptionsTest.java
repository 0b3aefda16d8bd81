package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.compare.CompareResults.Impl;
import io.github.ucxffm.bench.perftest.PerfTestType;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The compare command's options, its plan of runs and its readiness check. */
class CompareOptionsTest {

    @Test
    void shouldDefaultToTheIssuesMatrix() {
        Compare.Options o = Compare.Options.parse("--root", "/repo");
        assertEquals(3, o.repetitions());
        assertEquals(List.of(8L, 4096L, 65536L, 1048576L), o.sizes());
        assertEquals(List.of(PerfTestType.TAG_LAT, PerfTestType.TAG_BW, PerfTestType.UCP_PUT_BW,
                PerfTestType.STREAM_LAT, PerfTestType.UCP_AM_LAT), o.tests());
        assertEquals(List.of("shm", "tcp"), o.transports());
        assertEquals(List.of(Impl.NATIVE, Impl.FFM, Impl.JUCX), o.impls());
        assertEquals(Path.of("/repo/bench/results"), o.out());
        assertEquals("shm,tcp", o.ucxTls("shm"));
        assertEquals("tcp", o.ucxTls("tcp"));
        assertEquals("posix,tcp", o.ucxTls("posix,tcp"));
    }

    @Test
    void shouldReadSizesWithUnitsAndRejectNonsense() {
        Compare.Options o = Compare.Options.parse("--sizes", "8,4k,64KiB,1m", "--tests", "tag_lat", "--impls",
                "native,jucx", "--reps", "5", "--transports", "tcp");
        assertEquals(List.of(8L, 4096L, 65536L, 1048576L), o.sizes());
        assertEquals(List.of(Impl.NATIVE, Impl.JUCX), o.impls());
        assertEquals(5, o.repetitions());
        assertThrows(IllegalArgumentException.class, () -> Compare.Options.parse("--sizes", "huge"));
        assertThrows(IllegalArgumentException.class, () -> Compare.Options.parse("--reps", "0"));
        assertThrows(IllegalArgumentException.class, () -> Compare.Options.parse("--tests", "add_lat"));
        assertThrows(IllegalArgumentException.class, () -> Compare.Options.parse("--bogus", "1"));
        assertThrows(IllegalArgumentException.class, () -> Compare.Options.parse("--reps"));
    }

    @Test
    void shouldSpendAboutTheSameTimeOnEverySizeWithFewerIterationsOverTcp() {
        Compare.Options o = Compare.Options.parse();
        assertTrue(o.iterationsFor("shm", 8) > o.iterationsFor("shm", 1 << 20) * 50);
        assertTrue(o.iterationsFor("shm", 8) > o.iterationsFor("tcp", 8));
        assertEquals(200_000, o.iterationsFor("shm", 8), 1000);
        assertEquals(2_000, o.iterationsFor("shm", 1 << 20), 100);
        assertEquals(100, Compare.Options.parse("--scale", "0.000001").iterationsFor("tcp", 1 << 20));
        assertEquals(77, Compare.Options.parse("--iterations", "77").iterationsFor("tcp", 8));
        Compare.Options quick = Compare.Options.parse("--quick");
        assertEquals(1, quick.repetitions());
        assertEquals(List.of(PerfTestType.TAG_LAT, PerfTestType.TAG_BW), quick.tests());
        assertTrue(quick.uct().isEmpty(), "--quick runs no UCT cell");
        assertEquals(o.iterationsFor("shm", 8), o.iterationsFor("posix", 8), "UCT shared memory counts as shm");
        assertEquals(o.iterationsFor("tcp", 8), o.iterationsFor("tcp", 8));
    }

    @Test
    void shouldPlanUctCellsForNativeAndUcxFfmOnly() {
        Compare.Options o = Compare.Options.parse("--reps", "1");
        List<Compare.Job> uct = Compare.plan(o).stream().filter(j -> j.cell().test().isUct()).toList();
        // the default: am_lat, put_lat at 8 B (each at the three ranks), am_bw, put_bw at 8 B and 4 KiB, over posix
        // and tcp, two impls
        assertEquals(2 * (2 * 3 + 4) * 2, uct.size());
        assertFalse(uct.stream().anyMatch(j -> j.impl() == Impl.JUCX), "JUCX has no UCT");
        assertEquals(List.of("posix", "tcp"), o.uctTransports());
        assertEquals(List.of(Impl.NATIVE, Impl.FFM), uct.subList(0, 2).stream().map(Compare.Job::impl).toList());

        Compare.Options only = Compare.Options.parse("--uct", "--reps", "1");
        assertTrue(Compare.plan(only).stream().allMatch(j -> j.cell().test().isUct()));
        assertTrue(Compare.plan(Compare.Options.parse("--no-uct")).stream().noneMatch(j -> j.cell().test().isUct()));

        Compare.Options named = Compare.Options.parse("--tests", "tag_lat,put_bw", "--sizes", "8,4k",
                "--uct-transports", "cma,posix", "--reps", "1", "--transports", "tcp", "--sections", "main");
        List<Compare.Job> jobs = Compare.plan(named);
        assertEquals(List.of(PerfTestType.TAG_LAT), named.tests());
        assertEquals(2 * 3 * 3 + 2 * 2 * 2, jobs.size(),
                "tag_lat: 2 sizes x 3 impls x 3 ranks; put_bw: 2 tls x 2 sizes x 2");
        assertTrue(Compare.plan(Compare.Options.parse("--tests", "am_lat", "--uct-transports", "cma", "--sections",
                "main")).isEmpty(),
                "cma has no active messages");

        assertEquals("memory", Compare.Options.uctDevice("posix"));
        assertEquals("lo", Compare.Options.uctDevice("tcp"));
        assertEquals("zcopy", Compare.Options.uctLayout("tcp", PerfTestType.PUT_LAT, 8));
        assertEquals("zcopy", Compare.Options.uctLayout("cma", PerfTestType.PUT_BW, 4096));
        assertEquals("short", Compare.Options.uctLayout("posix", PerfTestType.PUT_BW, 4096));
        assertEquals("short", Compare.Options.uctLayout("posix", PerfTestType.AM_BW, 8));
        assertEquals("bcopy", Compare.Options.uctLayout("posix", PerfTestType.AM_BW, 4096));
    }

    @Test
    void shouldAlternateImplementationsInsideEachCellAndRepeatTheWholeSweep() {
        Compare.Options o = Compare.Options.parse("--sizes", "8,64k", "--tests", "tag_lat,ucp_fadd", "--reps", "2",
                "--sections", "main", "--ranks", "50");
        List<Compare.Job> jobs = Compare.plan(o);
        // per repetition: 2 transports x (tag_lat: 2 sizes x 3 impls + ucp_fadd: one 8-byte cell x 2 impls, no JUCX)
        assertEquals(2 * 2 * (6 + 2), jobs.size());
        assertEquals(List.of(Impl.NATIVE, Impl.FFM, Impl.JUCX), jobs.subList(0, 3).stream().map(Compare.Job::impl)
                .toList());
        assertEquals(1, jobs.getFirst().repetition());
        assertEquals(2, jobs.getLast().repetition());
        assertFalse(jobs.stream().anyMatch(j -> j.impl() == Impl.JUCX && j.cell().test().operation().isAtomic()));
        assertTrue(jobs.stream().filter(j -> j.cell().test() == PerfTestType.UCP_FADD)
                .allMatch(j -> j.cell().size() == 8));
    }

    @Test
    void shouldSeeAListeningPortInTheKernelsTable() {
        List<String> table = List.of(
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
                "   0: 0100007F:DB71 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1565199",
                "   1: 0100007F:3419 0100007F:8B2C 01 00000000:00000000 00:00000000 00000000     0        0 1566880");
        assertTrue(NativePerftest.isListening(0xDB71, table));
        assertFalse(NativePerftest.isListening(0x3419, table), "established, not listening");
        assertFalse(NativePerftest.isListening(0x71, table));
    }

    @Test
    void shouldRunEveryRankOfALatencyCellAndTheWakeupAndThreadsSections() {
        Compare.Options o = Compare.Options.parse("--sizes", "8", "--tests", "tag_lat,tag_bw", "--transports", "shm");
        assertEquals(List.of(50.0, 99.0, 99.9), o.ranks());
        List<Compare.Job> jobs = Compare.plan(o);
        List<Compare.Job> lat = jobs.stream().filter(j -> j.cell().section() == CompareResults.Section.MAIN
                && j.cell().test() == PerfTestType.TAG_LAT && j.repetition() == 1).toList();
        // one run per rank and implementation, the implementations alternating inside each rank
        assertEquals(List.of(50.0, 50.0, 50.0, 99.0, 99.0, 99.0, 99.9, 99.9, 99.9),
                lat.stream().map(Compare.Job::rank).toList());
        assertEquals(List.of(Impl.NATIVE, Impl.FFM, Impl.JUCX), lat.subList(3, 6).stream().map(Compare.Job::impl)
                .toList());
        // a bandwidth cell runs once per implementation
        assertEquals(3, jobs.stream().filter(j -> j.cell().section() == CompareResults.Section.MAIN
                && j.cell().test() == PerfTestType.TAG_BW && j.repetition() == 1).count());
        List<Compare.Job> wakeup = jobs.stream().filter(j -> j.cell().section() == CompareResults.Section.WAKEUP
                && j.repetition() == 1).toList();
        assertEquals(6, wakeup.size());
        assertEquals(3, wakeup.stream().filter(j -> j.cell().sleep()).count());
        assertTrue(wakeup.stream().allMatch(j -> j.cell().test() == PerfTestType.TAG_LAT && j.cell().size() == 8));
        List<Compare.Job> threads = jobs.stream().filter(j -> j.cell().section() == CompareResults.Section.THREADS
                && j.repetition() == 1).toList();
        // every implementation runs both cells, one thread and two
        assertEquals(6, threads.size());
        assertEquals(2, threads.stream().filter(j -> j.impl() == Impl.JUCX).map(j -> j.cell().threads()).distinct()
                .count());
        assertTrue(threads.stream().allMatch(j -> j.cell().test() == PerfTestType.TAG_BW));
        // -R 50 is always run: the main table's number
        assertEquals(List.of(50.0, 99.0), Compare.Options.parse("--ranks", "99").ranks());
        assertEquals(List.of(50.0, 99.9), Compare.Options.parse("--ranks", "99.9,50").ranks());
        assertThrows(IllegalArgumentException.class, () -> Compare.Options.parse("--ranks", "101"));
        assertThrows(IllegalArgumentException.class, () -> Compare.Options.parse("--sections", "tails"));
        assertTrue(Compare.plan(Compare.Options.parse("--sections", "wakeup")).stream()
                .allMatch(j -> j.cell().section() == CompareResults.Section.WAKEUP));
    }

    @Test
    void shouldPlanOnePairedRunOfUcxFfmPerPingPongAndTransport() {
        Compare.Options o = Compare.Options.parse("--reps", "2", "--transports", "shm,tcp");
        assertTrue(o.sections().contains(CompareResults.Section.PAIRED), "in the default sections");
        List<Compare.Job> paired = Compare.plan(o).stream()
                .filter(j -> j.cell().section() == CompareResults.Section.PAIRED).toList();
        // four ping-pongs over two transports, twice; ucx-ffm alone (the C and plain FFM loops run inside its run)
        assertEquals(16, paired.size());
        assertTrue(paired.stream().allMatch(j -> j.impl() == Impl.FFM && j.cell().size() == 8));
        assertEquals(List.of(PerfTestType.TAG_LAT, PerfTestType.TAG_SYNC_LAT, PerfTestType.STREAM_LAT,
                PerfTestType.UCP_AM_LAT), paired.stream().filter(j -> j.repetition() == 1
                && j.cell().transport().equals("tcp")).map(j -> j.cell().test()).toList());
        // three kinds of block share a run: three times the iterations of the main sweep's cell
        assertEquals(3 * o.iterationsFor("shm", 8), paired.get(0).iterations());
        assertEquals("paired", paired.get(0).cell().mode());
        assertTrue(Compare.plan(Compare.Options.parse("--quick")).stream()
                .noneMatch(j -> j.cell().section() == CompareResults.Section.PAIRED), "not in --quick");
        assertTrue(Compare.plan(Compare.Options.parse("--sections", "paired", "--impls", "native,jucx")).isEmpty(),
                "needs ucx-ffm");
    }

    @Test
    void shouldSeeAnEstablishedConnectionAndReadCpuTimesFromProc() {
        List<String> table = List.of(
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
                "   0: 0100007F:DB71 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1565199",
                "   1: 0100007F:8B2C 0100007F:3419 01 00000000:00000000 00:00000000 00000000     0        0 1566880");
        assertTrue(ProcessCpu.isConnected(0x3419, table), "the client's end");
        assertTrue(ProcessCpu.isConnected(0x8B2C, table));
        assertFalse(ProcessCpu.isConnected(0xDB71, table), "listening is not connected");
        // a command name with blanks and parentheses, then utime 150, stime 50, cutime 7, cstime 3
        String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 30 0 12345";
        assertEquals(200, ProcessCpu.ownTicks(stat));
        assertEquals(10, ProcessCpu.childTicks(stat));
        assertTrue(ProcessCpu.TICKS > 0);
        assertTrue(ProcessCpu.seconds(ProcessHandle.current().pid()) > 0);
        assertEquals(Double.NaN, ProcessCpu.seconds(-1));
        // threads' stat lines: the JIT compilers' names as the kernel cuts them, and others
        assertTrue(ProcessCpu.isCompilerThread("4243 (C2 CompilerThre) S 1 4242 4242 0 -1 0 0 0 0 0 9 1 0 0"));
        assertTrue(ProcessCpu.isCompilerThread("4244 (C1 CompilerThre) S 1 4242 4242 0 -1 0 0 0 0 0 9 1 0 0"));
        assertFalse(ProcessCpu.isCompilerThread("4245 (multiThreadIoEv) R 1 4242 4242 0 -1 0 0 0 0 0 9 1 0 0"));
        assertFalse(ProcessCpu.isCompilerThread("4246 (java) S 1 4242 4242 0 -1 0 0 0 0 0 9 1 0 0"));
        assertTrue(ProcessCpu.compilerSeconds(ProcessHandle.current().pid()) >= 0);
        assertTrue(Double.isNaN(ProcessCpu.compilerSeconds(-1)));
    }

    @Test
    void shouldReadTheMeasuredLoopsCpuTimeARunnerPrinted(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path log = dir.resolve("server.log");
        java.nio.file.Files.writeString(log, "Waiting for connection...\nucx-ffm perftest: "
                + io.github.ucxffm.bench.perftest.PerfRunner.CPU_LINE + "0.1250 s\n");
        assertEquals(0.125, Compare.loopCpu(log), 1e-12);
        java.nio.file.Files.writeString(log, "Final: 1 1 1 1 1 1 1 1\n");
        assertTrue(Double.isNaN(Compare.loopCpu(log)));
        assertTrue(Double.isNaN(Compare.loopCpu(dir.resolve("none.log"))));
        // the warm-up a Java client printed, or what ucx_perftest runs
        assertEquals(30_000, Compare.warmupDone("x: warm-up: 3 rounds of 10000 iterations, 400 ms", Impl.FFM, 7));
        assertEquals(7, Compare.warmupDone("no such line", Impl.JUCX, 7));
        assertEquals(7, Compare.warmupDone("x: warm-up: 3 rounds of 10000 iterations", Impl.NATIVE, 7));
    }
}
