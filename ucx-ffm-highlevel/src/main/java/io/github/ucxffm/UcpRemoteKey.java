package io.github.ucxffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A remote key unpacked on an endpoint ({@code ucp_rkey_h}): permission, as far as the transport enforces it, to
 * reach a peer's registered region with RMA and atomics.
 * <p>
 * UCX does not validate packed keys: random bytes handed to {@code ucp_ep_rkey_unpack} can crash the process.
 * Keys made by {@link UcpMemory#packRemoteKey()} therefore carry a header ({@link #FORMAT}) that this class
 * checks before UCX sees the bytes, and the region's bounds, against which every RMA and atomic operation is
 * checked locally.
 * <p>
 * <b>Ownership.</b> Owned by the endpoint it was unpacked on; closed ({@code ucp_rkey_destroy}) before it. Windows
 * from {@link #pointer} become inaccessible when the key is closed.
 * <p>
 * <b>Threads.</b> Those of the endpoint's worker.
 */
public final class UcpRemoteKey extends UcxHandle {

    /**
     * The checked key format, little-endian: magic {@code "UCRK"}, version byte {@code 1}, three zero bytes,
     * 8-byte region address, 8-byte region length, 4-byte length {@code n} of UCX's key, 4-byte CRC-32C of the
     * preceding 28 bytes followed by the key, then the {@code n} bytes of UCX's key.
     */
    public static final String FORMAT = "UCRK v1: magic, version, address, length, key length, CRC-32C, UCX key";

    static final int HEADER = 32;
    private static final int MAGIC = 0x4B524355; // "UCRK" read little-endian
    private static final int MAX_KEY = 64 * 1024;

    private final UcpEndpoint endpoint;
    private final MemorySegment handle;
    private final long base;
    private final long length;
    private final Arena windows = Arena.ofShared();

    private UcpRemoteKey(UcpEndpoint endpoint, MemorySegment handle, long base, long length) {
        super("UcpRemoteKey", endpoint);
        this.endpoint = endpoint;
        this.handle = handle;
        this.base = base;
        this.length = length;
    }

    static byte[] frame(byte[] ucxKey, long address, long size) {
        ByteBuffer b = ByteBuffer.allocate(HEADER + ucxKey.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).put((byte) 1).put((byte) 0).put((byte) 0).put((byte) 0);
        b.putLong(address).putLong(size).putInt(ucxKey.length);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, 28);
        crc.update(ucxKey);
        b.putInt((int) crc.getValue()).put(ucxKey);
        return b.array();
    }

    /** Checks a packed key and unpacks it on {@code endpoint}. */
    static UcpRemoteKey unpack(UcpEndpoint endpoint, byte[] packed) {
        if (packed == null || packed.length < HEADER) {
            throw new IllegalArgumentException("remote key rejected: " + (packed == null ? "null"
                    : packed.length + " bytes, shorter than the " + HEADER + "-byte header"));
        }
        ByteBuffer b = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getInt(0) != MAGIC) {
            throw new IllegalArgumentException("remote key rejected: not a ucx-ffm key (bad magic)");
        }
        if (packed[4] != 1) {
            throw new IllegalArgumentException("remote key rejected: unknown format version " + packed[4]);
        }
        long address = b.getLong(8);
        long size = b.getLong(16);
        int n = b.getInt(24);
        if (n <= 0 || n > MAX_KEY || n != packed.length - HEADER) {
            throw new IllegalArgumentException("remote key rejected: header says " + n + " key bytes, "
                    + (packed.length - HEADER) + " present (truncated or corrupt)");
        }
        CRC32C crc = new CRC32C();
        crc.update(packed, 0, 28);
        crc.update(packed, HEADER, n);
        if ((int) crc.getValue() != b.getInt(28)) {
            throw new IllegalArgumentException("remote key rejected: checksum mismatch (corrupt)");
        }
        checkRegion(address, size);
        byte[] key = new byte[n];
        System.arraycopy(packed, HEADER, key, 0, n);
        return unpackRaw(endpoint, key, address, size);
    }

    /** Refuses an empty region, or one that wraps past the end of the (unsigned) address space. */
    private static void checkRegion(long address, long size) {
        long end = address + size;
        if (size <= 0 || Long.compareUnsigned(end, address) < 0 && end != 0) {
            throw new IllegalArgumentException("remote key rejected: bad region [0x" + Long.toHexString(address)
                    + ", +" + size + ")");
        }
    }

    /** Unpacks UCX's own key bytes, with only length checks: for peers that do not use ucx-ffm's format. */
    static UcpRemoteKey unpackRaw(UcpEndpoint endpoint, byte[] key, long address, long size) {
        if (key == null || key.length == 0 || key.length > MAX_KEY) {
            throw new IllegalArgumentException("remote key rejected: " + (key == null ? "null" : key.length
                    + " bytes"));
        }
        checkRegion(address, size);
        MemorySegment ep = endpoint.handle();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment rkeyP = call.allocate(ADDRESS);
            Status.check(ucp_ep_rkey_unpack(ep, call.allocateFrom(JAVA_BYTE, key), rkeyP), "ucp_ep_rkey_unpack");
            return new UcpRemoteKey(endpoint, rkeyP.get(ADDRESS, 0), address, size);
        }
    }

    /**
     * The endpoint the key was unpacked on.
     *
     * @return the endpoint
     */
    public UcpEndpoint endpoint() {
        return endpoint;
    }

    /**
     * The peer's region address, as packed.
     *
     * @return the start address
     */
    public long base() {
        return base;
    }

    /**
     * The peer's region length, as packed.
     *
     * @return bytes
     */
    public long length() {
        return length;
    }

    /** Refuses remote ranges outside the packed region, before anything reaches UCX. */
    void checkRemote(long remoteAddress, long bytes) {
        long offset = remoteAddress - base;
        if (bytes < 0 || offset < 0 || offset > length - bytes) {
            throw new IndexOutOfBoundsException("remote range [0x" + Long.toHexString(remoteAddress) + ", +" + bytes
                    + ") is outside the peer's registered region [0x" + Long.toHexString(base) + ", +" + length
                    + ")");
        }
    }

    MemorySegment handle() {
        ensureOpen();
        return handle;
    }

    /**
     * Maps part of the peer's region into this process ({@code ucp_rkey_ptr}), when the transport allows direct
     * load and store (shared memory): zero-copy access to another process's memory. The window closes with the key.
     *
     * @param remoteAddress start, inside the region
     * @param bytes         length of the window
     * @return the window onto the peer's memory
     * @throws UnsupportedOperationException if the transport cannot map the peer's memory (e.g. tcp)
     */
    public MemorySegment pointer(long remoteAddress, long bytes) {
        endpoint.worker().check();
        checkRemote(remoteAddress, bytes);
        MemorySegment h = handle();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment ptrP = call.allocate(ADDRESS);
            byte status = ucp_rkey_ptr(h, remoteAddress, ptrP);
            if (status == UCS_ERR_UNREACHABLE() || status == UCS_ERR_UNSUPPORTED()) {
                throw new UnsupportedOperationException("ucp_rkey_ptr: the transport to this peer cannot map its "
                        + "memory (" + UcsStatus.describe(status) + ")");
            }
            Status.check(status, "ucp_rkey_ptr");
            return ptrP.get(ADDRESS, 0).reinterpret(bytes, windows, null);
        }
    }

    @Override
    void release() {
        windows.close();
        ucp_rkey_destroy(handle);
    }

    @Override
    public String toString() {
        return "UcpRemoteKey[0x" + Long.toHexString(base) + ", " + length + " bytes" + (isClosed() ? ", closed]" : "]");
    }
}
