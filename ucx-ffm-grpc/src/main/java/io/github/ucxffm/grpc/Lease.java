package io.github.ucxffm.grpc;

import io.netty.channel.EventLoopGroup;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One server's or channel's hold on the {@link SharedGroup}: released once, when what holds it has terminated (a
 * daemon thread waits for that after shutdown was asked), or at once when it failed to start.
 */
final class Lease {

    /** Waits until the holder has terminated. */
    interface Termination {
        void await() throws InterruptedException;
    }

    private final SharedGroup shared;
    private final EventLoopGroup group;
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicBoolean watching = new AtomicBoolean();

    private Lease(SharedGroup shared) {
        this.shared = shared;
        this.group = shared.acquire();
    }

    static Lease take(SharedGroup shared) {
        return new Lease(shared);
    }

    EventLoopGroup group() {
        return group;
    }

    /** Gives the group back now; later calls do nothing. */
    void release() {
        if (released.compareAndSet(false, true)) {
            shared.release(group);
        }
    }

    /**
     * Gives the group back once {@code termination} returns, on a daemon thread (shutdown may be asked from an event
     * loop of this very group, which must not block); later calls do nothing.
     */
    void releaseAfter(Termination termination) {
        if (!watching.compareAndSet(false, true) || released.get()) {
            return;
        }
        Thread.ofPlatform().daemon().name("ucx-grpc-release").start(() -> {
            try {
                termination.await();
                release();
            } catch (InterruptedException e) {
                // only this thread's own interrupt, and nothing interrupts it: the group then stays with its daemons
                Thread.currentThread().interrupt();
            }
        });
    }
}
