package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static io.github.ucxffm.UcpContext.Feature.AMO32;
import static io.github.ucxffm.UcpContext.Feature.AMO64;
import static io.github.ucxffm.UcpContext.Feature.RMA;
import static io.github.ucxffm.UcpContext.Feature.TAG;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Put and get through {@link UcpEndpoint} over shared memory, tcp and self, with the remote region registered from
 * an arena ({@link UcpContext#register}) or allocated by UCX ({@link UcpContext#allocate(long)}); remote keys and
 * their checks; {@code ucp_rkey_ptr} windows; and the lifetime rules of registered memory used by operations in
 * flight. Every transfer is checked byte for byte, including the bytes around it that must not change.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RmaTest {

    private static final int MIB = 1 << 20;
    private static final long REGION = 4L * MIB + 4096;
    private static final int[] SIZES = {8, 64, 4096, 65536, MIB, 4 * MIB};

    /** Where the remote region comes from. */
    enum Region { REGISTERED, ALLOCATED }

    private Arena arena;
    private TwoWorkers peers;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() {
        if (peers != null) {
            peers.close();
        }
        arena.close();
    }

    private void open(RmaPeers.Mode mode) {
        peers = RmaPeers.open(mode, RMA, AMO32, AMO64, TAG);
    }

    private UcpMemory remote(Region kind, long size) {
        return kind == Region.REGISTERED ? peers.context.register(arena.allocate(size, 64))
                : peers.context.allocate(size);
    }

    private static void assertSameBytes(MemorySegment expected, MemorySegment actual, String what) {
        assertEquals(expected.byteSize(), actual.byteSize(), what + ": size");
        long at = expected.mismatch(actual);
        if (at != -1) {
            fail(what + ": first difference at byte " + at + " of " + expected.byteSize() + ": expected "
                    + expected.get(JAVA_BYTE, at) + ", was " + actual.get(JAVA_BYTE, at));
        }
    }

    // ---- data ----------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @EnumSource(RmaPeers.Mode.class)
    void shouldPutThenGetAtEveryOffsetAndSizeByteForByte(RmaPeers.Mode mode) {
        open(mode);
        MemorySegment baseline = arena.allocate(REGION);
        BytePattern.fill(baseline, 42);
        MemorySegment expectedRemote = arena.allocate(REGION);
        UcpMemory localSrc = peers.context.allocate(4L * MIB + 16);
        UcpMemory localDst = peers.context.allocate(4L * MIB + 16);
        int cases = 0;
        for (Region kind : Region.values()) {
            UcpMemory target = remote(kind, REGION);
            UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
            MemorySegment remote = target.segment();
            long base = target.address();
            for (int size : SIZES) {
                for (long offset : new long[] {0, 8, 13, REGION - size}) {
                    for (boolean registeredLocal : new boolean[] {false, true}) {
                        String what = mode + " " + kind + " remote, " + (registeredLocal ? "UcpMemory" : "segment")
                                + " local, " + size + " bytes at +" + offset;
                        remote.copyFrom(baseline);
                        MemorySegment src = registeredLocal ? localSrc.segment() : arena.allocate(size + 16L);
                        BytePattern.fill(src, size * 31L + offset);
                        long srcOffset = 5;
                        if (registeredLocal) {
                            peers.await(peers.ab.put(localSrc, srcOffset, size, base + offset, key));
                        } else {
                            peers.await(peers.ab.put(src, srcOffset, size, base + offset, key));
                        }
                        peers.flush();
                        expectedRemote.copyFrom(baseline);
                        MemorySegment.copy(src, srcOffset, expectedRemote, offset, size);
                        assertSameBytes(expectedRemote, remote, what + ": remote region after put");

                        MemorySegment dst = registeredLocal ? localDst.segment() : arena.allocate(size + 16L);
                        dst.fill((byte) 0xEE);
                        long dstOffset = 3;
                        if (registeredLocal) {
                            peers.await(peers.ab.get(localDst, dstOffset, size, base + offset, key));
                        } else {
                            peers.await(peers.ab.get(dst, dstOffset, size, base + offset, key));
                        }
                        assertSameBytes(src.asSlice(srcOffset, size), dst.asSlice(dstOffset, size), what + ": get");
                        for (long i = 0; i < dstOffset; i++) {
                            assertEquals((byte) 0xEE, dst.get(JAVA_BYTE, i), what + ": byte before the get");
                        }
                        assertEquals((byte) 0xEE, dst.get(JAVA_BYTE, dstOffset + size), what + ": byte after");
                        cases++;
                    }
                }
            }
            key.close();
        }
        assertEquals(Region.values().length * SIZES.length * 4 * 2, cases);
        assertEquals(0, localSrc.operationsInFlight());
        assertEquals(0, localDst.operationsInFlight());
        assertEquals(0, peers.a.inFlightCount());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RmaPeers.Mode.class)
    void shouldCompletePutAndGetThroughCallbacksAndFutures(RmaPeers.Mode mode) {
        open(mode);
        int size = 256 * 1024;
        UcpMemory target = remote(Region.ALLOCATED, size * 4L);
        UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
        MemorySegment remote = target.segment();
        remote.fill((byte) 0);
        long base = target.address();
        MemorySegment src = arena.allocate(size);
        BytePattern.fill(src, 7);
        UcpMemory local = peers.context.register(arena.allocate(size, 64));
        BytePattern.fill(local.segment(), 8);

        AtomicInteger calls = new AtomicInteger();
        AtomicLong statuses = new AtomicLong();
        AtomicLong lengths = new AtomicLong();
        UcpCallback cb = (status, length, tag) -> {
            calls.incrementAndGet();
            statuses.addAndGet(Math.abs(status));
            lengths.addAndGet(length + Math.abs(tag));
        };
        peers.ab.put(src, 0, size, base, key, cb);
        peers.ab.put(local, 0, size, base + size, key, cb);
        peers.awaitCondition(() -> calls.get() == 2, "put callbacks");
        CompletableFuture<Long> f1 = peers.ab.putAsync(src, 0, size, base + 2L * size, key);
        CompletableFuture<Long> f2 = peers.ab.putAsync(local, 0, size, base + 3L * size, key);
        assertEquals(size, peers.await(f1));
        assertEquals(size, peers.await(f2));
        peers.flush();
        assertSameBytes(src, remote.asSlice(0, size), "callback put");
        assertSameBytes(local.segment(), remote.asSlice(size, size), "callback put from UcpMemory");
        assertSameBytes(src, remote.asSlice(2L * size, size), "future put");
        assertSameBytes(local.segment(), remote.asSlice(3L * size, size), "future put from UcpMemory");

        MemorySegment dst = arena.allocate(size);
        UcpMemory localDst = peers.context.allocate(size);
        peers.ab.get(dst, 0, size, base + size, key, cb);
        peers.ab.get(localDst, 0, size, base, key, cb);
        peers.awaitCondition(() -> calls.get() == 4, "get callbacks");
        assertSameBytes(local.segment(), dst, "callback get");
        assertSameBytes(src, localDst.segment(), "callback get into UcpMemory");
        dst.fill((byte) 0);
        localDst.segment().fill((byte) 0);
        assertEquals(size, peers.await(peers.ab.getAsync(dst, 0, size, base + 2L * size, key)));
        assertEquals(size, peers.await(peers.ab.getAsync(localDst, 0, size, base + 3L * size, key)));
        assertSameBytes(src, dst, "future get");
        assertSameBytes(local.segment(), localDst.segment(), "future get into UcpMemory");

        assertEquals(4, calls.get(), "each callback runs once");
        assertEquals(0, statuses.get(), "callback statuses");
        assertEquals(0, lengths.get(), "RMA callbacks report length and tag 0");
        assertEquals(0, local.operationsInFlight());
        assertEquals(0, localDst.operationsInFlight());
        // completed operations released the memory: it can be unmapped
        local.close();
        localDst.close();
    }

    // ---- bounds ----------------------------------------------------------------------------------------------------

    @Test
    void shouldRefuseRangesOutsideTheRegionsBeforeUcx() {
        open(RmaPeers.Mode.SHM);
        int size = 4096;
        UcpMemory target = remote(Region.REGISTERED, size);
        UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
        MemorySegment remote = target.segment();
        BytePattern.fill(remote, 1);
        MemorySegment before = arena.allocate(size);
        before.copyFrom(remote);
        long base = target.address();
        MemorySegment buf = arena.allocate(2L * size);
        BytePattern.fill(buf, 2);
        MemorySegment bufBefore = arena.allocate(2L * size);
        bufBefore.copyFrom(buf);
        UcpMemory local = peers.context.allocate(2L * size);
        UcpEndpoint ep = peers.ab;
        UcpCallback never = (s, l, t) -> fail("callback of a refused operation ran");

        long[][] outside = {
            {base - 1, 8}, {base - size, 8}, {base + size - 7, 8}, {base + size, 1}, {base, size + 1L},
            {base + 1, size}, {base, -1}, {Long.MAX_VALUE - 3, 8}, {base + 8, Long.MAX_VALUE}, {0, 8},
        };
        for (long[] r : outside) {
            long addr = r[0];
            long len = r[1];
            String what = "remote [" + Long.toHexString(addr) + ", +" + len + ")";
            assertThrows(IndexOutOfBoundsException.class, () -> ep.put(buf, 0, len, addr, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.get(buf, 0, len, addr, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.put(local, 0, len, addr, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.get(local, 0, len, addr, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.put(buf, 0, len, addr, key, never), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.get(local, 0, len, addr, key, never), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.putAsync(buf, 0, len, addr, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.getAsync(local, 0, len, addr, key), what);
        }
        // local ranges outside the local buffer, with a valid remote range
        long[][] localOutside = {{-1, 8}, {2L * size - 7, 8}, {2L * size + 1, 0}, {8, 2L * size}};
        for (long[] r : localOutside) {
            String what = "local [" + r[0] + ", +" + r[1] + ")";
            assertThrows(IndexOutOfBoundsException.class, () -> ep.put(buf, r[0], r[1], base, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.get(buf, r[0], r[1], base, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.put(local, r[0], r[1], base, key), what);
            assertThrows(IndexOutOfBoundsException.class, () -> ep.getAsync(local, r[0], r[1], base, key), what);
        }
        peers.flush();
        assertSameBytes(before, remote, "remote region after refused operations");
        assertSameBytes(bufBefore, buf, "local buffer after refused gets");
        assertEquals(0, peers.a.inFlightCount(), "refused operations left requests");
        assertEquals(0, local.operationsInFlight(), "refused operations left the memory in use");

        // the edges themselves are fine
        peers.await(ep.put(buf, 0, 8, base + size - 8, key));
        assertEquals(UcpWorker.COMPLETED, ep.put(buf, 0, 0, base + size, key), "empty put at the end");
        peers.flush();
        assertSameBytes(buf.asSlice(0, 8), remote.asSlice(size - 8, 8), "last word");
        local.close();
    }

    // ---- remote keys -----------------------------------------------------------------------------------------------

    @Test
    void shouldRejectTruncatedRandomAndForeignKeyBytes() {
        open(RmaPeers.Mode.SHM);
        UcpMemory target = remote(Region.REGISTERED, 4096);
        byte[] packed = target.packRemoteKey();
        UcpEndpoint ep = peers.ab;

        assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(null));
        for (int n = 0; n < packed.length; n++) {
            byte[] truncated = java.util.Arrays.copyOf(packed, n);
            assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(truncated), "truncated to " + n);
        }
        byte[] extended = java.util.Arrays.copyOf(packed, packed.length + 1);
        assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(extended), "one byte too many");

        Random random = new Random(99);
        for (int i = 0; i < 500; i++) {
            byte[] junk = new byte[i < 250 ? packed.length : 1 + random.nextInt(4 * packed.length)];
            random.nextBytes(junk);
            if (i % 2 == 0) {
                System.arraycopy(packed, 0, junk, 0, Math.min(8, junk.length)); // right magic and version
            }
            assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(junk), "random key " + i);
        }
        for (int bit = 0; bit < packed.length * 8; bit++) {
            byte[] flipped = packed.clone();
            flipped[bit / 8] ^= (byte) (1 << (bit % 8));
            assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(flipped), "bit " + bit + " flipped");
        }
        // UCX's own key bytes, without ucx-ffm's header
        byte[] raw = target.packRawRemoteKey();
        assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(raw), "raw UCX key");
        // another region's UCX key under this region's header
        UcpMemory other = remote(Region.REGISTERED, 4096);
        byte[] otherPacked = other.packRemoteKey();
        byte[] spliced = packed.clone();
        System.arraycopy(otherPacked, UcpRemoteKey.HEADER, spliced, UcpRemoteKey.HEADER,
                Math.min(otherPacked.length, spliced.length) - UcpRemoteKey.HEADER);
        if (!java.util.Arrays.equals(spliced, packed)) {
            assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(spliced), "spliced key");
        }
        assertEquals(0, peers.a.inFlightCount());

        // the genuine key still works
        UcpRemoteKey key = ep.unpackRemoteKey(packed);
        assertEquals(target.address(), key.base());
        assertEquals(4096, key.length());
        MemorySegment src = arena.allocate(64);
        BytePattern.fill(src, 5);
        peers.await(ep.put(src, 0, 64, target.address() + 64, key));
        peers.flush();
        assertSameBytes(src, target.segment().asSlice(64, 64), "put with the genuine key");
    }

    @Test
    void shouldRefuseMisusedKeysEndpointsAndContexts() throws Exception {
        open(RmaPeers.Mode.SHM);
        UcpMemory target = remote(Region.ALLOCATED, 4096);
        target.segment().fill((byte) 0x11);
        long base = target.address();
        UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
        UcpEndpoint other = peers.connectAgain();
        UcpRemoteKey otherKey = other.unpackRemoteKey(target.packRemoteKey());
        assertSame(other, otherKey.endpoint());
        MemorySegment buf = arena.allocate(64);
        UcpMemory local = peers.context.allocate(64);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> peers.ab.put(buf, 0, 8, base, otherKey));
        assertTrue(e.getMessage().contains("another endpoint"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> peers.ab.get(buf, 0, 8, base, otherKey));
        assertThrows(IllegalArgumentException.class, () -> peers.ab.put(local, 0, 8, base, otherKey));
        assertThrows(IllegalArgumentException.class, () -> peers.ab.getAsync(buf, 0, 8, base, otherKey));
        assertThrows(IllegalArgumentException.class, () -> other.put(buf, 0, 8, base, key, (s, l, t) -> { }));
        assertEquals(0, local.operationsInFlight());
        assertThrows(NullPointerException.class, () -> peers.ab.put(buf, 0, 8, base, null));
        assertThrows(NullPointerException.class, () -> peers.ab.put(buf, 0, 8, base, key, null));
        assertThrows(IllegalArgumentException.class,
                () -> peers.ab.put(MemorySegment.ofArray(new byte[64]), 0, 8, base, key), "heap buffer");

        // wrong thread
        CompletableFuture<Throwable> elsewhere = CompletableFuture.supplyAsync(() -> {
            try {
                peers.ab.put(buf, 0, 8, base, key);
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertTrue(elsewhere.get() instanceof IllegalStateException, String.valueOf(elsewhere.get()));

        // closed key, closed endpoint (which closes its keys)
        otherKey.close();
        otherKey.close();
        assertThrows(IllegalStateException.class, () -> other.put(buf, 0, 8, base, otherKey));
        assertThrows(IllegalStateException.class, () -> other.get(local, 0, 8, base, otherKey));
        UcpRemoteKey third = other.unpackRemoteKey(target.packRemoteKey());
        other.close();
        assertThrows(IllegalStateException.class, () -> other.put(buf, 0, 8, base, third));
        assertThrows(IllegalStateException.class, () -> third.pointer(base, 8));
        assertEquals(0, local.operationsInFlight());

        // a context without RMA
        try (TwoWorkers tagOnly = RmaPeers.open(RmaPeers.Mode.SHM, TAG, AMO64)) {
            IllegalStateException noRma = assertThrows(IllegalStateException.class,
                    () -> tagOnly.ab.put(buf, 0, 8, base, key));
            assertTrue(noRma.getMessage().contains("UcpContext.Feature.RMA"), noRma.getMessage());
            assertThrows(IllegalStateException.class, () -> tagOnly.ab.getAsync(buf, 0, 8, base, key));
        }
        peers.flush();
        for (long i = 0; i < 4096; i++) {
            assertEquals((byte) 0x11, target.segment().get(JAVA_BYTE, i), "remote byte " + i);
        }
        assertEquals(0, peers.a.inFlightCount());
    }

    // ---- rkey_ptr -------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @EnumSource(Region.class)
    void shouldLoadAndStoreThroughRkeyPtrUntilTheKeyCloses(Region kind) {
        open(RmaPeers.Mode.SHM);
        UcpMemory target = remote(kind, 8192);
        MemorySegment remote = target.segment();
        remote.fill((byte) 0);
        UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
        long base = target.address();
        MemorySegment window;
        try {
            window = key.pointer(base + 4096, 256);
        } catch (UnsupportedOperationException e) {
            System.out.println("SKIPPED rkey_ptr on " + kind + " memory: " + e.getMessage());
            Assumptions.abort("ucp_rkey_ptr is not available for " + kind + " memory over shared memory here: "
                    + e.getMessage());
            return;
        }
        assertEquals(256, window.byteSize());
        assertThrows(IndexOutOfBoundsException.class, () -> key.pointer(base + 8192 - 8, 16));
        assertThrows(IndexOutOfBoundsException.class, () -> key.pointer(base - 8, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> window.get(JAVA_BYTE, 256), "window is bounded");

        window.set(JAVA_LONG, 8, 0x1122_3344_5566_7788L);
        assertEquals(0x1122_3344_5566_7788L, remote.get(JAVA_LONG, 4096 + 8), "store through the window");
        remote.set(JAVA_LONG, 4096 + 248, 0x0BAD_CAFE_F00D_BEEFL);
        assertEquals(0x0BAD_CAFE_F00D_BEEFL, window.get(JAVA_LONG, 248), "load through the window");
        MemorySegment src = arena.allocate(32);
        BytePattern.fill(src, 3);
        peers.await(peers.ab.put(src, 0, 32, base + 4096 + 64, key));
        peers.flush();
        assertSameBytes(src, window.asSlice(64, 32), "a put seen through the window");
        for (long i = 0; i < 4096; i++) {
            assertEquals(0, remote.get(JAVA_BYTE, i), "byte outside the window " + i);
        }

        key.close();
        assertThrows(IllegalStateException.class, () -> window.get(JAVA_LONG, 8), "window after the key closed");
        assertThrows(IllegalStateException.class, () -> window.set(JAVA_LONG, 8, 1), "window after the key closed");
        assertThrows(IllegalStateException.class, () -> key.pointer(base, 8));
        assertEquals(0x1122_3344_5566_7788L, remote.get(JAVA_LONG, 4096 + 8), "memory itself is intact");
    }

    @Test
    void shouldReportRkeyPtrUnsupportedOverTcp() {
        open(RmaPeers.Mode.TCP);
        UcpMemory target = remote(Region.ALLOCATED, 4096);
        UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> key.pointer(target.address(), 8));
        assertTrue(e.getMessage().contains("ucp_rkey_ptr"), e.getMessage());
    }

    // ---- lifetimes of registered memory -----------------------------------------------------------------------------

    @Test
    void shouldRefuseToUnmapMemoryWhileAPutUsesIt() {
        open(RmaPeers.Mode.TCP); // software RMA: a large put stays in flight until both workers progress
        long size = 4L * MIB;
        UcpMemory target = remote(Region.ALLOCATED, size);
        UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
        UcpMemory local = peers.context.allocate(size);
        BytePattern.fill(local.segment(), 77);

        long token = peers.ab.put(local, 0, size, target.address(), key);
        assertNotEquals(UcpWorker.COMPLETED, token, "a 4 MiB put over tcp is expected to stay in flight");
        assertEquals(1, local.operationsInFlight());
        IllegalStateException refused = assertThrows(IllegalStateException.class, local::close);
        assertTrue(refused.getMessage().contains("in flight"), refused.getMessage());
        assertEquals(size, local.segment().byteSize(), "still mapped after the refused close");
        peers.await(token);
        assertEquals(0, local.operationsInFlight());
        peers.flush();
        assertSameBytes(local.segment(), target.segment(), "the put completed intact");

        // the same with a callback get and a future put
        AtomicInteger done = new AtomicInteger();
        long half = size / 2;
        peers.ab.get(local, 0, half, target.address(), key, (s, l, t) -> done.incrementAndGet());
        CompletableFuture<Long> putting = peers.ab.putAsync(local, half, half, target.address() + half, key);
        if (done.get() == 0 || !putting.isDone()) {
            assertThrows(IllegalStateException.class, local::close);
        }
        assertEquals(2 - done.get() - (putting.isDone() ? 1 : 0), local.operationsInFlight());
        peers.awaitCondition(() -> done.get() == 1, "get callback");
        assertEquals(half, peers.await(putting));
        assertEquals(0, local.operationsInFlight());

        local.close();
        assertThrows(IllegalStateException.class, local::segment);
        assertThrows(IllegalStateException.class, () -> peers.ab.put(local, 0, 8, target.address(), key));
    }

    @Test
    void shouldThrowInsteadOfCrashingWhenAllocatedMemoryIsUsedAfterClose() {
        open(RmaPeers.Mode.SHM);
        UcpMemory m = peers.context.allocate(4096);
        MemorySegment seg = m.segment();
        seg.set(JAVA_LONG, 0, 42);
        assertEquals(42, seg.get(JAVA_LONG, 0));
        m.close();
        m.close();
        assertThrows(IllegalStateException.class, m::segment);
        assertThrows(IllegalStateException.class, () -> seg.get(JAVA_LONG, 0), "the old segment after unmap");
        assertThrows(IllegalStateException.class, () -> seg.set(JAVA_LONG, 0, 1), "the old segment after unmap");
        assertThrows(IllegalStateException.class, m::packRemoteKey);
        UcpMemory target = remote(Region.ALLOCATED, 4096);
        UcpRemoteKey key = peers.ab.unpackRemoteKey(target.packRemoteKey());
        assertThrows(IllegalStateException.class, () -> peers.ab.put(m, 0, 8, target.address(), key));
        assertThrows(IllegalStateException.class, () -> peers.ab.getAsync(m, 0, 8, target.address(), key));
        assertEquals(0, peers.a.inFlightCount());
    }
}
