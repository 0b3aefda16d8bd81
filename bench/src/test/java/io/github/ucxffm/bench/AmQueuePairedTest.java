package io.github.ucxffm.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bench am-queue} runs both kinds of block and reports them; what it measures is not asserted. */
class AmQueuePairedTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldRunBothKindsOfBlockAndReportTheRatio() {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            AmQueuePaired.main(new String[] {"8", "200"});
        } finally {
            System.setOut(out);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("AM queue: 8 turns of 200 8-byte messages; send\\+receive median queue ([0-9.]+) "
                + "ns, upcall ([0-9.]+) ns; queue / upcall per turn median ([0-9.]+) \\(quartiles ([0-9.]+) to "
                + "([0-9.]+)\\)").matcher(text);
        assertTrue(m.find(), text);
        for (int g = 1; g <= 5; g++) {
            assertTrue(Double.parseDouble(m.group(g)) > 0, "figure " + g + " in " + text);
        }
        assertTrue(Double.parseDouble(m.group(4)) <= Double.parseDouble(m.group(3))
                && Double.parseDouble(m.group(3)) <= Double.parseDouble(m.group(5)), text);
        assertNull(System.getProperty("ucxffm.am.queue"), "the property is left as it was");
    }

    @Test
    void shouldRefuseBadArguments() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> AmQueuePaired.main(new String[] {"2"}));
        assertTrue(e.getMessage().contains("BLOCKS"), e.getMessage());
        assertEquals(NumberFormatException.class, assertThrows(NumberFormatException.class,
                () -> AmQueuePaired.main(new String[] {"x"})).getClass());
    }
}
