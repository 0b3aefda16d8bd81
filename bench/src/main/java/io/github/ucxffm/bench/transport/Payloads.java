package io.github.ucxffm.bench.transport;

/** The bytes the benchmark sends: a pattern that changes from byte to byte, so that a shifted copy shows. */
final class Payloads {

    private Payloads() {
    }

    /**
     * The pattern of a size: byte {@code i} is {@code 31 i + 7} modulo 256.
     *
     * @param size bytes
     * @return a new array
     */
    static byte[] pattern(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (31 * i + 7);
        }
        return b;
    }
}
