package io.github.ucxffm;

import io.github.ucxffm.bindings.ucx_h;

/**
 * Remote atomic operations ({@code ucp_atomic_op_t}), performed by
 * {@link UcpEndpoint#atomic(UcpAtomicOp, java.lang.foreign.MemorySegment, java.lang.foreign.MemorySegment, long,
 * UcpRemoteKey)} on a 4- or 8-byte word of a peer's registered memory. With {@code Y} the remote word, {@code X} the
 * operand and {@code R} the result buffer: every operation stores the old {@code Y} in {@code R} when a result buffer
 * is given (a "fetching" operation), then updates {@code Y} as described for each constant.
 */
public enum UcpAtomicOp {
    /** {@code Y += X} ({@code UCP_ATOMIC_OP_ADD}); the result buffer is optional. */
    ADD(ucx_h.UCP_ATOMIC_OP_ADD(), false),
    /** {@code Y = X} ({@code UCP_ATOMIC_OP_SWAP}); needs a result buffer, which receives the old value. */
    SWAP(ucx_h.UCP_ATOMIC_OP_SWAP(), true),
    /**
     * {@code if (Y == X) Y = R} ({@code UCP_ATOMIC_OP_CSWAP}): the operand is the expected value; the result buffer
     * holds the new value on input and receives the old value on output, as UCX defines it.
     */
    CSWAP(ucx_h.UCP_ATOMIC_OP_CSWAP(), true),
    /** {@code Y &= X} ({@code UCP_ATOMIC_OP_AND}); the result buffer is optional. */
    AND(ucx_h.UCP_ATOMIC_OP_AND(), false),
    /** {@code Y |= X} ({@code UCP_ATOMIC_OP_OR}); the result buffer is optional. */
    OR(ucx_h.UCP_ATOMIC_OP_OR(), false),
    /** {@code Y ^= X} ({@code UCP_ATOMIC_OP_XOR}); the result buffer is optional. */
    XOR(ucx_h.UCP_ATOMIC_OP_XOR(), false);

    final int code;
    final boolean needsResult;

    UcpAtomicOp(int code, boolean needsResult) {
        this.code = code;
        this.needsResult = needsResult;
    }

    /**
     * The native value.
     *
     * @return the {@code ucp_atomic_op_t}
     */
    public int code() {
        return code;
    }

    /**
     * Whether the operation cannot be posted without a result buffer (SWAP and CSWAP are fetching by nature).
     *
     * @return {@code true} for {@link #SWAP} and {@link #CSWAP}
     */
    public boolean needsResult() {
        return needsResult;
    }
}
