package io.github.ucxffm;

import io.github.ucxffm.bindings.ucx_h;

/**
 * {@code ucs_thread_mode_t}: which threads may use a worker (or, for a context, its shared parts).
 */
public enum UcsThreadMode {
    /** One thread only: the owner. ucx-ffm checks this on every call, cheaply. */
    SINGLE(ucx_h.UCS_THREAD_MODE_SINGLE()),
    /** Any thread, one at a time: the application serializes the calls (a lock, a single event loop). */
    SERIALIZED(ucx_h.UCS_THREAD_MODE_SERIALIZED()),
    /** Any threads concurrently: UCX locks inside. */
    MULTI(ucx_h.UCS_THREAD_MODE_MULTI());

    private final int code;

    UcsThreadMode(int code) {
        this.code = code;
    }

    /**
     * The native value.
     *
     * @return the {@code ucs_thread_mode_t}
     */
    public int code() {
        return code;
    }

    static UcsThreadMode of(int code) {
        for (UcsThreadMode m : values()) {
            if (m.code == code) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown ucs_thread_mode_t " + code);
    }
}
