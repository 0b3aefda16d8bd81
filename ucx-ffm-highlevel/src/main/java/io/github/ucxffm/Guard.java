package io.github.ucxffm;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock of one worker's book-keeping (request table, registries, kept active-message data, deferred closes),
 * taken only when the worker is {@link UcsThreadMode#MULTI}: a SINGLE worker is confined to one thread and a
 * SERIALIZED one is used by one thread at a time, so for them {@link #lock()} is a field read and a branch.
 * Reentrant because a completion delivered under one part may reach another part of the same worker.
 */
final class Guard {

    private final boolean enabled;
    private final ReentrantLock lock;

    Guard(boolean enabled) {
        this.enabled = enabled;
        this.lock = enabled ? new ReentrantLock() : null;
    }

    void lock() {
        if (enabled) {
            lock.lock();
        }
    }

    void unlock() {
        if (enabled) {
            lock.unlock();
        }
    }
}
