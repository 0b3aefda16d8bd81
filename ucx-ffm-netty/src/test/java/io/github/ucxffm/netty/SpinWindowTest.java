package io.github.ucxffm.netty;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The idle spin window ({@link UcxTransportConfig#spinNanos()}): an idle loop keeps progressing for that long before
 * it sleeps on its worker, stops spinning at once for work handed to it from another thread, and sleeps once the
 * window has passed. Observed through the handler's count of sleeps, not through timing.
 */
class SpinWindowTest {

    private final CopyOnWriteArrayList<UcxIoHandler> handlers = new CopyOnWriteArrayList<>();
    private EventLoopGroup group;

    /** One event loop whose handler the test can see. */
    private EventLoop loop(long spinNanos) {
        IoHandlerFactory ucx = UcxIoHandler.newFactory(UcxTransportConfig.builder().config("TLS", "tcp,self")
                .spinNanos(spinNanos).build());
        group = new MultiThreadIoEventLoopGroup(1, executor -> {
            UcxIoHandler h = (UcxIoHandler) ucx.newHandler(executor);
            handlers.add(h);
            return h;
        });
        return group.next();
    }

    @AfterEach
    void shutDown() throws InterruptedException {
        if (group != null) {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS);
            assertTrue(group.terminationFuture().await(20, TimeUnit.SECONDS), "the event loop did not terminate");
        }
        assertEquals(0, UcxIoHandler.openContexts(), "the UCX context is closed with the loop");
    }

    private static void runOn(EventLoop loop) throws Exception {
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
    }

    /** Whether the loop goes to sleep again, beyond {@code before} sleeps, within 10 s. */
    private static boolean sleptSince(UcxIoHandler h, long before) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (h.sleeps() == before && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        return h.sleeps() > before;
    }

    @Test
    void shouldSleepOnItsWorkerWhenIdleWithoutASpinWindow() throws Exception {
        EventLoop loop = loop(0);
        runOn(loop);
        assertTrue(sleptSince(handlers.getFirst(), 0), "an idle loop without a spin window sleeps on its worker");
    }

    @Test
    void shouldKeepProgressingInsteadOfSleepingDuringTheWindow() throws Exception {
        EventLoop loop = loop(TimeUnit.SECONDS.toNanos(30));
        runOn(loop);
        UcxIoHandler h = handlers.getFirst();
        long before = h.sleeps();
        Thread.sleep(500);
        assertEquals(before, h.sleeps(), "a loop within its spin window does not sleep");
        // work handed over from another thread ends the spin at once, not at the end of the window
        CompletableFuture<Long> ran = new CompletableFuture<>();
        long start = System.nanoTime();
        loop.execute(() -> ran.complete(System.nanoTime()));
        long latency = ran.get(10, TimeUnit.SECONDS) - start;
        assertTrue(latency < TimeUnit.SECONDS.toNanos(10), "the task waited for the spin window: " + latency + " ns");
        assertEquals(before, h.sleeps(), "still no sleep: the loop was woken from its spin, not from a sleep");
    }

    @Test
    void shouldSleepOnceTheWindowHasPassed() throws Exception {
        EventLoop loop = loop(TimeUnit.MILLISECONDS.toNanos(50));
        runOn(loop);
        UcxIoHandler h = handlers.getFirst();
        assertTrue(sleptSince(h, h.sleeps()), "the loop went on spinning past its 50 ms window");
    }
}
