package io.github.ucxffm;

import java.util.Arrays;

import static io.github.ucxffm.bindings.ucx_h.UCS_INPROGRESS;

/**
 * Close requests of endpoints closed inside a callback, where UCX forbids the progress that would finish them: kept
 * here with a deadline and freed by later {@link UcpWorker#progress()} calls once complete or out of time, and all
 * of them when the worker closes. UCX frees a request freed while still in flight when it completes.
 */
final class DeferredCloses {

    private final Guard guard;
    private final boolean critical;
    /** Counts each close in progress as an upcall source: the worker is not quiet while one runs. */
    private final RequestTable upcallCount;
    private long[] requests = new long[4];
    private long[] deadlines = new long[4];
    /** Read without the guard by {@link #isEmpty()}: a stale answer only delays the check to the next progress. */
    private int count;

    DeferredCloses(Guard guard, boolean critical, RequestTable upcallCount) {
        this.guard = guard;
        this.critical = critical;
        this.upcallCount = upcallCount;
    }

    /** Takes over a close request that cannot be waited for here. */
    void add(long request, long deadline) {
        guard.lock();
        try {
            if (count == requests.length) {
                requests = Arrays.copyOf(requests, count * 2);
                deadlines = Arrays.copyOf(deadlines, count * 2);
            }
            requests[count] = request;
            deadlines[count++] = deadline;
            upcallCount.addUpcallSource();
        } finally {
            guard.unlock();
        }
    }

    boolean isEmpty() {
        return count == 0;
    }

    /** Frees the requests that completed or ran out of time; with {@code all}, every one. */
    void finish(boolean all) {
        guard.lock();
        try {
            long now = System.nanoTime();
            int kept = 0;
            for (int i = 0; i < count; i++) {
                long r = requests[i];
                if (all || RawCalls.checkStatus(critical, r) != UCS_INPROGRESS() || now - deadlines[i] > 0) {
                    RawCalls.free(critical, r);
                    upcallCount.removeUpcallSource();
                } else {
                    requests[kept] = r;
                    deadlines[kept++] = deadlines[i];
                }
            }
            count = kept;
        } finally {
            guard.unlock();
        }
    }
}
