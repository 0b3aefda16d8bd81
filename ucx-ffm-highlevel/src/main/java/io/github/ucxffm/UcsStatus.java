package io.github.ucxffm;

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Every {@code ucs_status_t} of UCX, with O(1) lookup from the one-byte native code and UCX's own description.
 * Codes UCX may add later, or the unnamed codes inside its link- and endpoint-failure ranges, map to
 * {@link #UNKNOWN}; {@link #describe(int)} still gives UCX's text for them.
 */
public enum UcsStatus {
    /** Success. */
    OK(ucx_h.UCS_OK()),
    /** The operation is in progress; not an error. */
    INPROGRESS(ucx_h.UCS_INPROGRESS()),
    /** No pending message. */
    ERR_NO_MESSAGE(ucx_h.UCS_ERR_NO_MESSAGE()),
    /** No resources are available to start the operation now; retry after progress. */
    ERR_NO_RESOURCE(ucx_h.UCS_ERR_NO_RESOURCE()),
    /** Input/output error. */
    ERR_IO_ERROR(ucx_h.UCS_ERR_IO_ERROR()),
    /** Out of memory. */
    ERR_NO_MEMORY(ucx_h.UCS_ERR_NO_MEMORY()),
    /** Invalid parameter. */
    ERR_INVALID_PARAM(ucx_h.UCS_ERR_INVALID_PARAM()),
    /** Destination is unreachable. */
    ERR_UNREACHABLE(ucx_h.UCS_ERR_UNREACHABLE()),
    /** Address not valid. */
    ERR_INVALID_ADDR(ucx_h.UCS_ERR_INVALID_ADDR()),
    /** Function not implemented. */
    ERR_NOT_IMPLEMENTED(ucx_h.UCS_ERR_NOT_IMPLEMENTED()),
    /** The message was larger than the receive buffer. */
    ERR_MESSAGE_TRUNCATED(ucx_h.UCS_ERR_MESSAGE_TRUNCATED()),
    /** No progress. */
    ERR_NO_PROGRESS(ucx_h.UCS_ERR_NO_PROGRESS()),
    /** Provided buffer is too small. */
    ERR_BUFFER_TOO_SMALL(ucx_h.UCS_ERR_BUFFER_TOO_SMALL()),
    /** No such element. */
    ERR_NO_ELEM(ucx_h.UCS_ERR_NO_ELEM()),
    /** Failed to connect some of the requested endpoints. */
    ERR_SOME_CONNECTS_FAILED(ucx_h.UCS_ERR_SOME_CONNECTS_FAILED()),
    /** No such device. */
    ERR_NO_DEVICE(ucx_h.UCS_ERR_NO_DEVICE()),
    /** Device is busy; for {@code ucp_worker_arm}: there are events to progress first. */
    ERR_BUSY(ucx_h.UCS_ERR_BUSY()),
    /** Request canceled. */
    ERR_CANCELED(ucx_h.UCS_ERR_CANCELED()),
    /** Shared memory error. */
    ERR_SHMEM_SEGMENT(ucx_h.UCS_ERR_SHMEM_SEGMENT()),
    /** Element already exists. */
    ERR_ALREADY_EXISTS(ucx_h.UCS_ERR_ALREADY_EXISTS()),
    /** Index out of range. */
    ERR_OUT_OF_RANGE(ucx_h.UCS_ERR_OUT_OF_RANGE()),
    /** Operation timed out. */
    ERR_TIMED_OUT(ucx_h.UCS_ERR_TIMED_OUT()),
    /** User-defined limit was reached. */
    ERR_EXCEEDS_LIMIT(ucx_h.UCS_ERR_EXCEEDS_LIMIT()),
    /** Unsupported operation. */
    ERR_UNSUPPORTED(ucx_h.UCS_ERR_UNSUPPORTED()),
    /** Operation rejected by the remote peer. */
    ERR_REJECTED(ucx_h.UCS_ERR_REJECTED()),
    /** Endpoint is not connected. */
    ERR_NOT_CONNECTED(ucx_h.UCS_ERR_NOT_CONNECTED()),
    /** Connection reset by the remote peer. */
    ERR_CONNECTION_RESET(ucx_h.UCS_ERR_CONNECTION_RESET()),
    /** Endpoint timeout. */
    ERR_ENDPOINT_TIMEOUT(ucx_h.UCS_ERR_ENDPOINT_TIMEOUT()),
    /** A code this enum does not name; see {@link #describe(int)}. */
    UNKNOWN(Integer.MIN_VALUE);

    private static final UcsStatus[] BY_CODE = new UcsStatus[256];

    static {
        Arrays.fill(BY_CODE, UNKNOWN);
        for (UcsStatus s : values()) {
            if (s != UNKNOWN) {
                BY_CODE[s.code & 0xFF] = s;
            }
        }
    }

    private final int code;

    UcsStatus(int code) {
        this.code = code;
    }

    /**
     * The native code.
     *
     * @return the {@code ucs_status_t} value, or {@link Integer#MIN_VALUE} for {@link #UNKNOWN}
     */
    public int code() {
        return code;
    }

    /**
     * Looks up a native code in constant time.
     *
     * @param code a {@code ucs_status_t} (a signed byte; wider values are read by their low byte, as C does)
     * @return the status, or {@link #UNKNOWN}
     */
    public static UcsStatus of(int code) {
        return BY_CODE[code & 0xFF];
    }

    /**
     * Whether this is an error status, as {@code UCS_STATUS_IS_ERR} tells.
     *
     * @return {@code true} for every {@code ERR_*} constant and {@link #UNKNOWN}
     */
    public boolean isError() {
        return code < 0;
    }

    /**
     * UCX's own text for this status, from {@code ucs_status_string}.
     *
     * @return the description
     */
    public String description() {
        return this == UNKNOWN ? "a status ucx-ffm does not name" : describe(code);
    }

    /**
     * UCX's own text for any code, from {@code ucs_status_string}.
     *
     * @param code a {@code ucs_status_t}
     * @return the description
     */
    public static String describe(int code) {
        MemorySegment text = ucx_h.ucs_status_string((byte) code);
        return text.equals(MemorySegment.NULL) ? "unknown status " + code : text.getString(0);
    }
}
