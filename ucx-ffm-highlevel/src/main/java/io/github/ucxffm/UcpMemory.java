package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_mem_attr;
import io.github.ucxffm.bindings.ucp_mem_map_params;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.concurrent.atomic.AtomicInteger;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Memory registered with UCX ({@code ucp_mem_h}): a region peers can reach with RMA and atomics through a remote
 * key, and that local operations can use without registering again.
 * <p>
 * Made by {@link UcpContext#register(MemorySegment)} (the application's memory; the segment stays reachable
 * while registered) or {@link UcpContext#allocate(long)} (UCX allocates; {@link #segment()} is valid until
 * unmapped, and any access after that throws instead of touching freed memory).
 * <p>
 * <b>Ownership.</b> Owned by its context. {@link #close()} unmaps: remote access through keys packed from it
 * stops working (this is how access is revoked). Closing while a local operation of ucx-ffm still uses the memory
 * is refused with {@link IllegalStateException}.
 * <p>
 * <b>Threads.</b> Any thread.
 */
public final class UcpMemory extends UcxHandle {

    private final UcpContext context;
    private final MemorySegment memh;
    private final MemorySegment segment;
    private final Arena window;
    private final AtomicInteger inUse = new AtomicInteger();

    private UcpMemory(UcpContext context, MemorySegment memh, MemorySegment segment, Arena window) {
        super("UcpMemory", context);
        this.context = context;
        this.memh = memh;
        this.segment = segment;
        this.window = window;
    }

    static UcpMemory map(UcpContext context, MemorySegment userSegment, long length, UcsMemoryType type) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment params = ucp_mem_map_params.allocate(call);
            long mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH() | UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE();
            ucp_mem_map_params.length(params, length);
            ucp_mem_map_params.memory_type(params, type.code());
            if (userSegment != null) {
                mask |= UCP_MEM_MAP_PARAM_FIELD_ADDRESS();
                ucp_mem_map_params.address(params, userSegment);
            } else {
                mask |= UCP_MEM_MAP_PARAM_FIELD_FLAGS();
                ucp_mem_map_params.flags(params, UCP_MEM_MAP_ALLOCATE());
            }
            ucp_mem_map_params.field_mask(params, mask);
            MemorySegment memhP = call.allocate(ADDRESS);
            Status.check(ucp_mem_map(context.handle(), params, memhP), "ucp_mem_map");
            MemorySegment memh = memhP.get(ADDRESS, 0);
            if (userSegment != null) {
                return new UcpMemory(context, memh, userSegment, null);
            }
            MemorySegment attr = ucp_mem_attr.allocate(call);
            ucp_mem_attr.field_mask(attr, UCP_MEM_ATTR_FIELD_ADDRESS() | UCP_MEM_ATTR_FIELD_LENGTH());
            byte q = ucp_mem_query(memh, attr);
            if (q != UCS_OK()) {
                ucp_mem_unmap(context.handle(), memh);
                throw UcxException.of("ucp_mem_query", q);
            }
            Arena window = Arena.ofShared();
            MemorySegment seg = ucp_mem_attr.address(attr).reinterpret(length, window, null);
            return new UcpMemory(context, memh, seg, window);
        }
    }

    /**
     * The registered memory. For memory UCX allocated, the segment is closed by {@link #close()}.
     *
     * @return the segment
     */
    public MemorySegment segment() {
        ensureOpen();
        return segment;
    }

    /**
     * The start address, which peers use with the remote key.
     *
     * @return the address of the region
     */
    public long address() {
        return segment.address();
    }

    /**
     * The length of the region.
     *
     * @return bytes
     */
    public long size() {
        return segment.byteSize();
    }

    /**
     * Where the memory lives ({@code ucp_mem_query}).
     *
     * @return the memory type
     */
    public UcsMemoryType memoryType() {
        ensureOpen();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment attr = ucp_mem_attr.allocate(call);
            ucp_mem_attr.field_mask(attr, UCP_MEM_ATTR_FIELD_MEM_TYPE());
            Status.check(ucp_mem_query(memh, attr), "ucp_mem_query");
            int t = ucp_mem_attr.mem_type(attr);
            for (UcsMemoryType m : UcsMemoryType.values()) {
                if (m.code() == t) {
                    return m;
                }
            }
            throw new IllegalStateException("unknown memory type " + t);
        }
    }

    MemorySegment memh() {
        ensureOpen();
        return memh;
    }

    /**
     * Packs a remote key for this region in ucx-ffm's checked format ({@link UcpRemoteKey#FORMAT}): UCX's key
     * bytes with the region's address and length and a checksum, so that a receiver rejects truncated or foreign
     * bytes before UCX sees them, and refuses RMA outside the region.
     *
     * @return the packed key, to send to the peer
     */
    public byte[] packRemoteKey() {
        return UcpRemoteKey.frame(packRawRemoteKey(), address(), size());
    }

    /**
     * Packs a remote key in ucx-ffm's checked format into native memory, for sending with a zero-copy operation.
     *
     * @param allocator where to put the key
     * @return a segment holding exactly the packed key
     */
    public MemorySegment packRemoteKey(SegmentAllocator allocator) {
        return allocator.allocateFrom(JAVA_BYTE, packRemoteKey());
    }

    /**
     * Packs the remote key as UCX makes it ({@code ucp_rkey_pack}), for peers that do not use ucx-ffm.
     *
     * @return UCX's key bytes
     */
    public byte[] packRawRemoteKey() {
        MemorySegment h = memh();
        // Not ucp_memh_pack, although the headers of 1.14+ name it the successor: up to 1.23 at least, it packs only
        // with UCP_MEMH_PACK_FLAG_EXPORT (a handle for a peer on the same device, not a remote key) and without that
        // flag aborts the process ("packing rkey using ucp_memh_pack() is unsupported", ucp_rkey.c). ucp_rkey_pack,
        // deprecated into ucp_compat.h, still makes the remote key on every release.
        try (Arena call = Arena.ofConfined()) {
            MemorySegment bufP = call.allocate(ADDRESS);
            MemorySegment sizeP = call.allocate(JAVA_LONG);
            Status.check(ucp_rkey_pack(context.handle(), h, bufP, sizeP), "ucp_rkey_pack");
            MemorySegment buf = bufP.get(ADDRESS, 0);
            byte[] bytes = buf.reinterpret(sizeP.get(JAVA_LONG, 0)).toArray(JAVA_BYTE);
            ucp_rkey_buffer_release(buf);
            return bytes;
        }
    }

    /** An operation of this layer starts using the memory. */
    void beginUse() {
        ensureOpen();
        inUse.incrementAndGet();
    }

    /** That operation completed. */
    void endUse() {
        inUse.decrementAndGet();
    }

    /**
     * How many operations in flight use this memory.
     *
     * @return the count
     */
    public int operationsInFlight() {
        return inUse.get();
    }

    @Override
    void beforeClose() {
        int n = inUse.get();
        if (n > 0 && !context.isClosing()) { // a closing context has closed its workers: nothing uses it any more
            throw new IllegalStateException("UcpMemory is used by " + n + " operation(s) in flight; complete or "
                    + "cancel them before unmapping");
        }
    }

    @Override
    void release() {
        ucp_mem_unmap(context.nativeHandleUnchecked(), memh);
        if (window != null) {
            window.close();
        }
    }

    @Override
    public String toString() {
        return "UcpMemory[" + Long.toHexString(segment.address()) + ", " + segment.byteSize() + " bytes"
                + (isClosed() ? ", unmapped]" : "]");
    }
}
