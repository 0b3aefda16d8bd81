package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.transport.TransportResults.Metric;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The table, the ratios against epoll, the targets and the CSV of a sitting. */
class TransportResultsTest {

    static final Cell PINGPONG = new Cell(Scenario.ECHO_PINGPONG, 64);
    static final Cell UNARY = new Cell(Scenario.GRPC_UNARY, 64);
    static final Cell STREAM = new Cell(Scenario.GRPC_STREAM, 65536);

    /** A measurement: {@code requests} in 2 s, each answer verified. */
    static Measurement m(TransportKind t, Cell c, long requests, double p50, double p99, double clientCpu,
                         double serverCpu) {
        return new Measurement(t, c, 1, requests, requests * c.size(), 2.0, p50, p99, clientCpu, serverCpu,
                requests, null, 1.5);
    }

    /** epoll, ucx-shm and ucx-tcp over three cells; ucx-tcp fails the stream. */
    static TransportResults sample() {
        TransportResults r = new TransportResults();
        r.add(m(TransportKind.EPOLL, PINGPONG, 100_000, 20.0, 40.0, 1.0, 1.0));
        r.add(m(TransportKind.UCX_SHM, PINGPONG, 400_000, 8.0, 30.0, 1.0, 1.0));
        r.add(m(TransportKind.UCX_TCP, PINGPONG, 95_000, 21.0, 41.0, 1.0, 1.0));
        r.add(m(TransportKind.EPOLL, UNARY, 10_000, 150.0, 300.0, 2.0, 2.0));
        r.add(m(TransportKind.UCX_SHM, UNARY, 12_000, 160.0, 280.0, 2.0, 2.0));
        r.add(m(TransportKind.UCX_TCP, UNARY, 9_500, 155.0, 310.0, 2.0, 2.0));
        r.add(new Measurement(TransportKind.EPOLL, STREAM, 1, 20_000, 20_000L * 65536, 2.0, Double.NaN, Double.NaN,
                1.5, 1.5, 20_000, null, 1.5));
        r.add(new Measurement(TransportKind.UCX_SHM, STREAM, 1, 30_000, 30_000L * 65536, 2.0, Double.NaN, Double.NaN,
                1.5, 1.5, 30_000, null, 1.5));
        r.add(Measurement.failed(TransportKind.UCX_TCP, STREAM, 1, "no end within 120 s"));
        return r;
    }

    @Test
    void shouldDeriveRatesBandwidthAndCpuPerMillionRequests() {
        Measurement x = m(TransportKind.NIO, STREAM, 1000, 1, 2, 0.25, 0.5);
        assertEquals(500.0, x.requestsPerSecond());
        assertEquals(500.0 * 65536 / (1 << 20), x.megabytesPerSecond(), 1e-9);
        // both processes' CPU seconds, per million requests
        assertEquals((0.25 + 0.5) / 1000 * 1e6, x.cpuPerMillion(), 1e-9);
        Measurement f = Measurement.failed(TransportKind.NIO, STREAM, 1, "broken");
        assertTrue(Double.isNaN(f.requestsPerSecond()) && Double.isNaN(f.cpuPerMillion()) && !f.ok());
    }

    @Test
    void shouldTakeRatiosAgainstEpollInTheSameCell() {
        TransportResults r = sample();
        assertEquals(0.4, r.ratio(TransportKind.UCX_SHM, PINGPONG, Metric.P50), 1e-9);
        assertEquals(4.0, r.ratio(TransportKind.UCX_SHM, PINGPONG, Metric.RATE), 1e-9);
        assertEquals(0.25, r.ratio(TransportKind.UCX_SHM, PINGPONG, Metric.CPU), 1e-9);
        assertEquals(1.0, r.ratio(TransportKind.EPOLL, PINGPONG, Metric.P50));
        assertTrue(Double.isNaN(r.ratio(TransportKind.UCX_SHM, STREAM, Metric.P50)), "a stream has no latency");
        assertTrue(Double.isNaN(r.ratio(TransportKind.UCX_TCP, STREAM, Metric.RATE)), "failed");
    }

