package io.github.ucxffm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;

/** The leak check the other tests rely on finds a buffer that was never released. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LeakCheckTest {

    @Test
    void shouldReportABufferThatWasNeverReleased() {
        LeakCheck.start();
        leak();
        List<String> leaks = LeakCheck.collect();
        assertFalse(leaks.isEmpty(), "a dropped buffer must be reported at PARANOID level");
        LeakCheck.start(); // forget it, for the tests that follow in this JVM
    }

    private static void leak() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(1);
    }
}
