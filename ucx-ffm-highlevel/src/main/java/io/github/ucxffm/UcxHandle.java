package io.github.ucxffm;

import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every handle class shares: an idempotent close that closes the children first, the closed check that
 * guards every native call, and leak reporting. A handle that becomes unreachable without being closed is reported
 * (with where it was created), never freed behind the application's back: UCX objects must be destroyed on the
 * right thread and in the right order, which a cleaner thread cannot promise.
 */
abstract class UcxHandle implements AutoCloseable {

    /** Leak reporting, on unless {@code -Ducxffm.leakDetection=false} (benchmarks turn it off). */
    static final boolean LEAK_DETECTION = !"false".equalsIgnoreCase(System.getProperty("ucxffm.leakDetection"));

    private static final Cleaner CLEANER = Cleaner.create();
    private static final System.Logger LOG = System.getLogger("io.github.ucxffm");
    private static final AtomicInteger LIVE = new AtomicInteger();
    private static final AtomicInteger LEAKS = new AtomicInteger();

    /** Shared with the cleaner action, which must not reach the handle itself. */
    private static final class State implements Runnable {
        final String kind;
        final Throwable origin;
        volatile boolean closing;
        volatile boolean closed;

        State(String kind, Throwable origin) {
            this.kind = kind;
            this.origin = origin;
        }

        @Override
        public void run() {
            if (!closed) {
                LEAKS.incrementAndGet();
                LIVE.decrementAndGet();
                LOG.log(System.Logger.Level.WARNING, kind + " was garbage-collected without close(); its native "
                        + "resources are leaked" + (origin == null ? " (run with leak detection on to see where it "
                        + "was created)" : ""), origin);
            }
        }
    }

    private final State state;
    private final Cleaner.Cleanable cleanable;
    private final UcxHandle parent;
    private final List<UcxHandle> children = new ArrayList<>();

    UcxHandle(String kind, UcxHandle parent) {
        this.parent = parent;
        this.state = new State(kind, LEAK_DETECTION ? new Throwable(kind + " created here") : null);
        this.cleanable = LEAK_DETECTION ? CLEANER.register(this, state) : null;
        LIVE.incrementAndGet();
        if (parent != null) {
            parent.adopt(this);
        }
    }

    /** Handles of this process not yet closed (for tests and soak runs). */
    static int liveHandles() {
        return LIVE.get();
    }

    /** Handles reported as leaked so far. */
    static int leaksReported() {
        return LEAKS.get();
    }

    private void adopt(UcxHandle child) {
        synchronized (children) {
            if (state.closing) {
                throw new IllegalStateException(state.kind + " is closed");
            }
            children.add(child);
        }
    }

    private void forget(UcxHandle child) {
        synchronized (children) {
            children.remove(child);
        }
    }

    /** The children now open, oldest first; for checks a parent makes before it closes them. */
    final List<UcxHandle> childrenSnapshot() {
        synchronized (children) {
            return new ArrayList<>(children);
        }
    }

    /** Whether {@link #close()} has finished with the children and released, or is releasing, the handle. */
    final boolean isClosed() {
        return state.closed;
    }

    /** Whether {@link #close()} has begun: the children are being closed, no new ones are accepted. */
    final boolean isClosing() {
        return state.closing;
    }

    /** Throws if closed: call before every native call on this handle. */
    final void ensureOpen() {
        if (state.closed) {
            throw new IllegalStateException(state.kind + " is closed");
        }
    }

    /** Releases the native object; runs once, after the children are closed. */
    abstract void release();

    /**
     * Closes the children (newest first), then this handle's native object. Idempotent.
     */
    @Override
    public void close() {
        if (state.closing) {
            return;
        }
        beforeClose();
        List<UcxHandle> snapshot;
        synchronized (children) {
            state.closing = true;
            snapshot = new ArrayList<>(children);
            children.clear();
        }
        RuntimeException failure = null;
        snapshot = closeOrder(snapshot);
        for (int i = snapshot.size() - 1; i >= 0; i--) {
            try {
                snapshot.get(i).close();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        state.closed = true;
        try {
            release();
        } finally {
            LIVE.decrementAndGet();
            if (cleanable != null) {
                cleanable.clean(); // runs the action, which sees closed and reports nothing
            }
            if (parent != null) {
                parent.forget(this);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** The children in the order they are closed, last first; newest last by default (closed first). */
    List<UcxHandle> closeOrder(List<UcxHandle> children) {
        return children;
    }

    /** Checks that may refuse to close (wrong thread, memory in use); runs before anything is closed. */
    void beforeClose() {
    }
}
