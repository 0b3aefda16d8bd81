package io.github.ucxffm.testsupport;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AwaitTest {

    @Test
    void shouldRunTheStepUntilTheConditionHolds() {
        AtomicInteger steps = new AtomicInteger();
        Await.until("three steps", Duration.ofSeconds(5), steps::incrementAndGet, () -> steps.get() == 3);
        assertEquals(3, steps.get());
    }

    @Test
    void shouldFailWithTheMessageAfterTheTimeout() {
        long start = System.nanoTime();
        AssertionError e = assertThrows(AssertionError.class,
                () -> Await.until("the impossible", Duration.ofMillis(200), () -> false));
        assertTrue(System.nanoTime() - start >= 200_000_000L);
        assertEquals("not within 200 ms: the impossible", e.getMessage());
    }

    @Test
    void shouldRunTheStepForTheWholeDuration() {
        AtomicInteger steps = new AtomicInteger();
        long start = System.nanoTime();
        Await.during(Duration.ofMillis(100), steps::incrementAndGet);
        assertTrue(System.nanoTime() - start >= 100_000_000L);
        assertTrue(steps.get() > 0);
    }
}
