package io.github.ucxffm;

/**
 * An operation did not complete in time (UCS_ERR_TIMED_OUT).
 */
public final class UcxTimeoutException extends UcxException {

    private static final long serialVersionUID = 1L;

    UcxTimeoutException(String call, int code) {
        super(call, code);
    }
}
