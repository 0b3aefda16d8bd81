package io.github.ucxffm;

/**
 * A worker's objects by a {@code long} key: its endpoints by native {@code ucp_ep_h} address, its listeners by the id
 * given to UCX as the connection handler's argument (the listener's handle does not exist yet when the argument is
 * set), and the active-message data handlers kept, by descriptor address. All use this one scheme, an
 * allocation-free {@link LongObjectMap} under the worker's {@link Guard}: the lookups run inside upcalls on the data
 * path (an endpoint's error, a connection request, an active message's reply endpoint, stream polling), where a
 * {@code ConcurrentHashMap<Long, ?>} would box the key on every call, and the guard is a lock only for a MULTI
 * worker, the one mode in which several threads may use the worker at once.
 */
final class Registry<V> {

    private final Guard guard;
    private final LongObjectMap<V> map = new LongObjectMap<>(16);
    private long nextId = 1;

    Registry(Guard guard) {
        this.guard = guard;
    }

    /** Registers {@code value} under a new id, never 0. */
    long add(V value) {
        guard.lock();
        try {
            long id = nextId++;
            map.put(id, value);
            return id;
        } finally {
            guard.unlock();
        }
    }

    void put(long key, V value) {
        guard.lock();
        try {
            map.put(key, value);
        } finally {
            guard.unlock();
        }
    }

    /** The value under {@code key}, or {@code null}. */
    V get(long key) {
        guard.lock();
        try {
            return map.get(key);
        } finally {
            guard.unlock();
        }
    }

    V remove(long key) {
        guard.lock();
        try {
            return map.remove(key);
        } finally {
            guard.unlock();
        }
    }

    int size() {
        guard.lock();
        try {
            return map.size();
        } finally {
            guard.unlock();
        }
    }

    /** The keys, for releasing what is left; allocates. */
    long[] keys() {
        guard.lock();
        try {
            return map.keys();
        } finally {
            guard.unlock();
        }
    }
}
