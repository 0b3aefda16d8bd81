package io.github.ucxffm;

/**
 * A UCX call failed for a reason none of the other {@link UcxException} types names.
 */
public final class UcxCallException extends UcxException {

    private static final long serialVersionUID = 1L;

    UcxCallException(String call, int code) {
        super(call, code);
    }
}
