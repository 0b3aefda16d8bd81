package io.github.ucxffm;

/**
 * A message was longer than the buffer posted to receive it (UCS_ERR_MESSAGE_TRUNCATED).
 */
public final class UcxTruncatedException extends UcxException {

    private static final long serialVersionUID = 1L;

    UcxTruncatedException(String call, int code) {
        super(call, code);
    }
}
