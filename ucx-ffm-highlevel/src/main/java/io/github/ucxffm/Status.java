package io.github.ucxffm;

/** Turns native statuses into exceptions; the one place that does. */
final class Status {

    private Status() {
    }

    /** Throws the typed {@link UcxException} for an error status; returns the status otherwise. */
    static byte check(byte status, String call) {
        if (status < 0) {
            throw UcxException.of(call, status);
        }
        return status;
    }
}
