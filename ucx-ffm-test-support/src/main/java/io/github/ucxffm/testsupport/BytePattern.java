package io.github.ucxffm.testsupport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The byte pattern every test sends, writes and checks: the byte at each position of a seeded stream, so that a
 * buffer filled at position {@code p} holds {@code at(seed, p)}, {@code at(seed, p + 1)}, ...
 *
 * <p>Built so that a wrong transfer cannot match it by accident:
 * <ul>
 *   <li>a byte moved by fewer than 256 positions inside a 256-byte block differs from the one it replaces (the
 *   position term {@code 31 * p} is a permutation of the block);</li>
 *   <li>each 256-byte block adds a term hashed from the block number, so whole blocks moved, repeated or swapped
 *   differ too (no period, unlike a plain {@code i * k} pattern);</li>
 *   <li>two seeds that differ only in their low eight bits differ at every byte ({@code 7 * seed}); the higher bits
 *   of the seed go into the block term, so other seeds differ block by block (a whole 256-byte block alike by
 *   chance once in 256).</li>
 * </ul>
 * JDK only, so child programs started by tests use it too, and both sides of a cross-process test agree on it.
 */
public final class BytePattern {

    /** A word written as eight bytes in order, whatever the platform's byte order. */
    private static final ValueLayout.OfLong WORD = JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** The eight position terms of a word: {@code 31 * j mod 256} in byte {@code j}. */
    private static final long STEPS;

    static {
        long steps = 0;
        for (int j = 0; j < 8; j++) {
            steps |= ((31L * j) & 0xff) << (8 * j);
        }
        STEPS = steps;
    }

    private BytePattern() {
    }

    /**
     * The byte at {@code position} of the pattern of {@code seed}.
     *
     * @param seed     the pattern's seed
     * @param position the position in the pattern
     * @return the byte
     */
    public static byte at(long seed, long position) {
        return (byte) (31 * position + 7 * seed + block(position >>> 8, seed >>> 8));
    }

    /**
     * Fills the segment with the pattern of {@code seed} from its position 0.
     *
     * @param segment the segment to fill
     * @param seed    the pattern's seed
     */
    public static void fill(MemorySegment segment, long seed) {
        fill(segment, seed, 0);
    }

    /**
     * Fills the segment with the pattern of {@code seed} from {@code position}: {@code segment[i]} becomes
     * {@code at(seed, position + i)}, so a slice of a larger buffer can be filled as that buffer's part.
     *
     * @param segment  the segment to fill
     * @param seed     the pattern's seed
     * @param position the pattern position of the segment's first byte
     */
    public static void fill(MemorySegment segment, long seed, long position) {
        long n = segment.byteSize();
        long s = 7 * seed;
        long i = 0;
        for (; i < n && ((position + i) & 7) != 0; i++) {
            segment.set(JAVA_BYTE, i, at(seed, position + i));
        }
        // eight bytes at a time: an aligned word never spans two blocks, its bytes are v, v + 31, ... (mod 256)
        long blockNumber = -1;
        long base = 0;
        for (; i + 8 <= n; i += 8) {
            long p = position + i;
            if (p >>> 8 != blockNumber) {
                blockNumber = p >>> 8;
                base = block(blockNumber, seed >>> 8) + s;
            }
            long v = (31 * p + base) & 0xff;
            segment.set(WORD, i, addBytes(v * 0x0101010101010101L, STEPS));
        }
        for (; i < n; i++) {
            segment.set(JAVA_BYTE, i, at(seed, position + i));
        }
    }

    /**
     * A native segment of {@code size} bytes holding the pattern of {@code seed} from position 0.
     *
     * @param arena the arena that owns the segment
     * @param size  its length (0 allowed)
     * @param seed  the pattern's seed
     * @return the filled segment
     */
    public static MemorySegment allocate(Arena arena, long size, long seed) {
        MemorySegment s = arena.allocate(Math.max(1, size)).asSlice(0, size);
        fill(s, seed);
        return s;
    }

    /**
     * {@code length} bytes of the pattern of {@code seed} from {@code position}.
     *
     * @param seed     the pattern's seed
     * @param position the first position
     * @param length   how many bytes
     * @return a new array
     */
    public static byte[] bytes(long seed, long position, int length) {
        byte[] b = new byte[length];
        fill(MemorySegment.ofArray(b), seed, position);
        return b;
    }

    /**
     * Where the segment first differs from the pattern of {@code seed} from {@code position}.
     *
     * @param segment  the segment to check
     * @param seed     the pattern's seed
     * @param position the pattern position of the segment's first byte
     * @return the offset in the segment of the first wrong byte, or -1 if every byte is right
     */
    public static long mismatch(MemorySegment segment, long seed, long position) {
        long n = segment.byteSize();
        for (long i = 0; i < n; i++) {
            if (segment.get(JAVA_BYTE, i) != at(seed, position + i)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Checks that the segment holds the pattern of {@code seed} from position 0.
     *
     * @param segment the segment to check
     * @param seed    the pattern's seed
     * @param what    what the segment is, for the failure message
     * @throws AssertionError naming the first wrong byte and how many are wrong
     */
    public static void verify(MemorySegment segment, long seed, String what) {
        verify(segment, seed, 0, what);
    }

    /**
     * Checks that the segment holds the pattern of {@code seed} from {@code position}.
     *
     * @param segment  the segment to check
     * @param seed     the pattern's seed
     * @param position the pattern position of the segment's first byte
     * @param what     what the segment is, for the failure message
     * @throws AssertionError naming the first wrong byte and how many are wrong
     */
    public static void verify(MemorySegment segment, long seed, long position, String what) {
        long first = mismatch(segment, seed, position);
        if (first < 0) {
            return;
        }
        long wrong = 0;
        for (long i = first; i < segment.byteSize(); i++) {
            if (segment.get(JAVA_BYTE, i) != at(seed, position + i)) {
                wrong++;
            }
        }
        throw new AssertionError(String.format(
                "%s: byte %d of %d is 0x%02x, the pattern (seed %d, position %d) has 0x%02x there; %d bytes wrong",
                what, first, segment.byteSize(), segment.get(JAVA_BYTE, first) & 0xff, seed, position + first,
                at(seed, position + first) & 0xff, wrong));
    }

    /**
     * Checks that the array holds the pattern of {@code seed} from {@code position}.
     *
     * @param bytes    the array to check
     * @param seed     the pattern's seed
     * @param position the pattern position of the array's first byte
     * @param what     what the array is, for the failure message
     * @throws AssertionError naming the first wrong byte and how many are wrong
     */
    public static void verify(byte[] bytes, long seed, long position, String what) {
        verify(MemorySegment.ofArray(bytes), seed, position, what);
    }

    /** The bytewise sum of two words, modulo 256 in each byte (no carry from one byte into the next). */
    private static long addBytes(long x, long y) {
        long low7 = 0x7F7F7F7F7F7F7F7FL;
        return ((x & low7) + (y & low7)) ^ ((x ^ y) & ~low7);
    }

    /**
     * A block's term: a 64-bit mix (the finalizer of SplitMix64) of its number and of the seed's bits above the low
     * eight, so that blocks do not repeat and seeds a multiple of 256 apart differ too.
     */
    private static long block(long block, long seedHigh) {
        long z = block * 0x9E3779B97F4A7C15L + seedHigh * 0xD1B54A32D192ED03L + 0x632BE59BD9B4E019L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return (z ^ (z >>> 31)) >>> 56;
    }
}
