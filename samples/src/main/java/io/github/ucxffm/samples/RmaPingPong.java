package io.github.ucxffm.samples;

import io.github.ucxffm.UcpAtomicOp;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpMemory;
import io.github.ucxffm.UcpRemoteKey;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Locale;
import java.util.zip.CRC32C;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One-sided latency: the client puts, gets and atomically adds into the server's memory while the server only
 * progresses; at the end the server checks that its memory holds what the client wrote.
 * <p>
 * <b>Wire protocol.</b> Integers in messages are little-endian. {@code size} is {@code --size} (at least 1; both sides
 * must use the same), {@code total} is {@code --warmup + --iterations}.
 * <ol>
 * <li>The server allocates one region with UCX ({@code UcpContext.allocate}) of {@link #regionSize(long)
 * align8(2 size) + 8} bytes and zero-fills it: slot 0 is bytes {@code [0, size)}, slot 1 bytes
 * {@code [size, 2 size)}, and the 64-bit counter (native byte order, starting at 0) is at offset
 * {@code align8(2 size)}, where {@code align8} rounds up to a multiple of 8.</li>
 * <li>The server speaks first: one tag message, tag {@value #TAG_KEY}, holding the region's remote key in
 * ucx-ffm's checked format ({@link UcpRemoteKey#FORMAT}: a 32-byte header with the region's address and length,
 * then UCX's key bytes), at most {@value #MAX_KEY} bytes. The client refuses a region whose length is not
 * {@code align8(2 size) + 8}.</li>
 * <li>Put: for {@code i} in {@code [0, total)}, the client puts {@code size} bytes of payload {@code i} into slot
 * {@code i mod 2} ({@code ucp_put_nbx}), then flushes the endpoint; one put and its flush make one sample. Payload
 * byte {@code j} is {@code (byte) (31 j + 7)}, except that the first {@code min(8, size)} bytes hold {@code i + 1}
 * (little-endian, truncated) and, when {@code size >= 16}, the last 8 bytes hold {@code ~(i + 1)}.</li>
 * <li>Get: for {@code i} in {@code [0, total)}, the client gets slot {@code i mod 2} ({@code ucp_get_nbx}) and
 * checks it holds the last payload it put there (zeros for a slot never put).</li>
 * <li>Atomic: for {@code i} in {@code [0, total)}, the client does a fetching 64-bit add of {@value #DELTA} to the
 * counter ({@code ucp_atomic_op_nbx}, {@code UCP_ATOMIC_OP_ADD} with a result buffer) and checks the old value is
 * {@code i * DELTA} (mod 2<sup>64</sup>).</li>
 * <li>Verify: the client sends tag {@value #TAG_VERIFY} with 16 bytes: the counter value it expects (int64), the
 * CRC-32C of the {@code 2 size} bytes of both slots it expects (uint32), 4 zero bytes. The server answers with tag
 * {@value #TAG_VERIFIED} and the same 16-byte layout holding what it finds. Each side prints {@code verified} when
 * the two match and otherwise fails with status 1. That ends the run; both close.</li>
 * </ol>
 * A client that gives up after receiving the key (a size mismatch, a wrong byte) sends an empty tag
 * {@value #TAG_VERIFY} message instead; the server answers with an empty tag {@value #TAG_VERIFIED} message (so the
 * client knows it arrived before closing) and ends with status 1. The server does nothing but progress between the
 * key and the verify request; it waits for the client's run at most {@link #RUN_TIMEOUT_MILLIS} ms.
 */
public final class RmaPingPong {

    /** Server to client: the packed remote key ({@code 0x524D414B}, "RMAK"). */
    public static final long TAG_KEY = 0x524D_414BL;
    /** Client to server: the expected counter and CRC-32C, or nothing when the client gave up ({@code 0x524D4156}). */
    public static final long TAG_VERIFY = 0x524D_4156L;
    /** Server to client: the counter and CRC-32C found ({@code 0x524D4152}). */
    public static final long TAG_VERIFIED = 0x524D_4152L;
    /** Largest packed key the client accepts: the checked header and 64 KiB of UCX key. */
    public static final int MAX_KEY = 32 + 64 * 1024;
    /** Length of the verify request and its answer. */
    public static final int VERIFY_LENGTH = 16;
    /** What each atomic adds: one in each 32-bit half, so that a 32-bit atomic would show. */
    public static final long DELTA = 0x1_0000_0001L;
    /** How long the server waits for the client's run (without peer error handling a dead client may go unnoticed). */
    public static final long RUN_TIMEOUT_MILLIS = 600_000;

    private static final ValueLayout.OfLong LE_LONG =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final String NAME = "rma-pingpong";

    private RmaPingPong() {
    }

    /**
     * The length of the server's region for a payload size: both slots, rounded up to 8 bytes, and the counter.
     *
     * @param size the payload size
     * @return bytes
     */
    public static long regionSize(long size) {
        return counterOffset(size) + 8;
    }

    static long counterOffset(long size) {
        return (2 * size + 7) & ~7L;
    }

    static void run(String[] args) {
        SampleOptions o = SampleOptions.parse(args);
        if (o.size() < 1) {
            throw SampleException.usage("--size must be at least 1 for " + NAME);
        }
        try (Arena arena = Arena.ofConfined(); // freed last: after the worker, which may still write into it
             Session s = Session.open(NAME, o, UcpContext.Feature.TAG, UcpContext.Feature.RMA,
                UcpContext.Feature.AMO64)) {
            try {
                if (o.server()) {
                    serve(s, arena);
                } else {
                    new Client(s, arena).run();
                }
            } catch (UcxException e) {
                throw s.failure(e);
            }
        }
    }

    // ---- server -----------------------------------------------------------------------------------------------

    private static void serve(Session s, Arena arena) {
        long size = s.options.size();
        long bytes = regionSize(size);
        UcpWorker w = s.worker;
        try (UcpMemory region = s.allocate(bytes, "the region")) {
            MemorySegment memory = region.segment();
            memory.fill((byte) 0);
            byte[] key = region.packRemoteKey();
            MemorySegment keyBuffer = arena.allocateFrom(JAVA_BYTE, key);
            MemorySegment request = arena.allocate(VERIFY_LENGTH);
            long verify = w.receiveTag(request, 0, VERIFY_LENGTH, TAG_VERIFY, -1L);
            s.await(s.endpoint.sendTag(keyBuffer, 0, key.length, TAG_KEY), "sending the remote key");
            System.out.printf(Locale.ROOT, "%s: sent the key of a %d-byte region; serving the client's run%n", NAME,
                    bytes);
            awaitRun(s, verify);
            if (w.receivedLength() != VERIFY_LENGTH) {
                s.await(s.endpoint.sendTag(request, 0, 0, TAG_VERIFIED), "acknowledging the end of the run");
                throw SampleException.failed("the client ended the run without asking for verification");
            }
            long counter = memory.get(JAVA_LONG, counterOffset(size));
            int crc = crc32c(memory.asSlice(0, 2 * size));
            long expectedCounter = request.get(LE_LONG, 0);
            int expectedCrc = request.get(LE_INT, 8);
            MemorySegment answer = arena.allocate(VERIFY_LENGTH);
            answer.set(LE_LONG, 0, counter);
            answer.set(LE_INT, 8, crc);
            s.await(s.endpoint.sendTag(answer, 0, VERIFY_LENGTH, TAG_VERIFIED), "answering the verify request");
            if (counter != expectedCounter || crc != expectedCrc) {
                throw SampleException.failed(mismatch("the region", crc, expectedCrc, counter, expectedCounter));
            }
            System.out.printf(Locale.ROOT, "%s: verified: slots CRC-32C 0x%08x and counter %d match the client's%n",
                    NAME, crc, counter);
        }
    }

    /**
     * Progresses until the verify request arrives, for up to {@link #RUN_TIMEOUT_MILLIS}: in one-second slices, so
     * that the session's step timeout does not apply to the whole run while it still reports a lost client.
     */
    private static void awaitRun(Session s, long request) {
        long deadline = System.nanoTime() + RUN_TIMEOUT_MILLIS * 1_000_000L;
        boolean[] done = new boolean[1];
        while (!done[0]) {
            long slice = System.nanoTime() + 1_000_000_000L;
            // idempotent: awaitCondition may ask again after the request was released
            s.awaitCondition(() -> done[0] || (done[0] = s.worker.poll(request)) || System.nanoTime() - slice > 0,
                    "serving the client's run");
            if (!done[0] && System.nanoTime() - deadline > 0) {
                throw SampleException.failed("the client's run did not end within " + RUN_TIMEOUT_MILLIS / 1000
                        + " s");
            }
        }
    }

    private static String mismatch(String where, int crc, int expectedCrc, long counter, long expectedCounter) {
        return String.format(Locale.ROOT, "%s does not hold what the client wrote: slots CRC-32C 0x%08x (expected "
                + "0x%08x), counter %d (expected %d)", where, crc, expectedCrc, counter, expectedCounter);
    }

    /** CRC-32C of a segment of any length. */
    static int crc32c(MemorySegment segment) {
        CRC32C crc = new CRC32C();
        long chunk = 1L << 30;
        for (long at = 0; at < segment.byteSize(); at += chunk) {
            crc.update(segment.asSlice(at, Math.min(chunk, segment.byteSize() - at)).asByteBuffer());
        }
        return (int) crc.getValue();
    }

    // ---- client -----------------------------------------------------------------------------------------------

    private static final class Client {
        private final Session s;
        private final Arena arena;
        private final UcpWorker w;
        private final UcpEndpoint ep;
        private final long size;
        private final long warmup;
        private final long total;
        private boolean verifySent;

        Client(Session s, Arena arena) {
            this.s = s;
            this.arena = arena;
            this.w = s.worker;
            this.ep = s.endpoint;
            this.size = s.options.size();
            this.warmup = s.options.warmup();
            this.total = s.options.warmup() + s.options.iterations();
        }

        void run() {
            MemorySegment keyBuffer = arena.allocate(MAX_KEY);
            s.await(w.receiveTag(keyBuffer, 0, MAX_KEY, TAG_KEY, -1L), "waiting for the server's remote key");
            byte[] packed = keyBuffer.asSlice(0, w.receivedLength()).toArray(JAVA_BYTE);
            try {
                measure(packed);
            } catch (SampleException e) {
                if (!verifySent) {
                    giveUp();
                }
                throw e;
            }
        }

        /** Tells the server the run ends without verification, and waits for its answer; it may be gone already. */
        private void giveUp() {
            try {
                MemorySegment empty = arena.allocate(VERIFY_LENGTH);
                long answer = w.receiveTag(empty, 0, VERIFY_LENGTH, TAG_VERIFIED, -1L);
                w.await(ep.sendTag(empty, 0, 0, TAG_VERIFY), Duration.ofSeconds(2), s.idle());
                w.await(answer, Duration.ofSeconds(2), s.idle());
            } catch (RuntimeException ignored) {
                // best effort: the server then notices the client going away instead
            }
        }

        private void measure(byte[] packed) {
            UcpRemoteKey rkey;
            try {
                rkey = ep.unpackRemoteKey(packed);
            } catch (IllegalArgumentException | UcxException e) {
                throw SampleException.failed("the server's remote key is unusable: " + e.getMessage());
            }
            if (rkey.length() != regionSize(size)) {
                throw SampleException.failed("the server's region is " + rkey.length() + " bytes, not the "
                        + regionSize(size) + " of --size " + size + " (both sides must use the same --size)");
            }
            try (rkey; UcpMemory local = s.allocate(2 * size, "the local buffers")) {
                MemorySegment expected = arena.allocate(2 * size); // zeroed, as the server's slots
                OperationLatency put = put(rkey, local, expected);
                OperationLatency get = get(rkey, local, expected);
                OperationLatency add = fetchAdd(rkey);
                long counter = total * DELTA;
                int crc = crc32c(expected);
                String transports = s.transports();
                report(transports, put, get, add);
                verify(counter, crc);
            }
        }

        private OperationLatency put(UcpRemoteKey rkey, UcpMemory local, MemorySegment expected) {
            OperationLatency latency = new OperationLatency("put+flush");
            MemorySegment source = local.segment().asSlice(0, size);
            for (long j = 0; j < size; j++) {
                source.set(JAVA_BYTE, j, (byte) (31 * j + 7));
            }
            for (long i = 0; i < total; i++) {
                if (i == warmup) {
                    latency.start();
                }
                stamp(source, i);
                long slot = (i & 1) * size;
                long t0 = System.nanoTime();
                long put = ep.put(local, 0, size, rkey.base() + slot, rkey);
                long flush = ep.flush();
                s.await(put, "putting");
                s.await(flush, "flushing a put");
                long t = System.nanoTime() - t0;
                if (i >= warmup) {
                    latency.record(t);
                }
                MemorySegment.copy(source, 0, expected, slot, size);
            }
            latency.stop();
            return latency;
        }

        private void stamp(MemorySegment source, long i) {
            long v = i + 1;
            for (int k = 0; k < Math.min(8, size); k++) {
                source.set(JAVA_BYTE, k, (byte) (v >>> (8 * k)));
            }
            if (size >= 16) {
                source.set(LE_LONG, size - 8, ~v);
            }
        }

        private OperationLatency get(UcpRemoteKey rkey, UcpMemory local, MemorySegment expected) {
            OperationLatency latency = new OperationLatency("get");
            MemorySegment destination = local.segment().asSlice(size, size);
            for (long i = 0; i < total; i++) {
                if (i == warmup) {
                    latency.start();
                }
                long slot = (i & 1) * size;
                destination.fill((byte) 0xA5); // a get that writes nothing cannot pass
                long t0 = System.nanoTime();
                s.await(ep.get(local, size, size, rkey.base() + slot, rkey), "getting");
                long t = System.nanoTime() - t0;
                if (i >= warmup) {
                    latency.record(t);
                }
                long at = MemorySegment.mismatch(destination, 0, size, expected, slot, slot + size);
                if (at >= 0) {
                    throw SampleException.failed("get " + i + " of slot " + (i & 1) + " differs at byte " + at
                            + " from what the client put there");
                }
            }
            latency.stop();
            return latency;
        }

        private OperationLatency fetchAdd(UcpRemoteKey rkey) {
            OperationLatency latency = new OperationLatency("fetch-add");
            MemorySegment operand = arena.allocate(JAVA_LONG);
            MemorySegment result = arena.allocate(JAVA_LONG);
            operand.set(JAVA_LONG, 0, DELTA);
            long counter = rkey.base() + counterOffset(size);
            long expected = 0;
            for (long i = 0; i < total; i++) {
                if (i == warmup) {
                    latency.start();
                }
                result.set(JAVA_LONG, 0, ~expected);
                long t0 = System.nanoTime();
                s.await(ep.atomic(UcpAtomicOp.ADD, operand, result, counter, rkey), "adding to the counter");
                long t = System.nanoTime() - t0;
                if (i >= warmup) {
                    latency.record(t);
                }
                long old = result.get(JAVA_LONG, 0);
                if (old != expected) {
                    throw SampleException.failed("fetch-add " + i + " returned " + old + " as the old counter, not "
                            + expected + " (the previous value + " + DELTA + ")");
                }
                expected += DELTA;
            }
            latency.stop();
            return latency;
        }

        private void report(String transports, OperationLatency put, OperationLatency get, OperationLatency add) {
            System.out.printf(Locale.ROOT, "%s: %d operations each of put+flush and get (%d bytes) and fetch-add "
                    + "(8 bytes) over %s%n", NAME, put.count(), size, transports);
            System.out.println(OperationLatency.header("ops/s", "MB/s"));
            for (OperationLatency l : new OperationLatency[] {put, get, add}) {
                long bytes = l == add ? 8 : size;
                System.out.printf(Locale.ROOT, "%s %12.1f%n", l.row(l.busyRate()), l.busyRate() * bytes / 1e6);
            }
            for (OperationLatency l : new OperationLatency[] {put, get, add}) {
                long bytes = l == add ? 8 : size;
                System.out.printf(Locale.ROOT, "RESULT sample=%s op=%s transport=%s size=%d iterations=%d "
                                + "p50_us=%.3f p90_us=%.3f p99_us=%.3f max_us=%.3f ops_per_s=%.0f mb_per_s=%.3f%n",
                        NAME, l == put ? "put" : l == get ? "get" : "fetch_add", transports, bytes, l.count(),
                        l.micros(50), l.micros(90), l.micros(99), l.maxMicros(), l.busyRate(),
                        l.busyRate() * bytes / 1e6);
            }
        }

        private void verify(long counter, int crc) {
            MemorySegment request = arena.allocate(VERIFY_LENGTH);
            request.set(LE_LONG, 0, counter);
            request.set(LE_INT, 8, crc);
            MemorySegment answer = arena.allocate(VERIFY_LENGTH);
            long reply = w.receiveTag(answer, 0, VERIFY_LENGTH, TAG_VERIFIED, -1L);
            verifySent = true;
            s.await(ep.sendTag(request, 0, VERIFY_LENGTH, TAG_VERIFY), "asking the server to verify");
            s.await(reply, "waiting for the server's verification");
            if (w.receivedLength() != VERIFY_LENGTH) {
                throw SampleException.failed("the server's verification answer is " + w.receivedLength()
                        + " bytes, not " + VERIFY_LENGTH);
            }
            long found = answer.get(LE_LONG, 0);
            int foundCrc = answer.get(LE_INT, 8);
            if (found != counter || foundCrc != crc) {
                throw SampleException.failed(mismatch("the server's region", foundCrc, crc, found, counter));
            }
            System.out.printf(Locale.ROOT, "%s: verified: the server's slots (CRC-32C 0x%08x) and counter (%d) hold "
                    + "what the client wrote%n", NAME, crc, counter);
        }
    }
}