    /** The sample with two more repetitions of the ping-pong over epoll and ucx-shm, one of them failed. */
    static TransportResults repeated() {
        TransportResults r = sample();
        r.add(new Measurement(TransportKind.EPOLL, PINGPONG, 2, 100_000, 6_400_000, 2.0, 30.0, 60.0, 3.0, 1.0,
                100_000, null, 1.5));
        r.add(new Measurement(TransportKind.EPOLL, PINGPONG, 3, 100_000, 6_400_000, 2.0, 10.0, 50.0, 2.0, 2.0,
                100_000, null, 1.5));
        r.add(new Measurement(TransportKind.UCX_SHM, PINGPONG, 2, 300_000, 19_200_000, 2.0, 12.0, 20.0, 1.0, 1.0,
                300_000, null, 1.5));
        r.add(Measurement.failed(TransportKind.UCX_SHM, PINGPONG, 3, "the server closed the echo connection"));
        return r;
    }

    @Test
    void shouldTakeMediansOverTheRepetitionsThatRan() {
        TransportResults r = repeated();
        assertEquals(3, r.runs(TransportKind.EPOLL, PINGPONG).size());
        // epoll's p50s 20, 30, 10: 20; ucx-shm's 8 and 12 (the third failed): 10
        assertEquals(20.0, r.value(TransportKind.EPOLL, PINGPONG, Metric.P50));
        assertEquals(10.0, r.value(TransportKind.UCX_SHM, PINGPONG, Metric.P50));
        assertEquals(0.5, r.ratio(TransportKind.UCX_SHM, PINGPONG, Metric.P50), 1e-9);
        // CPU per million requests: 20, 40, 40 over epoll
        assertEquals(40.0, r.value(TransportKind.EPOLL, PINGPONG, Metric.CPU), 1e-9);
        String table = r.table();
        assertTrue(table.contains("each the\nmedian of 3 repetitions"), table);
        assertTrue(table.lines().anyMatch(l -> l.matches(" +ucx-shm +10\\.00 \\(0\\.50x\\) .*\\(1 of 3 failed: "
                + "the server closed the echo connection\\)")), table);
        assertTrue(r.targets().contains("0.50x in echo-pingpong 64 B: met"), r.targets());
        String summary = r.summaryCsv();
        List<String> header = List.of(TransportResults.SUMMARY_HEADER.split(","));
        String[] shm = summary.lines().filter(l -> l.startsWith("ucx-shm,echo-pingpong,")).findFirst().orElseThrow()
                .split(",", -1);
        assertEquals("3", shm[header.indexOf("runs")]);
        assertEquals("1", shm[header.indexOf("failed")]);
        assertEquals("10", shm[header.indexOf("p50_us")]);
        assertEquals("0.5", shm[header.indexOf("p50_vs_epoll")]);
    }

