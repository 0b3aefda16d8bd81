package io.github.ucxffm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Collects Netty's leak reports (logged by {@code ResourceLeakDetector} through java.util.logging, Netty's logger
 * when no other logging library is present) so that a test can fail on them.
 */
final class LeakCheck {

    private static final Logger LOGGER = Logger.getLogger(ResourceLeakDetector.class.getName());
    private static final List<String> LEAKS = new ArrayList<>();

    static {
        LOGGER.addHandler(new Handler() {
            @Override
            public void publish(LogRecord record) {
                String m = record.getMessage();
                if (m != null && m.contains("LEAK")) {
                    synchronized (LEAKS) {
                        LEAKS.add(m);
                    }
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
    }

    private LeakCheck() {
    }

    /** Starts a test: the level must be paranoid, and earlier reports are forgotten. */
    static void start() {
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel(),
                "the module's tests run with -Dio.netty.leakDetection.level=PARANOID");
        synchronized (LEAKS) {
            LEAKS.clear();
        }
    }

    /**
     * Makes the collector find unreachable buffers (the detector reports when it tracks a new one), then returns
     * the reports.
     */
    static List<String> collect() {
        for (int i = 0; i < 8; i++) {
            System.gc();
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(8);
            b.release();
            ByteBuf h = PooledByteBufAllocator.DEFAULT.heapBuffer(8);
            h.release();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (LEAKS) {
            return new ArrayList<>(LEAKS);
        }
    }
}
