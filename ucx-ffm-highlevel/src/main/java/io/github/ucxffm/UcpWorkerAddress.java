package io.github.ucxffm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The checked form of a worker address, as {@link UcpWorker#address()} makes it and {@link UcpWorker#connect(byte[])}
 * and {@link UcpEndpoint.Params#worker(byte[])} accept it.
 * <p>
 * UCX does not validate worker addresses: {@code ucp_ep_create} takes no length, its parser trusts the sizes
 * written inside the bytes, and random bytes can crash the process. ucx-ffm therefore frames UCX's address with a
 * header ({@link #FORMAT}) and checks the frame before UCX sees anything: bytes that are truncated, extended,
 * corrupted or not made by ucx-ffm throw {@link IllegalArgumentException}.
 * <p>
 * The checksum detects accidents (truncation, corruption, bytes from another protocol), not malice: anyone can
 * compute a CRC, so a peer that means harm can still hand over an address that UCX's parser chokes on. Connect
 * only to addresses that came from peers you trust, over a channel you trust (see {@code SECURITY.md}).
 * <p>
 * Stateless; every method may be called from any thread.
 */
public final class UcpWorkerAddress {

    /**
     * The checked address format, little-endian: magic {@code "UCWA"}, version byte {@code 1}, three zero bytes,
     * 4-byte length {@code n} of UCX's address (1 to {@value #MAX_UCX_ADDRESS}), 4-byte CRC-32C of the preceding 12
     * bytes followed by UCX's address, then the {@code n} bytes of UCX's address ({@code ucp_worker_query} with
     * {@code UCP_WORKER_ATTR_FIELD_ADDRESS}). Nothing may follow.
     */
    public static final String FORMAT = "UCWA v1: magic, version, 3 zero bytes, length, CRC-32C, UCX address";

    /** Bytes before UCX's address. */
    public static final int HEADER_LENGTH = 16;

    /**
     * The largest UCX address accepted, in bytes. A worker's address lists every transport and device it can be
     * reached on; a few hundred bytes on a host with a handful of devices.
     */
    public static final int MAX_UCX_ADDRESS = 64 * 1024;

    private static final int MAGIC = 0x41574355; // "UCWA" read little-endian
    private static final byte VERSION = 1;

    private UcpWorkerAddress() {
    }

    /** Frames UCX's address bytes in the checked format. */
    static byte[] frame(byte[] ucxAddress) {
        if (ucxAddress.length == 0 || ucxAddress.length > MAX_UCX_ADDRESS) {
            throw new IllegalStateException("UCX returned a worker address of " + ucxAddress.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + ucxAddress.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).put(VERSION).put((byte) 0).put((byte) 0).put((byte) 0).putInt(ucxAddress.length);
        b.putInt(crc(b.array(), ucxAddress, 0, ucxAddress.length)).put(ucxAddress);
        return b.array();
    }

    private static int crc(byte[] header, byte[] address, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(header, 0, 12);
        crc.update(address, offset, length);
        return (int) crc.getValue();
    }

    /**
     * Checks a worker address in the {@link #FORMAT checked format} and gives UCX's address inside it, for a peer
     * that speaks UCX but not ucx-ffm.
     *
     * @param address bytes from a peer's {@link UcpWorker#address()}
     * @return a copy of UCX's address bytes
     * @throws IllegalArgumentException if the bytes are {@code null}, truncated, extended, corrupt or not a ucx-ffm
     *                                  worker address; the message says which
     */
    public static byte[] ucxAddress(byte[] address) {
        if (address == null) {
            throw new IllegalArgumentException("worker address rejected: null");
        }
        if (address.length < HEADER_LENGTH) {
            throw new IllegalArgumentException("worker address rejected: " + address.length + " bytes, shorter than "
                    + "the " + HEADER_LENGTH + "-byte header (truncated, or not a ucx-ffm worker address)");
        }
        ByteBuffer b = ByteBuffer.wrap(address).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getInt(0) != MAGIC) {
            throw new IllegalArgumentException("worker address rejected: not a ucx-ffm worker address (bad magic; "
                    + "use rawAddress()/Params.rawWorker for UCX's own bytes from a trusted peer)");
        }
        if (address[4] != VERSION) {
            throw new IllegalArgumentException("worker address rejected: unknown format version " + address[4]);
        }
        if (address[5] != 0 || address[6] != 0 || address[7] != 0) {
            throw new IllegalArgumentException("worker address rejected: reserved header bytes are not zero "
                    + "(corrupt)");
        }
        int n = b.getInt(8);
        if (n <= 0 || n > MAX_UCX_ADDRESS || n != address.length - HEADER_LENGTH) {
            throw new IllegalArgumentException("worker address rejected: header says " + Integer.toUnsignedString(n)
                    + " address bytes, " + (address.length - HEADER_LENGTH) + " present (truncated or corrupt)");
        }
        if (crc(address, address, HEADER_LENGTH, n) != b.getInt(12)) {
            throw new IllegalArgumentException("worker address rejected: checksum mismatch (corrupt)");
        }
        byte[] ucx = new byte[n];
        System.arraycopy(address, HEADER_LENGTH, ucx, 0, n);
        return ucx;
    }

    /** Length checks for UCX's own address bytes, which cannot be checked further. */
    static byte[] checkRaw(byte[] ucxAddress) {
        if (ucxAddress == null) {
            throw new IllegalArgumentException("worker address rejected: null");
        }
        if (ucxAddress.length == 0 || ucxAddress.length > MAX_UCX_ADDRESS) {
            throw new IllegalArgumentException("worker address rejected: " + ucxAddress.length + " bytes (UCX's "
                    + "address is 1 to " + MAX_UCX_ADDRESS + " bytes)");
        }
        return ucxAddress.clone();
    }
}
