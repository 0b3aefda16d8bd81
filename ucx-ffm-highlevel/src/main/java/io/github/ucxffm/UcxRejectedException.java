package io.github.ucxffm;

/**
 * The remote side rejected the operation, for example a listener refusing a connection request (UCS_ERR_REJECTED).
 */
public final class UcxRejectedException extends UcxException {

    private static final long serialVersionUID = 1L;

    UcxRejectedException(String call, int code) {
        super(call, code);
    }
}
