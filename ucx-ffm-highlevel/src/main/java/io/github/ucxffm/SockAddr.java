package io.github.ucxffm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

/** Conversion between {@link InetSocketAddress} and Linux's {@code struct sockaddr_in}/{@code sockaddr_in6}. */
final class SockAddr {

    static final short AF_INET = 2;
    static final short AF_INET6 = 10;
    static final int SOCKADDR_IN_SIZE = 16;
    static final int SOCKADDR_IN6_SIZE = 28;

    /**
     * The system property that lets {@link #requireIpv4} pass IPv6 addresses, for a UCX release that sets up IPv6
     * connections safely; {@code true} to allow.
     */
    static final String ALLOW_IPV6_PROPERTY = "ucxffm.sockaddr.ipv6";

    private SockAddr() {
    }

    /**
     * Refuses an IPv6 address for UCX's client-server connection setup unless {@value #ALLOW_IPV6_PROPERTY} is
     * {@code true}. UCX 1.13.1, 1.18.1 and 1.23.0~rc1 corrupt their heap when a server accepts a connection made to
     * {@code ::1} over tcp (glibc then aborts the process: "malloc(): invalid size", reproduced with a C program on
     * the UCP API alone, see docs/UCX-BEHAVIOUR.md), and report other IPv6 destinations unreachable. A
     * {@link java.net.Inet4Address} (also what Java makes of an IPv4-mapped IPv6 literal) passes.
     *
     * @param address the listener's or the server's address
     * @param what    what it is for, for the message
     * @return {@code address}
     * @throws IllegalArgumentException for an IPv6 address, unless allowed
     */
    static InetSocketAddress requireIpv4(InetSocketAddress address, String what) {
        if (address.getAddress() instanceof Inet6Address && !Boolean.getBoolean(ALLOW_IPV6_PROPERTY)) {
            throw new IllegalArgumentException(what + " " + address + " is IPv6: UCX's connection setup over IPv6 "
                    + "corrupts UCX's heap when the server accepts (UCX 1.13 to 1.23 over ::1; other IPv6 "
                    + "destinations are unreachable), so ucx-ffm refuses it; use an IPv4 address (127.0.0.1 for "
                    + "loopback), or -D" + ALLOW_IPV6_PROPERTY + "=true with a UCX release known to be fixed");
        }
        return address;
    }

    /** Writes {@code address} as a sockaddr into memory from {@code allocator}; its size is the segment's. */
    static MemorySegment of(InetSocketAddress address, SegmentAllocator allocator) {
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address " + address);
        }
        InetAddress ip = address.getAddress();
        int port = address.getPort();
        if (ip instanceof Inet4Address) {
            MemorySegment s = allocator.allocate(SOCKADDR_IN_SIZE, 4);
            s.fill((byte) 0);
            s.set(JAVA_SHORT_UNALIGNED, 0, AF_INET);
            s.set(JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) port);
            MemorySegment.copy(ip.getAddress(), 0, s, JAVA_BYTE, 4, 4);
            return s;
        }
        MemorySegment s = allocator.allocate(SOCKADDR_IN6_SIZE, 4);
        s.fill((byte) 0);
        s.set(JAVA_SHORT_UNALIGNED, 0, AF_INET6);
        s.set(JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) port);
        MemorySegment.copy(ip.getAddress(), 0, s, JAVA_BYTE, 8, 16);
        if (ip instanceof Inet6Address v6) {
            s.set(JAVA_INT_UNALIGNED, 24, v6.getScopeId());
        }
        return s;
    }

    /** Reads a sockaddr (from a {@code sockaddr_storage}); {@code null} for families other than IPv4/IPv6. */
    static InetSocketAddress read(MemorySegment storage) {
        short family = storage.get(JAVA_SHORT_UNALIGNED, 0);
        int port = Short.toUnsignedInt(storage.get(JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 2));
        try {
            if (family == AF_INET) {
                byte[] ip = storage.asSlice(4, 4).toArray(JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(ip), port);
            }
            if (family == AF_INET6) {
                byte[] ip = storage.asSlice(8, 16).toArray(JAVA_BYTE);
                int scope = storage.get(JAVA_INT_UNALIGNED, 24);
                return new InetSocketAddress(Inet6Address.getByAddress(null, ip, scope), port);
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // cannot happen for addresses of the right length
        }
        return null;
    }
}
