package io.github.ucxffm;

/**
 * The peer, or the path to it, failed: connection reset, unreachable, endpoint timeout or another link or endpoint error. The endpoint is unusable; close it (force) and connect again.
 */
public final class UcxPeerFailureException extends UcxException {

    private static final long serialVersionUID = 1L;

    UcxPeerFailureException(String call, int code) {
        super(call, code);
    }
}
