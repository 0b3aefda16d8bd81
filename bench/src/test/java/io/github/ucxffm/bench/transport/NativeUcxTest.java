package io.github.ucxffm.bench.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The native UCX runs of bench transport: their command line, a real pair of runs, failures, the table, the CSV. */
class NativeUcxTest {

    @Test
    void shouldRunTheActiveMessagePingPongAsEachTransportRuns() {
        List<String> tcp = NativeUcx.clientArgs(TransportKind.UCX_TCP, 64, 20_000, 99, 4321);
        assertEquals(List.of("127.0.0.1", "-p", "4321", "-t", "ucp_am_lat", "-s", "64", "-n", "20000", "-w", "2000",
                "-E", "sleep", "-R", "99", "-e"), tcp, "tcp: sleeping loops, peer error handling as the transport");
        List<String> shm = NativeUcx.clientArgs(TransportKind.UCX_SHM, 65536, 15, 50, 1);
        assertEquals(List.of("127.0.0.1", "-p", "1", "-t", "ucp_am_lat", "-s", "65536", "-n", "15", "-w", "1", "-E",
                "sleep", "-R", "50"), shm, "shm: no peer error handling, as the transport");
        assertTrue(NativeUcx.clientArgs(TransportKind.UCX_SHM_SPIN, 64, 100, 50, 1).contains("poll"),
                "the spinning transport's loops do not sleep within a round trip");
        assertEquals("sm,tcp,self", NativeUcx.ucxTls(TransportKind.UCX_SHM));
        assertEquals("tcp", NativeUcx.ucxTls(TransportKind.UCX_TCP));
        assertTrue(NativeUcx.applies(TransportKind.UCX_SHM_SPIN));
        assertFalse(NativeUcx.applies(TransportKind.EPOLL) || NativeUcx.applies(TransportKind.NIO));
    }

    @Test
    void shouldRunTenThousandIterationsASecondUnlessCounted() {
        assertEquals(20_000, NativeUcx.iterations(0, 2.0));
        assertEquals(NativeUcx.MIN_ITERATIONS, NativeUcx.iterations(0, 0.1));
        assertEquals(300, NativeUcx.iterations(300, 5.0), "--iterations is taken as given");
    }

    @Test
    void shouldMeasureNativeRoundTripsOverTcp(@TempDir Path logs) throws Exception {
        NativeUcx.Run r = new NativeUcx(NativeUcx.DEFAULT_COMMAND, logs, 60).run(TransportKind.UCX_TCP, 64, 1, 2000);
        assertTrue(r.ok(), () -> "failed: " + r.error());
        // a round trip over loopback TCP takes microseconds; p50 and p99 come from two runs (-R 50, then -R 99), so
        // a slow first run can put the median above the other run's 99th percentile (seen: 75.4 then 14.5 us)
        assertTrue(r.p50Micros() > 0.5 && r.p50Micros() < 100_000, "p50 " + r.p50Micros());
        assertTrue(r.p99Micros() > 0.5 && r.p99Micros() < 100_000, "p99 " + r.p99Micros());
    }

    @Test
    void shouldSayWhyARunFailed(@TempDir Path logs) throws Exception {
        NativeUcx.Run missing = new NativeUcx("/nonexistent/ucx_perftest", logs, 10).run(TransportKind.UCX_SHM, 64,
                2, 100);
        assertFalse(missing.ok());
        assertTrue(missing.error().contains("/nonexistent/ucx_perftest"), missing.error());
        assertTrue(Double.isNaN(missing.p50Micros()));
        // a server that exits at once
        NativeUcx.Run exits = new NativeUcx("false", logs, 10).run(TransportKind.UCX_TCP, 64, 1, 100);
        assertFalse(exits.ok());
        assertTrue(exits.error().contains("exited with 1"), exits.error());
    }

    @Test
    void shouldTabulateNativeBesideTheTransportsEchoWithRatios() {
        TransportResults results = TransportResultsTest.sample(); // ucx-shm 8 / 30 us, ucx-tcp 21 / 41 us at 64 B
        List<NativeUcx.Run> runs = List.of(
                new NativeUcx.Run(TransportKind.UCX_TCP, 64, 1, 20.0, 40.0, null),
                new NativeUcx.Run(TransportKind.UCX_TCP, 64, 2, 14.0, 50.0, null),
                new NativeUcx.Run(TransportKind.UCX_TCP, 64, 3, 60.0, 80.0, null),
                new NativeUcx.Run(TransportKind.UCX_SHM, 64, 1, Double.NaN, Double.NaN, "no Final: line"));
        assertEquals(20.0, NativeUcx.median(runs, TransportKind.UCX_TCP, 64, false));
        assertEquals(50.0, NativeUcx.median(runs, TransportKind.UCX_TCP, 64, true));
        assertTrue(Double.isNaN(NativeUcx.median(runs, TransportKind.UCX_SHM, 64, false)));
        String table = NativeUcx.table(runs, results);
        String tcp = table.lines().filter(l -> l.contains(" ucx-tcp ")).findFirst().orElseThrow();
        assertTrue(tcp.startsWith("echo-pingpong 64 B"), tcp);
        assertTrue(tcp.contains("tcp, sleep, -e"), tcp);
        // ucx-ffm-netty's 21 us against native's median 20 us; 41 against 50
        assertTrue(tcp.contains("21.00 (1.05x)") && tcp.contains("41.00 (0.82x)"), tcp);
        String shm = table.lines().filter(l -> l.contains(" ucx-shm ")).findFirst().orElseThrow();
        assertTrue(shm.contains("FAILED: no Final: line"), shm);
        assertEquals("", NativeUcx.table(List.of(), results));
    }

    @Test
    void shouldWriteEveryRunAsCsv() {
        String csv = NativeUcx.csv(List.of(new NativeUcx.Run(TransportKind.UCX_SHM_SPIN, 64, 2, 0.5, 0.75, null),
                new NativeUcx.Run(TransportKind.UCX_TCP, 65536, 1, Double.NaN, Double.NaN, "timed \"out\"")));
        List<String> lines = csv.lines().toList();
        assertEquals(NativeUcx.CSV_HEADER, lines.get(0));
        assertEquals("ucx-shm-spin,\"sm,tcp,self\",poll,64,2,0.5000,0.7500,", lines.get(1));
        assertEquals("ucx-tcp,\"tcp\",sleep,65536,1,,,\"timed \"\"out\"\"\"", lines.get(2));
    }
}
