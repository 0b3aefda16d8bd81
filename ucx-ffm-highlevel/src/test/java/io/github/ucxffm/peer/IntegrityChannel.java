package io.github.ucxffm.peer;

import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxCanceledException;
import io.github.ucxffm.UcxException;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;

/**
 * One side of one channel of the integrity harness (see {@link Integrity}): the operations it has in flight, driven
 * by {@link #step()} on the worker's thread, which the owner calls after each {@code progress()}. Nothing here
 * progresses the worker except {@link #abandon}, which runs outside callbacks.
 */
public abstract sealed class IntegrityChannel permits IntegritySender, IntegrityReceiver {

    /** A token slot with nothing in flight ({@link UcpWorker#COMPLETED} is a valid token). */
    static final long NONE = -1L;

    /** Where a channel is. */
    public enum State {
        /** Setting up: the sender waits for the key, the receiver for its key to go out. */
        STARTING,
        /** Sending or receiving. */
        RUNNING,
        /** The sender stopped starting messages and waits for the last acknowledgements. */
        DRAINING,
        /** End sent (sender) or received (receiver); waiting for the answer. */
        ENDING,
        /** Ended cleanly: everything sent was acknowledged, the receiver answered the end. */
        DONE,
        /** The endpoint or an operation failed; nothing new starts. */
        FAILED,
        /** Given up by the owner: receives canceled, the endpoint force-closed. */
        ABANDONED
    }

    final UcpWorker worker;
    final UcpEndpoint ep;
    final int channel;
    final Integrity.Config cfg;
    final Integrity.Reporter reporter;
    final Arena arena = Arena.ofConfined();
    State state = State.STARTING;
    private String failure;
    private final long createdNanos = System.nanoTime();
    /** Operations completed and bytes verified. */
    public final Integrity.Counts counts = new Integrity.Counts();
    /** Corruptions, duplicates, wrong results: each is a test failure. */
    public final List<String> problems = new ArrayList<>();
    private boolean memoryFreed;

    IntegrityChannel(UcpWorker worker, UcpEndpoint ep, int channel, Integrity.Config cfg, Integrity.Reporter reporter) {
        this.worker = worker;
        this.ep = ep;
        this.channel = channel;
        this.cfg = cfg;
        this.reporter = reporter;
    }

    /** When the channel was set up, in {@link System#nanoTime()}. */
    public long createdNanos() {
        return createdNanos;
    }

    /** The channel number. */
    public int channel() {
        return channel;
    }

    /** The endpoint. */
    public UcpEndpoint endpoint() {
        return ep;
    }

    /** Where the channel is. */
    public State state() {
        return state;
    }

    /** The first failure, or {@code null}. */
    public String failure() {
        return failure;
    }

    /** Polls what is in flight and starts what is due; {@code true} if anything happened. */
    public abstract boolean step();

    /** Whether the channel has nothing more to do by itself: done, or failed with its own operations resolved. */
    public abstract boolean isFinished();

    /** Tokens still in flight (operations and posted receives). */
    public abstract int unresolved();

    /** Cancels the posted receives (tag receives are the worker's; nothing else ends them). */
    abstract void cancelReceives();

    /** Polls everything in flight once, without starting anything new. */
    abstract void pollAll();

    /** Closes what the channel registered, before its memory is freed. */
    void releaseRegion() {
    }

    void fail(Throwable t) {
        fail(Integrity.describe(t));
    }

    void fail(String why) {
        if (failure == null) {
            failure = why;
            failedWhileEnding = state == State.ENDING;
        }
        if (state != State.DONE && state != State.ABANDONED) {
            state = State.FAILED;
        }
    }

    private boolean failedWhileEnding;

    /**
     * Whether the channel's first failure came while it was {@link State#ENDING}: after everything was sent and
     * acknowledged, while the end and its answer crossed (a peer that exits right after answering closes its
     * connection under the other side's last step).
     *
     * @return {@code true} if it failed only in its closing exchange
     */
    public boolean failedWhileEnding() {
        return failedWhileEnding;
    }

    void problem(String what) {
        problems.add(what);
        reporter.problem(channel, what);
    }

    /**
     * Polls a token: {@code 0} while in flight, {@code 1} when it completed OK, {@code -1} when it failed (which fails
     * the channel, unless the failure is a cancellation of a channel being abandoned).
     */
    int outcome(long token) {
        if (token == NONE) {
            return 1;
        }
        try {
            return worker.poll(token) ? 1 : 0;
        } catch (UcxCanceledException e) {
            if (state != State.ABANDONED && state != State.DONE) {
                fail(e);
            }
            return -1;
        } catch (UcxException e) {
            if (state != State.ABANDONED && state != State.DONE) {
                fail(e);
            }
            return -1;
        }
    }

    /** Whether a token is no longer in flight (completed either way). */
    boolean resolved(long token) {
        return outcome(token) != 0;
    }

    /**
     * Gives up: cancels the receives, force-closes the endpoint (which completes its operations with an error) and
     * progresses until every token is resolved or the deadline passes.
     *
     * @param deadlineNanos a {@link System#nanoTime()} bound
     * @return tokens still unresolved at the deadline (then the memory stays allocated until the worker closes)
     */
    public int abandon(long deadlineNanos) {
        if (state != State.DONE) {
            state = State.ABANDONED;
        }
        return close(true, deadlineNanos);
    }

    /**
     * Ends a channel that is {@link State#DONE}: cancels the receives left posted, resolves every token, then closes
     * the endpoint (flushing, bounded by its close timeout).
     *
     * @param deadlineNanos a {@link System#nanoTime()} bound for the tokens
     * @return tokens still unresolved at the deadline
     */
    public int finish(long deadlineNanos) {
        return close(false, deadlineNanos);
    }

    /** Cancels the receives left posted, closes the endpoint, and resolves tokens until the deadline. */
    private int close(boolean force, long deadlineNanos) {
        cancelReceives();
        try {
            if (force) {
                ep.closeForce();
            } else {
                ep.close(); // also ends a stream receive left posted, which a cancel does not
            }
        } catch (RuntimeException e) {
            fail(e);
        }
        while (unresolved() > 0 && System.nanoTime() - deadlineNanos < 0) {
            worker.progress();
            pollAll();
        }
        return unresolved();
    }

    /**
     * Frees the channel's native memory. Only once nothing is in flight, or after the worker closed (which released
     * what was): UCX writes into this memory until then.
     *
     * @param workerClosed whether the worker is closed already
     * @throws IllegalStateException if operations are still in flight on an open worker
     */
    public void freeMemory(boolean workerClosed) {
        if (memoryFreed) {
            return;
        }
        if (unresolved() > 0 && !workerClosed) {
            throw new IllegalStateException("channel " + channel + " still has " + unresolved() + " operations in "
                    + "flight");
        }
        memoryFreed = true;
        releaseRegion();
        arena.close();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[ch " + channel + ", " + state + (failure == null ? "" : ", " + failure)
                + "]";
    }
}
