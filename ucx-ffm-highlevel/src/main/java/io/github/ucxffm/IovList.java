package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_dt_iov;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A {@code ucp_dt_iov_t} array describing application segments, for one scatter-gather operation. UCX reads the
 * array (not only the buffers it points to) until the operation completes, so it lives in a small arena of its own
 * that is freed when the operation's slot is recycled. The segments themselves are kept strongly reachable for as
 * long.
 */
final class IovList implements OperationResource {

    private final Arena arena;
    private final MemorySegment[] elements;
    private final MemorySegment array;
    private final long totalLength;
    private boolean closed;

    private IovList(Arena arena, MemorySegment[] elements) {
        this.arena = arena;
        this.elements = elements;
        MemorySegment a;
        long total = 0;
        try {
            a = ucp_dt_iov.allocateArray(elements.length, arena);
            for (int i = 0; i < elements.length; i++) {
                MemorySegment entry = ucp_dt_iov.asSlice(a, i);
                ucp_dt_iov.buffer(entry, elements[i]);
                ucp_dt_iov.length(entry, elements[i].byteSize());
                total += elements[i].byteSize();
            }
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
        this.array = a;
        this.totalLength = total;
    }

    /**
     * Checks the segments and describes them in native memory.
     *
     * @param iov      the segments, in order; each native, none null; the array itself is copied
     * @param confined whether the operation completes on the thread that starts it (SINGLE workers), which allows
     *                 a confined arena, much cheaper to close than a shared one
     */
    static IovList of(MemorySegment[] iov, boolean confined) {
        Objects.requireNonNull(iov, "iov");
        if (iov.length == 0) {
            throw new IllegalArgumentException("a scatter-gather list needs at least one segment");
        }
        MemorySegment[] copy = iov.clone();
        for (int i = 0; i < copy.length; i++) {
            MemorySegment s = copy[i];
            if (s == null) {
                throw new NullPointerException("iov[" + i + "] is null");
            }
            if (!s.isNative()) {
                throw new IllegalArgumentException("iov[" + i + "]: UCX needs native memory: a heap segment cannot "
                        + "be used (allocate it from an Arena, or use UcpMemory)");
            }
        }
        return new IovList(confined ? Arena.ofConfined() : Arena.ofShared(), copy);
    }

    /** The {@code ucp_dt_iov_t[]} to pass as the buffer. */
    MemorySegment array() {
        return array;
    }

    /** The number of entries, to pass as the count. */
    int count() {
        return elements.length;
    }

    /** The sum of the segment sizes. */
    long totalLength() {
        return totalLength;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }
}
