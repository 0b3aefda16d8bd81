package io.github.ucxffm;

import java.util.Arrays;

/**
 * An open-addressing map from non-zero {@code long} keys (native addresses) to objects that allocates nothing in
 * steady state: no boxing, no entry objects. Not thread-safe; each worker guards its own.
 */
final class LongObjectMap<V> {

    private long[] keys;
    private Object[] values;
    private int size;
    private int mask;

    LongObjectMap(int capacity) {
        int cap = Integer.highestOneBit(Math.max(16, capacity - 1) << 1);
        keys = new long[cap];
        values = new Object[cap];
        mask = cap - 1;
    }

    private static int hash(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    int size() {
        return size;
    }

    @SuppressWarnings("unchecked")
    V get(long key) {
        for (int i = hash(key) & mask; ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                return (V) values[i];
            }
            if (k == 0) {
                return null;
            }
        }
    }

    void put(long key, V value) {
        if (key == 0) {
            throw new IllegalArgumentException("key 0");
        }
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        for (int i = hash(key) & mask; ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                values[i] = value;
                return;
            }
            if (k == 0) {
                keys[i] = key;
                values[i] = value;
                size++;
                return;
            }
        }
    }

    @SuppressWarnings("unchecked")
    V remove(long key) {
        for (int i = hash(key) & mask; ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == 0) {
                return null;
            }
            if (k == key) {
                V old = (V) values[i];
                keys[i] = 0;
                values[i] = null;
                size--;
                // Re-insert the rest of the cluster so that lookups do not stop at the hole.
                for (int j = (i + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
                    long kj = keys[j];
                    Object vj = values[j];
                    keys[j] = 0;
                    values[j] = null;
                    size--;
                    put(kj, (V) vj);
                }
                return old;
            }
        }
    }

    /** The keys, for closing what is left; allocates. */
    long[] keys() {
        return Arrays.stream(keys).filter(k -> k != 0).toArray();
    }

    private void grow() {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new Object[oldKeys.length * 2];
        mask = keys.length - 1;
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != 0) {
                @SuppressWarnings("unchecked")
                V v = (V) oldValues[i];
                put(oldKeys[i], v);
            }
        }
    }
}
