package io.github.ucxffm.testsupport;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BytePatternTest {

    private static final int SIZE = 1 << 20;

    @Test
    void shouldDifferFromItselfShiftedByAnyDistance() {
        byte[] p = BytePattern.bytes(5, 0, SIZE + 1024);
        for (int shift = 1; shift <= SIZE; shift = shift < 300 ? shift + 1 : shift * 2) {
            MemorySegment shifted = MemorySegment.ofArray(p).asSlice(shift, 1024);
            assertTrue(BytePattern.mismatch(shifted, 5, 0) >= 0, "shift by " + shift);
        }
    }

    @Test
    void shouldDifferAtEveryByteForSeedsThatDifferInTheLowByte() {
        byte[] a = BytePattern.bytes(0x300, 0, 4096);
        for (int seed = 0x301; seed < 0x400; seed++) {
            byte[] b = BytePattern.bytes(seed, 0, 4096);
            for (int i = 0; i < a.length; i++) {
                assertNotEquals(a[i], b[i], "seed " + seed + " byte " + i);
            }
        }
    }

    @Test
    void shouldDifferInAlmostEveryBlockForOtherSeeds() {
        int blocks = 256;
        byte[] a = BytePattern.bytes(5, 0, blocks * 256);
        for (long other : new long[] {5 + 256, 5 + 512, 5 + 256 * 1000, 5 - 256, 1000, 1 << 20, Long.MIN_VALUE}) {
            byte[] b = BytePattern.bytes(other, 0, blocks * 256);
            int alike = 0;
            for (int block = 0; block < blocks; block++) {
                boolean same = true;
                for (int i = block * 256; i < (block + 1) * 256 && same; i++) {
                    same = a[i] == b[i];
                }
                alike += same ? 1 : 0;
            }
            assertTrue(alike <= 8, "seed " + other + ": " + alike + " of " + blocks + " blocks alike");
        }
    }

    @Test
    void shouldFillASliceAsPartOfTheWhole() {
        byte[] whole = BytePattern.bytes(3, 0, 5000);
        byte[] part = BytePattern.bytes(3, 1234, 777);
        byte[] expected = new byte[777];
        System.arraycopy(whole, 1234, expected, 0, 777);
        assertArrayEquals(expected, part);
        for (int i = 0; i < 777; i++) {
            assertEquals(BytePattern.at(3, 1234 + i), part[i]);
        }
    }

    @Test
    void shouldFillEveryByteAsAtSaysWhateverThePositionAndLength() {
        for (long position : new long[] {0, 1, 5, 7, 8, 9, 250, 255, 256, 1 << 20, (1L << 40) - 3}) {
            for (int length = 0; length <= 300; length += length < 20 ? 1 : 37) {
                byte[] b = BytePattern.bytes(-17, position, length);
                for (int i = 0; i < length; i++) {
                    assertEquals(BytePattern.at(-17, position + i), b[i], "position " + position + " + " + i);
                }
                assertEquals(-1, BytePattern.mismatch(MemorySegment.ofArray(b), -17, position));
            }
        }
    }

    @Test
    void shouldNameTheFirstWrongByteAndCountTheWrongOnes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = BytePattern.allocate(arena, 100, 9);
            BytePattern.verify(s, 9, "intact");
            s.set(JAVA_BYTE, 40, (byte) ~s.get(JAVA_BYTE, 40));
            s.set(JAVA_BYTE, 60, (byte) ~s.get(JAVA_BYTE, 60));
            AssertionError e = assertThrows(AssertionError.class, () -> BytePattern.verify(s, 9, "buffer"));
            assertTrue(e.getMessage().startsWith("buffer: byte 40 of 100 is "), e.getMessage());
            assertTrue(e.getMessage().endsWith("2 bytes wrong"), e.getMessage());
            assertEquals(0, BytePattern.allocate(arena, 0, 1).byteSize());
        }
    }
}
