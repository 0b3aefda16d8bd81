package io.github.ucxffm.bindings.support;

import java.lang.foreign.MemorySegment;

import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_FIRST_ENDPOINT_FAILURE;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_FIRST_LINK_FAILURE;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_LAST;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_LAST_ENDPOINT_FAILURE;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_LAST_LINK_FAILURE;
import static io.github.ucxffm.bindings.ucx_h.UCS_INPROGRESS;

/**
 * Java forms of the function-like macros of {@code ucs/type/status.h}, which no generator can translate.
 * <p>
 * A {@code ucs_status_ptr_t} returned by a non-blocking UCP call is one of three things: {@code NULL} (the operation
 * completed at once), an error status in {@code [UCS_ERR_LAST, -1]} stored in the pointer's bits, or the address of
 * a request. These methods tell them apart without allocating. Statuses are {@code byte}s, as {@code ucs_status_t}
 * is a one-byte enum in UCX's ABI.
 */
public final class UcsMacros {

    private static final long ERR_LAST = UCS_ERR_LAST();

    private UcsMacros() {
    }

    /**
     * {@code UCS_PTR_IS_ERR(ptr)}.
     *
     * @param ptr a {@code ucs_status_ptr_t}
     * @return whether the pointer encodes an error status
     */
    public static boolean UCS_PTR_IS_ERR(MemorySegment ptr) {
        return Long.compareUnsigned(ptr.address(), ERR_LAST) >= 0;
    }

    /**
     * {@code UCS_PTR_IS_PTR(ptr)}.
     *
     * @param ptr a {@code ucs_status_ptr_t}
     * @return whether the pointer is a real request (neither {@code NULL} nor an error)
     */
    public static boolean UCS_PTR_IS_PTR(MemorySegment ptr) {
        return Long.compareUnsigned(ptr.address() - 1, ERR_LAST - 1) < 0;
    }

    /**
     * {@code UCS_PTR_RAW_STATUS(ptr)}: the pointer's low byte read as a status, meaningful for {@code NULL} and
     * errors only.
     *
     * @param ptr a {@code ucs_status_ptr_t}
     * @return the status stored in the pointer
     */
    public static byte UCS_PTR_RAW_STATUS(MemorySegment ptr) {
        return (byte) ptr.address();
    }

    /**
     * {@code UCS_PTR_STATUS(ptr)}.
     *
     * @param ptr a {@code ucs_status_ptr_t}
     * @return {@code UCS_INPROGRESS} for a request, else the status stored in the pointer
     */
    public static byte UCS_PTR_STATUS(MemorySegment ptr) {
        return UCS_PTR_IS_PTR(ptr) ? (byte) UCS_INPROGRESS() : UCS_PTR_RAW_STATUS(ptr);
    }

    /**
     * {@code UCS_STATUS_PTR(status)}.
     *
     * @param status a status
     * @return the status encoded as a {@code ucs_status_ptr_t}
     */
    public static MemorySegment UCS_STATUS_PTR(byte status) {
        return MemorySegment.ofAddress(status);
    }

    /**
     * {@code UCS_STATUS_IS_ERR(status)}.
     *
     * @param status a status
     * @return whether it is an error (negative)
     */
    public static boolean UCS_STATUS_IS_ERR(int status) {
        return status < 0;
    }

    /**
     * {@code UCS_IS_LINK_ERROR(code)}.
     *
     * @param code a status
     * @return whether it reports a failed link (a transport connection may be replaced)
     */
    public static boolean UCS_IS_LINK_ERROR(int code) {
        return code <= UCS_ERR_FIRST_LINK_FAILURE() && code >= UCS_ERR_LAST_LINK_FAILURE();
    }

    /**
     * {@code UCS_IS_ENDPOINT_ERROR(code)}.
     *
     * @param code a status
     * @return whether it reports a failed endpoint (the peer is lost to this endpoint)
     */
    public static boolean UCS_IS_ENDPOINT_ERROR(int code) {
        return code <= UCS_ERR_FIRST_ENDPOINT_FAILURE() && code >= UCS_ERR_LAST_ENDPOINT_FAILURE();
    }
}
