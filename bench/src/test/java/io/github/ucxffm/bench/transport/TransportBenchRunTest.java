package io.github.ucxffm.bench.transport;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tiny sitting end to end, as the launcher runs it: a server process for the transport, this JVM as the client,
 * every test with 200 requests. Functional only: the cells must run with every answer verified and the results must
 * have their rows, never be fast.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TransportBenchRunTest {

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @ParameterizedTest
    @ValueSource(strings = {"nio", "ucx-tcp", "ucx-shm", "ucx-tcp-spin"})
    void shouldRunEveryCellWithVerifiedAnswersAndWriteTheResults(String transport, @TempDir Path dir)
            throws Exception {
        TransportOptions o = TransportOptions.parse(dir, "--quick", "--iterations", "200", "--transports", transport,
                "--out", dir.toString(), "--timeout", "60");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        TransportBench.Outcome outcome;
        try (PrintStream po = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream pe = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            outcome = new TransportBench(o, po, pe).run();
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        String progress = err.toString(StandardCharsets.UTF_8);
        String all = printed + "\n" + progress;
        assertEquals(0, outcome.failures(), all);
        // the server process was stopped: no child of this JVM is left
        assertTrue(ProcessHandle.current().children().noneMatch(ProcessHandle::isAlive), "a server outlived the run");

        List<Cell> cells = o.cells();
        assertEquals(6, cells.size());
        // one progress line per cell, in order, then one per native UCX run (UCX transports: each ping-pong size)
        boolean ucx = !transport.equals("nio");
        int natives = ucx ? 2 : 0;
        int total = cells.size() + natives;
        List<String> lines = progress.lines().filter(l -> l.startsWith("[")).toList();
        assertEquals(total, lines.size(), progress);
        for (int i = 0; i < cells.size(); i++) {
            assertTrue(lines.get(i).startsWith("[" + (i + 1) + "/" + total + "] " + transport), lines.get(i));
            assertTrue(lines.get(i).contains(cells.get(i).label()), lines.get(i));
            assertTrue(lines.get(i).contains("200 verified"), lines.get(i));
            assertTrue(lines.get(i).matches(".*after [0-9.]+ s of warm-up\\)"), lines.get(i));
        }

        Path results = outcome.dir();
        assertTrue(results.getFileName().toString().matches("transport-\\d{8}-\\d{6}"), results.toString());
        for (String f : List.of("table.txt", "results.csv", "summary.csv", "environment.txt", "transport.png")) {
            assertTrue(Files.size(results.resolve(f)) > 0, f);
        }
        assertFalse(Files.exists(results.resolve("logs")), "the server's log is kept only when something failed");
        // what each UCX transport ran with, its spin window among it: 50 us for the spinning ones, none for the others
        String environment = Files.readString(results.resolve("environment.txt"));
        if (ucx) {
            assertTrue(environment.contains("spinNanos=" + (transport.endsWith("-spin") ? "50000" : "0")), environment);
        }
        String table = Files.readString(results.resolve("table.txt"));
        assertTrue(printed.contains(table.strip().lines().findFirst().orElseThrow()), "the table is printed");
        for (Cell c : cells) {
            assertTrue(table.lines().anyMatch(l -> l.startsWith(c.label()) && l.contains(transport)), c + "\n" + table);
        }

        assertTrue(table.contains("Answers compared byte for byte with what was sent or expected: 1200 of 1200\n"),
                table);
        for (int i = 0; i < natives; i++) {
            String line = lines.get(cells.size() + i);
            assertTrue(line.startsWith("[" + (cells.size() + i + 1) + "/" + total + "] native   " + transport + " "
                    + (i == 0 ? "64 B" : "64 KiB")), line);
            assertTrue(line.matches(".*ucp_am_lat round trip p50 [0-9.]+ us, p99 [0-9.]+ us"), line);
        }
        assertEquals(ucx, table.contains("Native UCX in the same sitting"), table);
        assertEquals(ucx, Files.exists(results.resolve("native.csv")));
        if (ucx) {
            List<String> nativeCsv = Files.readAllLines(results.resolve("native.csv"));
            assertEquals(List.of(NativeUcx.CSV_HEADER, transport, transport), nativeCsv.stream()
                    .map(l -> l.startsWith("transport,") ? l : l.substring(0, l.indexOf(','))).toList());
            // ucx-ffm-netty's ping-pong beside native UCX's, with the ratio
            assertTrue(table.lines().anyMatch(l -> l.startsWith("echo-pingpong 64 B") && l.contains(" " + transport
                    + " ") && l.matches(".*\\([0-9.]+x\\).*")), table);
        }

        List<String> csv = Files.readAllLines(results.resolve("results.csv"));
        List<String> header = List.of(csv.getFirst().split(","));
        assertEquals(TransportResults.CSV_HEADER, csv.getFirst());
        assertEquals(1 + cells.size(), csv.size(), String.join("\n", csv));
        for (int i = 0; i < cells.size(); i++) {
            String[] f = csv.get(i + 1).split(",", -1);
            Cell c = cells.get(i);
            assertEquals(transport, f[header.indexOf("transport")]);
            assertEquals(c.scenario().label(), f[header.indexOf("test")]);
            assertEquals(Integer.toString(c.size()), f[header.indexOf("size")]);
            assertEquals("1", f[header.indexOf("rep")]);
            // every answer was compared byte for byte with what was sent
            assertEquals("200", f[header.indexOf("requests")], csv.get(i + 1));
            assertEquals("200", f[header.indexOf("verified")], csv.get(i + 1));
            assertEquals(200L * c.size(), Long.parseLong(f[header.indexOf("bytes")]));
            assertEquals("", f[header.indexOf("error")]);
            assertTrue(Double.parseDouble(f[header.indexOf("warmup_s")]) > 0, "20 requests of warm-up");
            double clientCpu = Double.parseDouble(f[header.indexOf("client_cpu_s")]);
            double serverCpu = Double.parseDouble(f[header.indexOf("server_cpu_s")]);
            assertTrue(clientCpu >= 0 && serverCpu >= 0, csv.get(i + 1));
            assertEquals((clientCpu + serverCpu) / 200 * 1e6,
                    Double.parseDouble(f[header.indexOf("cpu_s_per_mreq")]), (clientCpu + serverCpu) / 200 * 1e6
                            * 1e-5 + 1e-9);
            if (c.scenario().timesRequests()) {
                double p50 = Double.parseDouble(f[header.indexOf("p50_us")]);
                double p99 = Double.parseDouble(f[header.indexOf("p99_us")]);
                assertTrue(p50 > 0 && p99 >= p50, csv.get(i + 1));
            } else {
                assertEquals("", f[header.indexOf("p50_us")], "a stream has no round trips");
            }
        }
        assertTrue(Files.readString(results.resolve("environment.txt")).contains("grpc:"));
        // the summary: a row per cell, its medians those of the one repetition
        List<String> summary = Files.readAllLines(results.resolve("summary.csv"));
        assertEquals(TransportResults.SUMMARY_HEADER, summary.getFirst());
        assertEquals(1 + cells.size(), summary.size());
        for (String row : summary.subList(1, summary.size())) {
            assertTrue(row.startsWith(transport + ","), row);
            assertTrue(row.contains(",1,0,"), "one run, none failed: " + row);
        }
    }
}