    @Test
    void shouldPrintARowPerCellAndTransportWithRatiosAndFailures() {
        String table = sample().table();
        List<String> lines = table.lines().toList();
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("echo-pingpong 64 B   epoll        20.00 ")), table);
        assertTrue(lines.stream().anyMatch(l -> l.matches(" +ucx-shm +8\\.000 \\(0\\.40x\\) +30\\.00 \\(0\\.75x\\) "
                + "+200000 \\(4\\.00x\\).*")), table);
        assertTrue(lines.stream().anyMatch(l -> l.matches(" +ucx-tcp +FAILED: no end within 120 s")), table);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("grpc-stream 64 KiB   epoll        -  ")), table);
        // 100000 + 400000 + 95000 + 10000 + 12000 + 9500 + 20000 + 30000 answers, each verified
        assertTrue(table.contains("Answers compared byte for byte with what was sent or expected: 676500 of 676500; "
                + "1 cells failed"), table);
        // the client and server split of the CPU column: 1 s each over 100000 requests
        assertTrue(table.contains("10.00+10.00"), table);
        // a row per cell and transport: the transport in the second column
        assertEquals(9, lines.stream().filter(l -> l.matches(".{21}(epoll|ucx-shm|ucx-tcp)   .*")).count(), table);
    }

    @Test
    void shouldReportTheTargetsWithoutAssertingThem() {
        String t = sample().targets();
        assertTrue(t.contains("echo 64 B p50 over ucx-shm at most 0.5x epoll: 0.40x in echo-pingpong 64 B: met"), t);
        assertTrue(t.contains("gRPC unary p50 over ucx-shm below epoll: 1.07x in grpc-unary 64 B: not met"), t);
        assertTrue(t.contains("gRPC streaming MB/s over ucx-shm at least epoll's: 1.50x in grpc-stream 64 KiB: met"),
                t);
        assertTrue(t.contains("ucx-tcp within 10% of epoll in every column: worst grpc-stream 64 KiB failed: not met"),
                t);
        TransportResults ok = new TransportResults();
        ok.add(m(TransportKind.EPOLL, PINGPONG, 100_000, 20.0, 40.0, 1.0, 1.0));
        ok.add(m(TransportKind.UCX_TCP, PINGPONG, 100_000, 21.0, 43.0, 1.0, 1.0));
        // p99 43 us against 40 is the worst column: 1.075 times worse, within 10%
        assertTrue(ok.targets().contains("worst echo-pingpong 64 B p99 us 1.08x: met"), ok.targets());
        TransportResults slow = new TransportResults();
        slow.add(m(TransportKind.EPOLL, PINGPONG, 100_000, 20.0, 40.0, 1.0, 1.0));
        slow.add(m(TransportKind.UCX_TCP, PINGPONG, 88_000, 20.0, 40.0, 0.88, 0.88));
        // a rate 12% lower is 1/0.88 = 1.14 times worse: beyond 10%, though its CPU per request is the same
        assertTrue(slow.targets().contains("worst echo-pingpong 64 B req/s 0.88x: not met"), slow.targets());
        assertTrue(ok.targets().contains("gRPC unary p50 over ucx-shm below epoll: not measured"), ok.targets());
        // the spin window's lines only where a spinning transport ran
        assertFalse(t.contains("ucx-shm-spin"), t);
        assertFalse(t.contains("ucx-tcp-spin"), t);
        TransportResults spin = sample();
        spin.add(m(TransportKind.UCX_SHM_SPIN, PINGPONG, 1_000_000, 2.0, 9.0, 1.0, 1.0));
        String s = spin.targets();
        assertTrue(s.contains("echo 64 B p50 over ucx-shm-spin at most 0.5x epoll: 0.10x in echo-pingpong 64 B: met"),
                s);
        assertTrue(s.contains("gRPC unary p50 over ucx-shm-spin below epoll: not measured"), s);
        assertTrue(s.contains("echo 64 B p50 over ucx-shm at most 0.5x epoll: 0.40x"), s);
        assertFalse(s.contains("ucx-tcp-spin"), s);
        // ucx-tcp-spin has a 10% line of its own, judged on its own cells
        TransportResults tcpSpin = new TransportResults();
        tcpSpin.add(m(TransportKind.EPOLL, PINGPONG, 100_000, 20.0, 40.0, 1.0, 1.0));
        tcpSpin.add(m(TransportKind.UCX_TCP, PINGPONG, 100_000, 21.0, 43.0, 1.0, 1.0));
        // half the latency, but 1.15 times the CPU per request: (1.0 + 1.3) / (1.0 + 1.0)
        tcpSpin.add(m(TransportKind.UCX_TCP_SPIN, PINGPONG, 100_000, 10.0, 20.0, 1.0, 1.3));
        String ts = tcpSpin.targets();
        assertTrue(ts.contains("ucx-tcp within 10% of epoll in every column: worst echo-pingpong 64 B p99 us 1.08x: met"),
                ts);
        assertTrue(ts.contains("ucx-tcp-spin within 10% of epoll in every column: worst echo-pingpong 64 B cpu s/Mreq "
                + "1.15x: not met"), ts);
        assertFalse(ts.contains("ucx-shm-spin"), ts);
    }

    @Test
    void shouldSpinOnlyTheSpinningTransportUnlessTold() {
        assertEquals(TransportKind.SPIN_NANOS, TransportKind.UCX_SHM_SPIN.spinNanos(-1));
        assertEquals(0, TransportKind.UCX_SHM_SPIN.spinNanos(0), "--ucx-spin 0 turns it off");
        assertEquals(-1, TransportKind.UCX_SHM.spinNanos(-1), "ucx-ffm-netty's default");
        assertEquals(7_000, TransportKind.UCX_TCP.spinNanos(7_000));
        assertTrue(TransportBench.serverCommand(TransportKind.UCX_SHM_SPIN, TransportKind.UCX_SHM_SPIN.spinNanos(-1))
                .containsAll(List.of("--transport", "ucx-shm-spin", "--ucx-spin", "50000")));
        assertTrue(UcxTransports.config(TransportKind.UCX_SHM_SPIN, 50_000).toString().contains("spinNanos=50000"));
        assertEquals(TransportKind.SPIN_NANOS, TransportKind.UCX_TCP_SPIN.spinNanos(-1));
        assertTrue(TransportBench.serverCommand(TransportKind.UCX_TCP_SPIN, TransportKind.UCX_TCP_SPIN.spinNanos(-1))
                .containsAll(List.of("--transport", "ucx-tcp-spin", "--ucx-spin", "50000")));
        String tcpSpin = UcxTransports.config(TransportKind.UCX_TCP_SPIN, 50_000).toString();
        assertTrue(tcpSpin.contains("TLS=tcp") && tcpSpin.contains("spinNanos=50000"), tcpSpin);
    }

    @Test
    void shouldWriteOneCsvRowPerMeasurementWithTheHeadersColumns() {
        String csv = sample().csv();
        List<String> lines = csv.lines().toList();
        assertEquals(TransportResults.CSV_HEADER, lines.getFirst());
        int columns = TransportResults.CSV_HEADER.split(",").length;
        assertEquals(17, columns);
        assertEquals(1 + 9, lines.size());
        for (String line : lines) {
            assertEquals(columns, line.split(",", -1).length, line);
        }
        List<String> header = List.of(TransportResults.CSV_HEADER.split(","));
        String[] shm = lines.get(2).split(",", -1);
        assertEquals("ucx-shm", shm[header.indexOf("transport")]);
        assertEquals("echo-pingpong", shm[header.indexOf("test")]);
        assertEquals("64", shm[header.indexOf("size")]);
        assertEquals("1", shm[header.indexOf("rep")]);
        assertEquals(200_000.0, Double.parseDouble(shm[header.indexOf("requests_per_s")]));
        assertEquals(5.0, Double.parseDouble(shm[header.indexOf("cpu_s_per_mreq")]), 1e-9);
        assertEquals("400000", shm[header.indexOf("verified")]);
        assertEquals("1.5", shm[header.indexOf("warmup_s")]);
        String[] failed = lines.getLast().split(",", -1);
        assertEquals("\"no end within 120 s\"", failed[header.indexOf("error")]);
        assertEquals("", failed[header.indexOf("p50_us")]);
    }

    @Test
    void shouldWriteTheTableAsASummaryCsvWithRatios() {
        String csv = sample().summaryCsv();
        List<String> lines = csv.lines().toList();
        assertEquals(TransportResults.SUMMARY_HEADER, lines.getFirst());
        int columns = TransportResults.SUMMARY_HEADER.split(",").length;
        assertEquals(15, columns);
        assertEquals(1 + 9, lines.size());
        List<String> header = List.of(TransportResults.SUMMARY_HEADER.split(","));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            assertEquals(columns, f.length, line);
            if (f[0].equals("epoll")) {
                assertEquals("1", f[header.indexOf("requests_per_s_vs_epoll")], line);
            }
        }
        String[] shm = lines.get(2).split(",", -1);
        assertEquals("ucx-shm,echo-pingpong,64,1,0", String.join(",", List.of(shm).subList(0, 5)));
        assertEquals(0.4, Double.parseDouble(shm[header.indexOf("p50_vs_epoll")]), 1e-9);
        assertEquals(0.25, Double.parseDouble(shm[header.indexOf("cpu_vs_epoll")]), 1e-9);
        String[] failed = lines.getLast().split(",", -1);
        assertEquals("ucx-tcp,grpc-stream,65536,1,1", String.join(",", List.of(failed).subList(0, 5)));
        assertEquals("", failed[header.indexOf("mb_per_s_vs_epoll")]);
    }
}
