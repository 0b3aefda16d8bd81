package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command line, as ucx_perftest takes it. */
class PerfParamsTest {

    @Test
    void shouldTakeUcxPerftestOptionsInAnyOrderWithTheHostAnywhere() {
        PerfParams p = PerfParams.parse("t", "-t", "tag_bw", "127.0.0.1", "-s", "65536", "-n100", "-w", "7", "-p",
                "13400", "-O", "4", "-x", "tcp", "-R", "99", "-f");
        assertEquals(PerfTestType.TAG_BW, p.test());
        assertEquals("127.0.0.1", p.host());
        assertEquals(65536, p.size());
        assertEquals(100, p.iterations());
        assertEquals(7, p.warmup());
        assertEquals(13400, p.port());
        assertEquals(4, p.effectiveWindow());
        assertEquals("tcp", p.transports());
        assertEquals(99.0, p.percentile());
        assertTrue(p.finalOnly());
        assertFalse(p.isServer());
    }

    @Test
    void shouldUseUcxPerftestDefaults() {
        PerfParams server = PerfParams.parse("t");
        assertTrue(server.isServer());
        assertNull(server.test());
        assertEquals(13337, server.port());
        PerfParams p = PerfParams.parse("t", "host", "-t", "tag_lat");
        assertEquals(8, p.size());
        assertEquals(1_000_000, p.iterations());
        assertEquals(10_000, p.effectiveWarmup());
        assertEquals(1, p.effectiveWindow());
        assertEquals(32, PerfParams.parse("t", "host", "-t", "ucp_put_bw").effectiveWindow());
        assertEquals(1, PerfParams.parse("t", "host", "-t", "ucp_get").effectiveWindow());
        assertEquals(1, PerfParams.parse("t", "host", "-t", "ucp_fadd").effectiveWindow());
        assertEquals(32, PerfParams.parse("t", "host", "-t", "ucp_add").effectiveWindow());
    }

    @Test
    void shouldRunAtMostATenthOfTheIterationsAsWarmUpLikeUcxPerftest() {
        assertEquals(10, PerfParams.parse("t", "h", "-t", "tag_lat", "-n", "100", "-w", "1000").effectiveWarmup());
        assertEquals(11, PerfParams.parse("t", "h", "-t", "tag_lat", "-n", "101", "-w", "1000").effectiveWarmup());
        assertEquals(3, PerfParams.parse("t", "h", "-t", "tag_lat", "-n", "100", "-w", "3").effectiveWarmup());
        assertEquals(0, PerfParams.parse("t", "h", "-t", "tag_lat", "-n", "100", "-w", "0").effectiveWarmup());
    }

