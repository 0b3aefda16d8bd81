package io.github.ucxffm;

import io.github.ucxffm.bindings.support.UcsMacros;

/**
 * A UCX call failed. The message names the call and the status, as in
 * {@code ucp_ep_create(..) failed: UCS_ERR_UNREACHABLE (Destination is unreachable)}. Subclasses tell the outcomes
 * an application treats differently: a lost peer, a timeout, a rejection, a cancellation, a truncated message; all
 * other failures are {@link UcxCallException}.
 */
public abstract sealed class UcxException extends RuntimeException
        permits UcxPeerFailureException, UcxTimeoutException, UcxRejectedException, UcxCanceledException,
        UcxTruncatedException, UcxCallException {

    private static final long serialVersionUID = 1L;

    private final transient UcsStatus status;
    private final int code;
    private final String call;

    UcxException(String call, int code) {
        super(call + "(..) failed: UCS_" + (UcsStatus.of(code) == UcsStatus.UNKNOWN ? "status " + code
                : UcsStatus.of(code).name()) + " (" + UcsStatus.describe(code) + ")");
        this.status = UcsStatus.of(code);
        this.code = code;
        this.call = call;
    }

    /**
     * Makes the exception of the right type for a failed call.
     *
     * @param call the UCX function that failed, or the operation that completed with an error
     * @param code the {@code ucs_status_t}
     * @return the exception, not thrown
     */
    public static UcxException of(String call, int code) {
        UcsStatus s = UcsStatus.of(code);
        if (isPeerFailure(code)) {
            return new UcxPeerFailureException(call, code);
        }
        return switch (s) {
            case ERR_TIMED_OUT -> new UcxTimeoutException(call, code);
            case ERR_REJECTED -> new UcxRejectedException(call, code);
            case ERR_CANCELED -> new UcxCanceledException(call, code);
            case ERR_MESSAGE_TRUNCATED -> new UcxTruncatedException(call, code);
            default -> new UcxCallException(call, code);
        };
    }

    /**
     * Whether a status means the peer or the path to it is gone: connection reset, unreachable, not connected,
     * endpoint timeout, or any code of UCX's link- and endpoint-failure ranges.
     *
     * @param code a {@code ucs_status_t}
     * @return whether the endpoint should be treated as failed
     */
    public static boolean isPeerFailure(int code) {
        UcsStatus s = UcsStatus.of(code);
        return s == UcsStatus.ERR_CONNECTION_RESET || s == UcsStatus.ERR_ENDPOINT_TIMEOUT
                || s == UcsStatus.ERR_UNREACHABLE || s == UcsStatus.ERR_NOT_CONNECTED
                || UcsMacros.UCS_IS_LINK_ERROR(code)
                || UcsMacros.UCS_IS_ENDPOINT_ERROR(code);
    }

    /**
     * The status, {@link UcsStatus#UNKNOWN} for a code the enum does not name (see {@link #code()}).
     *
     * @return the status
     */
    public UcsStatus status() {
        return status == null ? UcsStatus.of(code) : status;
    }

    /**
     * The native code.
     *
     * @return the {@code ucs_status_t} value
     */
    public int code() {
        return code;
    }

    /**
     * The failed call.
     *
     * @return the UCX function or operation name
     */
    public String call() {
        return call;
    }
}
