package io.github.ucxffm.bench.transport;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The latency histogram: percentiles of known samples, to its 0.1% resolution. */
class LatenciesTest {

    @Test
    void shouldGiveThePercentilesOfKnownSamples() {
        Latencies l = new Latencies();
        // 1 us, 2 us, ... 1000 us, shuffled by a stride coprime with 1000
        for (int i = 0; i < 1000; i++) {
            l.record(((i * 7L) % 1000 + 1) * 1000);
        }
        assertEquals(1000, l.count());
        assertEquals(500.0, l.percentileMicros(50), 500 * 0.001);
        assertEquals(990.0, l.percentileMicros(99), 990 * 0.001);
        assertEquals(1.0, l.percentileMicros(0), 0.001);
        assertEquals(1000.0, l.percentileMicros(100), 1000 * 0.001);
    }

    @Test
    void shouldWeightRepeatedSamples() {
        Latencies l = new Latencies();
        for (int i = 0; i < 98; i++) {
            l.record(10_000); // 10 us
        }
        l.record(5_000_000); // two slow ones: 5 ms and 7 ms
        l.record(7_000_000);
        assertEquals(10.0, l.percentileMicros(50), 0.01);
        assertEquals(10.0, l.percentileMicros(98), 0.01);
        assertEquals(5000.0, l.percentileMicros(99), 5);
        assertEquals(7000.0, l.percentileMicros(100), 7);
    }

    @Test
    void shouldStartAgainAfterAResetAndClampOutliers() {
        Latencies l = new Latencies();
        assertTrue(Double.isNaN(l.percentileMicros(50)), "nothing recorded");
        l.record(123_000);
        l.reset();
        assertEquals(0, l.count());
        l.record(-5); // a clock that stepped back
        l.record(Latencies.MAX_NANOS * 10);
        assertEquals(0.0, l.percentileMicros(0));
        assertEquals(Latencies.MAX_NANOS / 1000.0, l.percentileMicros(100), Latencies.MAX_NANOS / 1000.0 * 0.001);
        assertThrows(IllegalArgumentException.class, () -> l.percentileMicros(101));
        assertThrows(IllegalArgumentException.class, () -> l.percentileMicros(Double.NaN));
    }
}
