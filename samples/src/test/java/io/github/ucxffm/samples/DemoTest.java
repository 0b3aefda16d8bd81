package io.github.ucxffm.samples;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The demo's reading of its processes' output and its table; DemoIT runs the whole demo through the launcher. */
class DemoTest {

    @Test
    void shouldReadThePortFromTheServersListeningLine() {
        assertEquals(Optional.of(40123), Demo.listeningPort("tag-pingpong: listening on 0.0.0.0:40123"));
        assertEquals(Optional.of(7), Demo.listeningPort("tag-pingpong: listening on :::7"));
        assertEquals(Optional.empty(), Demo.listeningPort("tag-pingpong: listening on 0.0.0.0:"));
        assertEquals(Optional.empty(), Demo.listeningPort("listening on 0.0.0.0:40123 (not yet)"));
    }

    @Test
    void shouldReadTheClientsResultLine() {
        Demo.Row row = Demo.result("RESULT sample=tag-pingpong transport=sysv,cma size=8 iterations=5000 "
                + "p50_oneway_us=0.191 p99_oneway_us=0.402 msgs_per_s=4800123").orElseThrow();
        assertEquals(new Demo.Row("sysv,cma", 8, 0.191, 0.402, 4800123), row);
        assertTrue(Demo.result("messages/s: 4800123").isEmpty());
        assertTrue(Demo.result("RESULT sample=bandwidth transport=tcp size=8 iterations=1 mb_per_s=1.0").isEmpty());
    }

    @Test
    void shouldPrintOneAlignedRowPerTransport() {
        String table = Demo.table(List.of(new Demo.Row("posix", 8, 0.2, 0.45, 4_000_000),
                new Demo.Row("tcp", 8, 7.5, 12.25, 60_000)));
        List<String> lines = table.lines().toList();
        assertEquals(3, lines.size(), table);
        assertTrue(lines.get(0).startsWith("transport") && lines.get(0).contains("p50 one-way us"), table);
        assertTrue(lines.get(1).matches("posix\\s+8 B\\s+0\\.200\\s+0\\.450\\s+4000000"), table);
        assertTrue(lines.get(2).matches("tcp\\s+8 B\\s+7\\.500\\s+12\\.250\\s+60000"), table);
        assertEquals(lines.get(0).length(), lines.get(1).length(), "columns line up:\n" + table);
    }

    @Test
    void shouldRefuseBadOptionsWithAUsageError() {
        SampleException e = assertThrows(SampleException.class, () -> Demo.run(new String[] {"--iterations", "0"}));
        assertEquals(SampleException.USAGE, e.status());
        assertTrue(e.getMessage().contains("--iterations"), e.getMessage());
        e = assertThrows(SampleException.class, () -> Demo.run(new String[] {"--warmup"}));
        assertEquals(SampleException.USAGE, e.status());
        e = assertThrows(SampleException.class, () -> Demo.run(new String[] {"--transport", "tcp"}));
        assertEquals(SampleException.USAGE, e.status());
        assertTrue(e.getMessage().contains("unknown option --transport"), e.getMessage());
    }
}
