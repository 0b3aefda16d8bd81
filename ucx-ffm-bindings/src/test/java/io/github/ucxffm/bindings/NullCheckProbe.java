package io.github.ucxffm.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import io.github.ucxffm.bindings.support.UcpInline;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Run in a JVM of its own by {@link SignalSafetyTest}: loads UCX, creates a context and a worker, then makes the
 * JIT-compiled code take implicit null checks, which HotSpot implements with SIGSEGV. Prints how many
 * NullPointerExceptions it caught; a UCX signal handler in HotSpot's place kills the process instead.
 */
public final class NullCheckProbe {

    private NullCheckProbe() {
    }

    private static void check(byte status) {
        if (status != UCS_OK()) {
            throw new IllegalStateException("UCX call failed with status " + status);
        }
    }

    static int length(int[] array) {
        return array.length;
    }

    public static void main(String[] args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = ucp_params_t.allocate(arena);
            ucp_params.field_mask(params, UCP_PARAM_FIELD_FEATURES());
            ucp_params.features(params, UCP_FEATURE_TAG());
            MemorySegment out = arena.allocate(ADDRESS);
            check(UcpInline.ucp_init(params, MemorySegment.NULL, out));
            MemorySegment context = out.get(ADDRESS, 0);
            check(ucp_worker_create(context, ucp_worker_params_t.allocate(arena), out));
            MemorySegment worker = out.get(ADDRESS, 0);
            int[] some = new int[3];
            long sum = 0;
            int npes = 0;
            for (int i = 0; i < 2_000_000; i++) {
                try {
                    sum += length((i & 0xFFFF) == 0xFFFF ? null : some);
                } catch (NullPointerException e) {
                    npes++;
                }
            }
            ucp_worker_progress(worker);
            ucp_worker_destroy(worker);
            ucp_cleanup(context);
            System.out.println("caught " + npes + " NullPointerExceptions, sum " + sum);
        }
    }
}
