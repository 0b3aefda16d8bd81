package io.github.ucxffm.bench.transport;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command line of bench transport: defaults, what each option changes, and clear refusals. */
class TransportOptionsTest {

    private static final Path ROOT = Path.of("/repo");

    private static TransportOptions parse(String... args) {
        return TransportOptions.parse(ROOT, args);
    }

    private static String refusal(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> parse(args)).getMessage();
    }

    @Test
    void shouldRunEveryTransportAndTestByDefault() {
        TransportOptions o = parse();
        assertEquals(List.of(TransportKind.EPOLL, TransportKind.NIO, TransportKind.UCX_SHM, TransportKind.UCX_TCP,
                TransportKind.UCX_SHM_SPIN, TransportKind.UCX_TCP_SPIN), o.transports());
        assertEquals(List.of(new Cell(Scenario.ECHO_PINGPONG, 64), new Cell(Scenario.ECHO_PINGPONG, 65536),
                new Cell(Scenario.ECHO_WINDOW, 64), new Cell(Scenario.ECHO_WINDOW, 65536),
                new Cell(Scenario.GRPC_UNARY, 64), new Cell(Scenario.GRPC_STREAM, 65536)), o.cells());
        assertEquals(5.0, o.durationSeconds());
        assertEquals(2.0, o.warmupSeconds());
        assertEquals(0, o.iterations());
        assertEquals(32, o.windowOf(new Cell(Scenario.ECHO_WINDOW, 64)));
        assertEquals(1, o.windowOf(new Cell(Scenario.ECHO_PINGPONG, 64)));
        assertEquals(ROOT.resolve("bench/results"), o.out());
    }

    @Test
    void shouldRunNativeUcxBesideTheEchoPingPongCellsUnlessToldNone() {
        TransportOptions o = parse("--tests", "grpc-unary,echo-pingpong,echo-window", "--sizes", "64,1k");
        assertEquals("ucx_perftest", o.nativeCommand());
        assertEquals(List.of(new Cell(Scenario.ECHO_PINGPONG, 64), new Cell(Scenario.ECHO_PINGPONG, 1024)),
                o.nativeCells());
        assertEquals("/opt/ucx/bin/ucx_perftest", parse("--native", "/opt/ucx/bin/ucx_perftest").nativeCommand());
        TransportOptions none = parse("--native", "none");
        assertEquals(null, none.nativeCommand());
        assertEquals(List.of(), none.nativeCells());
        assertEquals(List.of(), parse("--tests", "echo-window").nativeCells());
        assertTrue(refusal("--native", " ").contains("--native takes a command"), refusal("--native", " "));
    }

    @Test
    void shouldTakeEachOption() {
        TransportOptions o = parse("--transports", "nio,ucx-tcp", "--tests", "grpc-stream,echo-window", "--sizes",
                "8,4k,1MiB", "--unary-size", "100", "--stream-size", "1m", "--window", "7", "--duration", "0.25",
                "--warmup", "0", "--timeout", "9", "--out", "/tmp/x", "--keep-logs", "--ucx-spin", "0", "--reps", "3");
        assertEquals(List.of(TransportKind.NIO, TransportKind.UCX_TCP), o.transports());
        // the order of --tests is the order of the cells
        assertEquals(List.of(new Cell(Scenario.GRPC_STREAM, 1 << 20), new Cell(Scenario.ECHO_WINDOW, 8),
                new Cell(Scenario.ECHO_WINDOW, 4096), new Cell(Scenario.ECHO_WINDOW, 1 << 20)), o.cells());
        assertEquals(100, o.unarySize());
        assertEquals(7, o.window());
        assertEquals(0.25, o.durationSeconds());
        assertEquals(0.0, o.warmupSeconds());
        assertEquals(9, o.timeoutSeconds());
        assertEquals(Path.of("/tmp/x"), o.out());
        assertTrue(o.keepLogs());
        assertEquals(0, o.ucxSpinNanos());
        assertEquals(3, o.reps());
        assertEquals(1, parse().reps());
        assertTrue(o.describeLength().startsWith("3 times, 0.3 s per cell"), o.describeLength());
        assertEquals(-1, parse().ucxSpinNanos(), "ucx-ffm-netty's default");
        assertEquals(50_000, parse("--ucx-spin", "50000").ucxSpinNanos());
    }

    @Test
    void shouldShortenTheSittingWithQuickUnlessDurationsAreGiven() {
        TransportOptions q = parse("--quick");
        assertEquals(1.0, q.durationSeconds());
        assertEquals(0.5, q.warmupSeconds());
        assertEquals(3.0, parse("--quick", "--duration", "3").durationSeconds());
        TransportOptions i = parse("--quick", "--iterations", "50");
        assertEquals(50, i.iterations());
        assertTrue(i.describeLength().startsWith("50 requests per cell after 5 of warm-up"), i.describeLength());
        assertTrue(parse("--iterations", "5").describeLength().contains("after 1 of warm-up"));
    }

    @Test
    void shouldReverseTheTransportsEveryOtherRepetition() {
        List<TransportKind> given = List.of(TransportKind.NIO, TransportKind.UCX_TCP, TransportKind.EPOLL);
        assertEquals(given, TransportBench.order(given, 1));
        assertEquals(List.of(TransportKind.EPOLL, TransportKind.UCX_TCP, TransportKind.NIO),
                TransportBench.order(given, 2));
        assertEquals(given, TransportBench.order(given, 3));
    }

    @Test
    void shouldRefuseBadInputNamingIt() {
        assertTrue(refusal("--transports", "rdma")
                .contains("unknown transport 'rdma' (epoll, nio, ucx-shm, ucx-tcp, ucx-shm-spin, ucx-tcp-spin)"));
        assertTrue(refusal("--tests", "echo").contains("unknown test 'echo'"));
        assertTrue(refusal("--transports", "nio,nio").contains("names 'nio' twice"));
        assertTrue(refusal("--transports", "nio,").contains("without empty items"));
        assertTrue(refusal("--sizes", "64,abc").contains("not a message size: 'abc'"));
        assertTrue(refusal("--sizes", "4").contains("from 8 B"), "an echo message holds an 8-byte number");
        assertTrue(refusal("--stream-size", "8m").contains("not 8m"), "above gRPC's 4 MiB message limit");
        assertTrue(refusal("--window", "0").contains("--window must be positive, not 0"));
        assertTrue(refusal("--window", "100000").contains("at most 32768"));
        assertTrue(refusal("--iterations", "x").contains("--iterations takes a whole number, not 'x'"));
        assertTrue(refusal("--duration", "0").contains("--duration must be positive"));
        assertTrue(refusal("--duration", "-1").contains("--duration takes seconds from 0 to 3600, not -1"));
        assertTrue(refusal("--warmup", "soon").contains("--warmup takes seconds, not 'soon'"));
        assertTrue(refusal("--iterations", "10", "--duration", "1").contains("not both"));
        assertTrue(refusal("--frobnicate", "1").contains("unknown option --frobnicate"));
        assertTrue(refusal("--frobnicate").contains("unknown option --frobnicate"), "not: needs a value");
        assertTrue(refusal("--sizes").contains("option --sizes needs a value"));
        assertTrue(refusal("epoll").contains("unexpected argument 'epoll'"));
        assertTrue(refusal("--reps", "0").contains("--reps must be positive, not 0"));
        assertTrue(refusal("--ucx-spin", "-3").contains("--ucx-spin must be positive, not -3"));
        assertEquals("help", refusal("--help"));
        assertEquals("help", refusal("-h"));
    }
}
