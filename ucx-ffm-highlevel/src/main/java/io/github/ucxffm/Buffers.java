package io.github.ucxffm;

import java.lang.foreign.MemorySegment;

/** Argument checks and slicing for buffers handed to UCX. */
final class Buffers {

    private Buffers() {
    }

    /** UCX reads and writes native memory only; the range must lie inside the segment. */
    static void checkRange(MemorySegment buffer, long offset, long length) {
        if (!buffer.isNative()) {
            throw new IllegalArgumentException("UCX needs native memory: a heap segment cannot be used "
                    + "(allocate it from an Arena, or use UcpMemory)");
        }
        if (!buffer.scope().isAlive()) {
            // The hot paths pass raw addresses, so no scope check happens in the call itself
            throw new IllegalStateException("the buffer's arena is closed");
        }
        if (offset < 0 || length < 0 || offset > buffer.byteSize() - length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", " + offset + " + " + length
                    + ") is outside a segment of " + buffer.byteSize() + " bytes");
        }
    }

    /** The segment from {@code offset}; the segment itself when the offset is zero. */
    static MemorySegment at(MemorySegment buffer, long offset) {
        return offset == 0 ? buffer : buffer.asSlice(offset);
    }
}
