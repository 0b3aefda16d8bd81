package io.github.ucxffm;

import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Hostile and malformed bytes fed to every parser of the library that reads bytes from outside the process
 * (RELIABILITY.md b.3, scenarios 20 and 23; security checklist S5): worker addresses
 * ({@link UcpWorker#connect(byte[])}, {@link UcpEndpoint.Params#worker(byte[])},
 * {@link UcpWorkerAddress#ucxAddress(byte[])}) and packed remote keys ({@link UcpEndpoint#unpackRemoteKey(byte[])}).
 * UCX parses neither safely: its parsers take no length and trust the sizes inside the bytes, and one random
 * address handed to {@code ucp_ep_create} aborts the process on UCX 1.13.1 ({@code address.c:1051 Assertion
 * `*addr_version == UCP_OBJECT_VERSION_V2' failed}), so every input here must be refused before UCX sees it.
 * <p>
 * {@value #CASES} mutations per parser, from a fixed seed (the same inputs on every run): truncations, extensions,
 * bit flips, byte substitutions, random bytes (with and without a valid magic and version), length fields that lie
 * (with the checksum recomputed, so that only the length check can catch them), a valid header over a garbage
 * payload, headers of the other format, UCX's own raw bytes, and changed version, reserved or region fields with the
 * checksum recomputed. Each must throw {@link IllegalArgumentException} (no other type, no crash, no native call:
 * no handle is created and nothing is in flight), and the rejections must cover every check of the formats. The
 * genuine address and key still work afterwards.
 * <p>
 * What a checksum cannot stop: a peer that computes a correct CRC over malicious UCX bytes. Those reach UCX; only
 * trusted peers may connect (see {@code SECURITY.md}). RMA outside the region a key describes is refused locally by
 * {@link RmaTest#shouldRefuseRangesOutsideTheRegionsBeforeUcx()}, not repeated here.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileInputTest {

    private static final long SEED = 0x5EED_2026_1130L;
    private static final int CASES = 10_000;

    private TwoWorkers peers;
    private Arena arena;

    @BeforeEach
    void open() {
        peers = RmaPeers.open(RmaPeers.Mode.TCP, UcpContext.Feature.TAG, UcpContext.Feature.RMA);
        arena = Arena.ofConfined();
    }

    @AfterEach
    void close() {
        peers.close();
        arena.close();
    }

    /** One of the library's parsers, and how its genuine input is framed. */
    private record Parser(String name, String rejectPrefix, Consumer<byte[]> parse, byte[] valid, int header,
                          int lengthOffset, int crcOffset, int crcCovered) {
    }

    private static void recomputeCrc(byte[] b, Parser p) {
        if (b.length < p.header) {
            return;
        }
        CRC32C crc = new CRC32C();
        crc.update(b, 0, p.crcCovered);
        crc.update(b, p.header, b.length - p.header);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(p.crcOffset, (int) crc.getValue());
    }

    private static byte[] randomBytes(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    /** The mutation kinds, in the order {@link #mutate} applies them. */
    private static final List<String> KINDS = List.of("truncated", "extended", "bits flipped", "bytes replaced",
            "random", "random under a valid magic and version", "length lies (CRC recomputed)",
            "valid header, garbage payload", "other format's header", "raw UCX bytes", "version changed (CRC "
                    + "recomputed)", "reserved or region field changed (CRC recomputed)");

    /** A deterministic malformed variant of {@code p.valid}; never equal to it. */
    private static byte[] mutate(Random r, Parser p, Parser other, byte[] raw, int kind) {
        byte[] v = p.valid;
        ByteBuffer b;
        switch (kind) {
            case 0:
                return Arrays.copyOf(v, r.nextInt(v.length));
            case 1:
                byte[] longer = Arrays.copyOf(v, v.length + 1 + r.nextInt(64));
                int extra = longer.length - v.length;
                System.arraycopy(randomBytes(r, extra), 0, longer, v.length, extra);
                return longer;
            case 2:
                byte[] flipped = v.clone();
                int flips = 1 + r.nextInt(8);
                for (int i = 0; i < flips; i++) {
                    int bit = r.nextInt(v.length * 8);
                    flipped[bit / 8] ^= (byte) (1 << (bit % 8));
                }
                return flipped;
            case 3:
                byte[] replaced = v.clone();
                int n = 1 + r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    replaced[r.nextInt(v.length)] = (byte) r.nextInt(256);
                }
                return replaced;
            case 4:
                return randomBytes(r, r.nextInt(2 * v.length + 64));
            case 5:
                byte[] junk = randomBytes(r, 8 + r.nextInt(2 * v.length));
                System.arraycopy(v, 0, junk, 0, 8);
                return junk;
            case 6:
                byte[] lying = v.clone();
                int actual = v.length - p.header;
                int[] lies = {0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, actual - 1, actual + 1, 2 * actual,
                        UcpWorkerAddress.MAX_UCX_ADDRESS + 1, r.nextInt(), r.nextInt(actual + 1)};
                int lie = lies[r.nextInt(lies.length)];
                lie = lie == actual ? actual + 1 : lie; // a lie, never the truth
                ByteBuffer.wrap(lying).order(ByteOrder.LITTLE_ENDIAN).putInt(p.lengthOffset, lie);
                recomputeCrc(lying, p);
                return lying;
            case 7:
                byte[] garbage = v.clone();
                System.arraycopy(randomBytes(r, v.length - p.header), 0, garbage, p.header, v.length - p.header);
                return garbage;
            case 8:
                byte[] spliced = Arrays.copyOf(other.valid, other.header + v.length - p.header);
                System.arraycopy(v, p.header, spliced, other.header, v.length - p.header);
                return spliced;
            case 9:
                return r.nextBoolean() ? raw.clone() : Arrays.copyOf(raw, 1 + r.nextInt(raw.length));
            case 10:
                byte[] versioned = v.clone();
                versioned[4] = (byte) (2 + r.nextInt(254));
                recomputeCrc(versioned, p);
                return versioned;
            default:
                byte[] field = v.clone();
                b = ByteBuffer.wrap(field).order(ByteOrder.LITTLE_ENDIAN);
                if (p.header == UcpWorkerAddress.HEADER_LENGTH) {
                    field[5 + r.nextInt(3)] = (byte) (1 + r.nextInt(255)); // reserved bytes
                } else {
                    long[] sizes = {0, -1, Long.MIN_VALUE, -r.nextInt(1 << 20) - 1};
                    if (r.nextBoolean()) {
                        b.putLong(16, sizes[r.nextInt(sizes.length)]);
                    } else {
                        b.putLong(8, -1L - r.nextInt(4096)); // the region would wrap past the address space
                        b.putLong(16, 1L << 20);
                    }
                }
                recomputeCrc(field, p);
                return field;
        }
    }

    @Test
    void shouldRejectEveryMalformedAddressAndKeyBeforeUcxAndStillAcceptTheGenuineOnes() {
        UcpWorker a = peers.a;
        UcpWorker b = peers.b;
        UcpEndpoint ep = peers.ab;
        UcpMemory target = peers.context.register(arena.allocate(4096, 64));
        byte[] address = b.address();
        byte[] key = target.packRemoteKey();
        int keyHeader = UcpRemoteKey.HEADER;
        Parser[] parsers = {
            new Parser("UcpWorker.connect(byte[])", "worker address rejected", bytes -> a.connect(bytes), address,
                    UcpWorkerAddress.HEADER_LENGTH, 8, 12, 12),
            new Parser("UcpEndpoint.unpackRemoteKey", "remote key rejected", ep::unpackRemoteKey, key, keyHeader,
                    24, 28, 28),
        };
        // the address parser has three entry points: each gets a share of the cases
        List<Consumer<byte[]>> addressEntries = List.of(bytes -> a.connect(bytes),
                bytes -> UcpEndpoint.Params.worker(bytes), UcpWorkerAddress::ucxAddress);
        byte[][] raws = {b.rawAddress(), target.packRawRemoteKey()};
        int handlesBefore = UcxHandle.liveHandles();

        Random random = new Random(SEED);
        int total = 0;
        for (int pi = 0; pi < parsers.length; pi++) {
            Parser p = parsers[pi];
            Parser other = parsers[1 - pi];
            Map<String, Integer> byKind = new TreeMap<>();
            Map<String, Integer> byReason = new TreeMap<>();
            for (int i = 0; i < CASES; i++) {
                int kind = i % KINDS.size();
                byte[] input = mutate(random, p, other, raws[pi], kind);
                if (Arrays.equals(input, p.valid)) {
                    continue; // a mutation that changed nothing (cannot happen with these kinds; kept as a guard)
                }
                Consumer<byte[]> parse = pi == 0 ? addressEntries.get(i % addressEntries.size()) : p.parse;
                IllegalArgumentException e;
                try {
                    parse.accept(input);
                    fail(p.name + " accepted case " + i + " (" + KINDS.get(kind) + "): "
                            + HexFormat.of().formatHex(input));
                    return;
                } catch (IllegalArgumentException rejected) {
                    e = rejected;
                }
                assertTrue(e.getMessage().startsWith(p.rejectPrefix), p.name + " case " + i + ": " + e.getMessage());
                byKind.merge(KINDS.get(kind), 1, Integer::sum);
                byReason.merge(reason(e.getMessage()), 1, Integer::sum);
                total++;
            }
            System.out.printf("[HostileInputTest] %s rejected %d inputs; by kind %s; by reason %s%n", p.name,
                    byKind.values().stream().mapToInt(Integer::intValue).sum(), byKind, byReason);
            assertEquals(KINDS.size(), byKind.size(), "every mutation kind was tried");
            for (String check : List.of("short", "magic", "version", "length", "checksum")) {
                assertTrue(byReason.containsKey(check), p.name + ": no input failed the " + check + " check: "
                        + byReason);
            }
            assertTrue(byReason.containsKey(pi == 0 ? "reserved" : "region"), byReason.toString());
        }
        assertTrue(total >= 2 * CASES - 10, "rejected " + total);
        // nothing reached UCX: no endpoint or key was made, nothing is in flight
        assertEquals(handlesBefore, UcxHandle.liveHandles());
        assertEquals(0, a.inFlightCount());

        // null and the raw forms' bounds
        assertThrows(IllegalArgumentException.class, () -> a.connect((byte[]) null));
        assertThrows(IllegalArgumentException.class, () -> ep.unpackRemoteKey(null));
        assertThrows(IllegalArgumentException.class, () -> UcpEndpoint.Params.rawWorker(null));
        assertThrows(IllegalArgumentException.class, () -> UcpEndpoint.Params.rawWorker(new byte[0]));
        assertThrows(IllegalArgumentException.class,
                () -> UcpEndpoint.Params.rawWorker(new byte[UcpWorkerAddress.MAX_UCX_ADDRESS + 1]));
        byte[] rawKey = raws[1];
        assertThrows(IllegalArgumentException.class, () -> ep.unpackRawRemoteKey(null, target.address(), 4096));
        assertThrows(IllegalArgumentException.class, () -> ep.unpackRawRemoteKey(new byte[0], target.address(), 4096));
        assertThrows(IllegalArgumentException.class, () -> ep.unpackRawRemoteKey(rawKey, target.address(), 0));
        assertThrows(IllegalArgumentException.class, () -> ep.unpackRawRemoteKey(rawKey, -264, 1 << 20),
                "a region that wraps past the end of the address space");
        assertEquals(handlesBefore, UcxHandle.liveHandles());

        // the genuine inputs still work: a message over a new endpoint, a put with the key
        assertArrayEquals(b.rawAddress(), UcpWorkerAddress.ucxAddress(address));
        for (UcpEndpoint fresh : List.of(a.connect(address), a.connect(UcpEndpoint.Params.rawWorker(b.rawAddress())))) {
            MemorySegment out = BytePattern.allocate(arena, 1000, 9);
            MemorySegment in = arena.allocate(1000);
            long recv = b.receiveTag(in, 0, 1000, 42, -1L);
            TestSupport.awaitBoth(a, fresh.sendTag(out, 0, 1000, 42), b, recv);
            TestSupport.assertBytes(out.toArray(JAVA_BYTE), in, "message over a new endpoint");
        }
        UcpRemoteKey rkey = ep.unpackRemoteKey(key);
        MemorySegment src = BytePattern.allocate(arena, 256, 4);
        peers.await(ep.put(src, 0, 256, target.address() + 512, rkey));
        peers.flush();
        TestSupport.assertBytes(src.toArray(JAVA_BYTE), target.segment().asSlice(512, 256), "put with the genuine key");
        assertEquals(0, a.inFlightCount());
    }

    /** A short name for a rejection message, to count which checks fired. */
    private static String reason(String message) {
        if (message.contains("shorter than") || message.endsWith(": null")) {
            return "short";
        }
        if (message.contains("magic")) {
            return "magic";
        }
        if (message.contains("version")) {
            return "version";
        }
        if (message.contains("header says")) {
            return "length";
        }
        if (message.contains("checksum")) {
            return "checksum";
        }
        if (message.contains("reserved")) {
            return "reserved";
        }
        if (message.contains("region")) {
            return "region";
        }
        return message;
    }
}
