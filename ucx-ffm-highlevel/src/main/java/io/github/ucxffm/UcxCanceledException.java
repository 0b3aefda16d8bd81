package io.github.ucxffm;

/**
 * The operation was canceled before it completed (UCS_ERR_CANCELED), by the application or by closing its endpoint or worker.
 */
public final class UcxCanceledException extends UcxException {

    private static final long serialVersionUID = 1L;

    UcxCanceledException(String call, int code) {
        super(call, code);
    }
}
