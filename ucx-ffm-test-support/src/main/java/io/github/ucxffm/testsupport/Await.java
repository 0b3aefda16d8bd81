package io.github.ucxffm.testsupport;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The one wait loop of the tests: polls a condition until it holds or a timeout passes, then fails with a message
 * that says what was awaited. The forms with a {@code step} run it between polls, for a worker that must be
 * progressed for the awaited thing to happen ({@code () -> worker.progress()}); the others pause a millisecond.
 *
 * <p>The condition is always polled once more after the last step before the timeout fails the wait, so a wait
 * fails only when the condition is false at a time past the deadline.
 */
public final class Await {

    private static final long PAUSE_NANOS = 1_000_000;

    private Await() {
    }

    /**
     * Waits until the condition holds, pausing between polls.
     *
     * @param what      what is awaited, for the failure message
     * @param timeout   how long to wait
     * @param condition the condition
     * @throws AssertionError if it does not hold in time, or the thread is interrupted
     */
    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        until(() -> what, timeout, Await::pause, condition);
    }

    /**
     * Waits until the condition holds, running {@code step} between polls.
     *
     * @param what      what is awaited, for the failure message
     * @param timeout   how long to wait
     * @param step      what to run between polls (progress a worker, say)
     * @param condition the condition
     * @throws AssertionError if it does not hold in time
     */
    public static void until(String what, Duration timeout, Runnable step, BooleanSupplier condition) {
        until(() -> what, timeout, step, condition);
    }

    /**
     * Waits until the condition holds, running {@code step} between polls; the message is built only on failure
     * (it may show state gathered while waiting, a child's output say).
     *
     * @param what      what is awaited, for the failure message
     * @param timeout   how long to wait
     * @param step      what to run between polls
     * @param condition the condition
     * @throws AssertionError if it does not hold in time
     */
    public static void until(Supplier<String> what, Duration timeout, Runnable step, BooleanSupplier condition) {
        long start = System.nanoTime();
        long limit = timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - start > limit) {
                throw new AssertionError("not within " + describe(timeout) + ": " + what.get());
            }
            step.run();
        }
    }

    /**
     * Runs {@code step} over and over for the given time: for checks that something does not happen while the
     * worker is progressed.
     *
     * @param duration how long
     * @param step     what to run
     */
    public static void during(Duration duration, Runnable step) {
        long start = System.nanoTime();
        long limit = duration.toNanos();
        while (System.nanoTime() - start < limit) {
            step.run();
        }
    }

    /**
     * Pauses about a millisecond; an interrupt fails the wait.
     *
     * @throws AssertionError if the thread is interrupted
     */
    public static void pause() {
        LockSupport.parkNanos(PAUSE_NANOS);
        if (Thread.currentThread().isInterrupted()) {
            throw new AssertionError("interrupted while waiting");
        }
    }

    private static String describe(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