    @Test
    void shouldRejectWhatItCannotRunWithAReason() {
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "-M", "multi"))
                .getMessage().contains("-M is not supported"));
        // a long option is named whole, not as "--"; --help is -h
        assertThrows(PerfParams.HelpRequested.class, () -> PerfParams.parse("t", "--help"));
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "--size=8"))
                .getMessage().contains("option --size=8 is not supported"));
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "add_lat"))
                .getMessage().contains("unknown test 'add_lat'"));
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h"))
                .getMessage().contains("needs a test"));
        assertTrue(assertThrows(PerfParams.UsageException.class,
                () -> PerfParams.parse("t", "h", "-t", "ucp_fadd", "-s", "16")).getMessage().contains("-s 4 or -s 8"));
        assertTrue(assertThrows(PerfParams.UsageException.class,
                () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-s", "16,48")).getMessage()
                .contains("scatter-gather"));
        assertTrue(assertThrows(PerfParams.UsageException.class,
                () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-n", "0")).getMessage().contains("-n"));
        assertTrue(assertThrows(PerfParams.UsageException.class,
                () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-n")).getMessage().contains("needs a value"));
        assertTrue(assertThrows(PerfParams.UsageException.class,
                () -> PerfParams.parse("t", "a", "b", "-t", "tag_lat")).getMessage().contains("one server host"));
        assertThrows(PerfParams.HelpRequested.class, () -> PerfParams.parse("t", "-h"));
    }

    @Test
    void shouldTakeTheTransportsFromTheOptionElseTheEnvironmentAsGiven() {
        PerfParams p = PerfParams.parse("t", "h", "-t", "tag_lat", "-x", "posix,sysv");
        assertEquals("posix,sysv", p.ucxTransports("tcp"));
        assertEquals("shm", PerfParams.parse("t", "h", "-t", "tag_lat").ucxTransports(" shm "));
        assertNull(PerfParams.parse("t", "h", "-t", "tag_lat").ucxTransports(null));
        assertNull(PerfParams.parse("t", "h", "-t", "tag_lat").ucxTransports(" "));
    }

    @Test
    void shouldTakeTheTestFromTheClientsRequestOnTheServer() {
        PerfParams server = PerfParams.parse("t", "-p", "1234", "-x", "tcp");
        PerfParams client = PerfParams.parse("t", "h", "-t", "ucp_get", "-s", "4096", "-n", "50", "-w", "2", "-O",
                "3");
        byte[] message = Handshake.request(client, new byte[] {1, 2, 3}, 0xABCDL);
        Handshake.Request r = Handshake.parseRequest(message, message.length);
        PerfParams p = server.withRequest(r);
        assertEquals(PerfTestType.UCP_GET, p.test());
        assertEquals(4096, p.size());
        assertEquals(50, p.iterations());
        assertEquals(2, p.warmup());
        assertEquals(3, p.effectiveWindow());
        assertEquals(1234, p.port());
        assertEquals("tcp", p.transports());
        assertTrue(p.isServer());
    }

    @Test
    void shouldPrintUsageAndFailOnBadOptionsWithoutTouchingUcx() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        assertEquals(0, PerfTest.run(o, e, "-h"));
        String usage = out.toString(StandardCharsets.UTF_8);
        for (PerfTestType t : PerfTestType.values()) {
            assertTrue(usage.contains(t.testName()), usage);
        }
        assertEquals(1, PerfTest.run(o, e, "-q"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("-q is not supported"), err.toString());
    }

    @Test
    void shouldTakeWaitModeThreadsAndRanksAsUcxPerftestDoes() {
        PerfParams p = PerfParams.parse("t", "h", "-t", "tag_lat", "-E", "sleep", "-T", "2", "-R", "99.9");
        assertTrue(p.sleep());
        assertEquals(2, p.threads());
        assertEquals(99.9, p.percentile());
        PerfParams d = PerfParams.parse("t", "h", "-t", "tag_lat");
        assertFalse(d.sleep());
        assertEquals(1, d.threads());
        assertFalse(PerfParams.parse("t", "h", "-t", "tag_lat", "-E", "poll").sleep());
        // ucx_perftest takes ranks from 0 (the minimum) to 100 (the maximum)
        assertEquals(0.0, PerfParams.parse("t", "h", "-t", "tag_lat", "-R", "0").percentile());
        assertEquals(100.0, PerfParams.parse("t", "h", "-t", "tag_lat", "-R", "100").percentile());
        assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-R", "100.1"));
        assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-E", "spin"));
        assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-T", "0"));
        assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-T",
                Integer.toString(PerfParams.MAX_THREADS + 1)));
        // ucx_perftest's -I prints extra information; its UCP wakeup -I never takes effect: refused, -E sleep named
        String m = assertThrows(PerfParams.UsageException.class,
                () -> PerfParams.parse("t", "h", "-t", "tag_lat", "-I")).getMessage();
        assertTrue(m.contains("-E sleep"), m);
    }

    @Test
    void shouldTakeWaitModeAndThreadsFromTheClientsRequest() {
        PerfParams server = PerfParams.parse("t", "-E", "sleep", "-T", "4");
        PerfParams client = PerfParams.parse("t", "h", "-t", "tag_bw", "-T", "3");
        byte[] message = Handshake.request(client, new byte[0], 1);
        PerfParams p = server.withRequest(Handshake.parseRequest(message, message.length));
        assertFalse(p.sleep(), "the client's wait mode, not the server's");
        assertEquals(3, p.threads());
    }

    @Test
    void shouldTakePairedBlocksOnTheClientForTheLoopsItHasInC() {
        assertEquals(PerfParams.DEFAULT_PAIRED_BLOCK, PerfParams.parse("t", "h", "-t", "tag_lat", "--paired").paired());
        assertEquals(64, PerfParams.parse("t", "h", "--paired=64", "-t", "tag_sync_lat").paired());
        assertEquals(0, PerfParams.parse("t", "h", "-t", "stream_lat").paired());
        assertEquals(16, PerfParams.parse("t", "h", "-t", "ucp_am_lat", "--paired=16").paired());
        PerfParams server = PerfParams.parse("t");
        byte[] message = Handshake.request(PerfParams.parse("t", "h", "-t", "stream_lat", "--paired=32"), new byte[0],
                1);
        assertEquals(32, server.withRequest(Handshake.parseRequest(message, message.length)).paired(),
                "the server follows the client");
        for (String[] bad : new String[][] {
                {"t", "--paired"}, // a server
                {"t", "h", "-t", "ucp_put_lat", "--paired"}, // no C loop with a remote key
                {"t", "h", "-t", "tag_bw", "--paired"}, // not a ping-pong
                {"t", "h", "-t", "am_lat", "-x", "posix", "-d", "memory", "--paired"}, // UCT
                {"t", "h", "-t", "tag_lat", "-E", "sleep", "--paired"},
                {"t", "h", "-t", "tag_lat", "-T", "2", "--paired"},
                {"t", "h", "-t", "tag_lat", "--paired=0"},
                {"t", "h", "-t", "tag_lat", "--paired=x"},
        }) {
            PerfParams.UsageException e = assertThrows(PerfParams.UsageException.class,
                    () -> PerfParams.parse(bad[0], java.util.Arrays.copyOfRange(bad, 1, bad.length)),
                    String.join(" ", bad));
            assertTrue(e.getMessage().contains("paired"), e.getMessage());
        }
    }

    @Test
    void shouldRefuseToSleepInOneSidedTests() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        assertEquals(1, PerfTest.run(System.out, e, "h", "-t", "ucp_put_bw", "-E", "sleep"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("one-sided"), err.toString());
    }

    @Test
    void shouldParseTheUctOptionsAndTellTheTwoLayersApart() {
        PerfParams p = PerfParams.parse("t", "h", "-t", "am_lat", "-x", "posix", "-d", "memory");
        assertTrue(p.isUct());
        assertEquals("posix", p.transports());
        assertEquals("memory", p.device());
        assertEquals(UctLayout.SHORT, p.effectiveLayout());
        assertEquals(1, p.effectiveWindow());
        p = PerfParams.parse("t", "h", "-t", "put_bw", "-x", "tcp", "-dlo", "-D", "zcopy", "-s", "4096");
        assertEquals(UctLayout.ZCOPY, p.effectiveLayout());
        assertEquals("lo", p.device());
        assertEquals(32, p.effectiveWindow());
        assertTrue(PerfParams.parse("t", "-p", "1", "-d", "memory").isUct(), "a server with -d serves UCT tests");
        assertFalse(PerfParams.parse("t", "-p", "1").isUct());
        assertFalse(PerfParams.parse("t", "h", "-t", "ucp_am_lat").isUct());

        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "am_bw",
                "-x", "posix")).getMessage().contains("needs a transport and a device"));
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "am_bw",
                "-x", "posix,tcp", "-d", "memory")).getMessage().contains("one transport"));
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "am_lat",
                "-x", "posix", "-d", "memory", "-s", "4")).getMessage().contains("8-byte header"));
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "am_lat",
                "-x", "posix", "-d", "memory", "-D", "shortiov")).getMessage().contains("shortiov is not supported"));
        assertTrue(assertThrows(PerfParams.UsageException.class, () -> PerfParams.parse("t", "h", "-t", "tag_lat",
                "-d", "memory")).getMessage().contains("-d and -D are for the UCT tests"));
    }
}
