package io.github.ucxffm.bench.perftest;

import io.github.ucxffm.testsupport.RunnerPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The UCT tests of the ucx-ffm runner as a user runs them: a server ({@code -d}) and a client process on 127.0.0.1
 * over shared memory and tcp, with few iterations. Besides a parsable {@code Final:} line, the server must report
 * what arrived: every active message, or the put data byte for byte, so a runner that sends nothing or the wrong
 * bytes fails.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UctPerfTestRunTest {

    private static final Pattern RECEIVED = Pattern.compile("uct: received (\\d+) active messages of (\\d+) bytes");

    private static RunnerPair.Outcome[] run(List<String> clientArgs) throws Exception {
        try (RunnerPair pair = new RunnerPair(PerfTestRunTest.MAIN, Map.of())) {
            return pair.run(List.of("-d", "any"), clientArgs, 90);
        }
    }

    @ParameterizedTest(name = "{0} over {1}/{2} ({3})")
    @CsvSource({
        "am_lat, posix, memory, short",
        "put_lat, posix, memory, short",
        "am_bw, posix, memory, short",
        "put_bw, posix, memory, short",
        "am_lat, tcp, lo, short",
        "put_lat, tcp, lo, zcopy",
        "am_bw, tcp, lo, short",
        "put_bw, tcp, lo, zcopy",
    })
    void shouldRunTheUctTestBetweenTwoProcessesAndDeliverEverything(String test, String tl, String dev, String layout)
            throws Exception {
        RunnerPair.Outcome[] o = run(List.of("-t", test, "-x", tl, "-d", dev, "-D", layout, "-s", "8", "-n", "300",
                "-w", "20"));
        PerfTestRunTest.assertFinal(o, 300);
        String all = "client:\n" + o[0].output() + "\nserver:\n" + o[1].output();
        assertTrue(o[0].output().contains("transports: " + tl + "/" + dev + " (" + layout + ")"), all);
        assertTrue(o[1].output().contains("API:          transport layer"), all);
        assertTrue(o[1].output().contains("Data layout:  " + layout), all);
        if (test.startsWith("am_")) {
            // the warm-up makes at least 10,000 iterations, then the 300 measured: the server counted them all
            Matcher m = RECEIVED.matcher(o[1].output());
            assertTrue(m.find(), all);
            assertTrue(Long.parseLong(m.group(1)) >= PerfRunner.JIT_WARMUP + 300, all);
            assertEquals("8", m.group(2), all);
        } else {
            assertTrue(o[1].output().contains("uct: put data verified (8 bytes)"), all);
        }
        assertTrue(o[0].output().contains("the measured loop allocated"), all);
    }

    @Test
    void shouldRunCopyLayoutsAndLargerMessages() throws Exception {
        RunnerPair.Outcome[] o = run(List.of("-t", "am_bw", "-x", "posix", "-d", "memory", "-D", "bcopy", "-s",
                "4096", "-n", "200"));
        PerfTestRunTest.assertFinal(o, 200);
        Matcher m = RECEIVED.matcher(o[1].output());
        assertTrue(m.find() && m.group(2).equals("4096"), o[1].output());

        o = run(List.of("-t", "put_bw", "-x", "cma", "-d", "memory", "-D", "zcopy", "-s", "4096", "-n", "200"));
        PerfTestRunTest.assertFinal(o, 200);
        assertTrue(o[1].output().contains("uct: put data verified (4096 bytes)"), o[1].output());
    }

    private static RunnerPair.Outcome alone(String... args) throws Exception {
        try (RunnerPair pair = new RunnerPair(PerfTestRunTest.MAIN, Map.of())) {
            List<String> a = new java.util.ArrayList<>(List.of("127.0.0.1", "-p",
                    Integer.toString(RunnerPair.freePort())));
            a.addAll(List.of(args));
            return pair.runAlone(a, 60);
        }
    }

    @Test
    void shouldRefuseActiveMessagesOverCmaAsUcxPerftestDoes() throws Exception {
        RunnerPair.Outcome o = alone("-t", "am_lat", "-x", "cma", "-d", "memory");
        assertEquals(1, o.exit(), o.output());
        assertTrue(o.output().contains("cma/memory does not support operation am short (cma has no active "
                + "messages)"), o.output());
        o = alone("-t", "put_lat", "-x", "cma", "-d", "memory");
        assertEquals(1, o.exit(), o.output());
        assertTrue(o.output().contains("cma/memory does not support operation put short (it offers -D zcopy)"),
                o.output());
        o = alone("-t", "am_lat", "-x", "posix", "-d", "memory", "-s", "4096");
        assertEquals(1, o.exit(), o.output());
        assertTrue(o.output().contains("message size (4096) is larger than posix/memory supports for am short"),
                o.output());
    }

    @Test
    void shouldRefuseAnUnknownDeviceOrAMissingOne() throws Exception {
        RunnerPair.Outcome o = alone("-t", "am_lat", "-x", "posix", "-d", "bogus");
        assertEquals(1, o.exit(), o.output());
        assertTrue(o.output().contains("no UCT transport posix/bogus here"), o.output());
        assertTrue(o.output().contains("posix/memory"), "lists what there is: " + o.output());

        o = alone("-t", "put_bw", "-x", "posix");
        assertEquals(1, o.exit(), o.output());
        assertTrue(o.output().contains("put_bw is a UCT test: it needs a transport and a device"), o.output());

        o = alone("-t", "tag_lat", "-d", "memory");
        assertNotEquals(0, o.exit(), o.output());
        assertTrue(o.output().contains("-d and -D are for the UCT tests"), o.output());
    }
}
