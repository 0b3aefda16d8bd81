package io.github.ucxffm.samples;

/**
 * A failure a sample reports as one line and an exit status, never as a stack trace: bad arguments (status 2) or a
 * failed run such as an unreachable host or a peer that went away (status 1).
 */
public final class SampleException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Exit status for bad arguments. */
    public static final int USAGE = 2;
    /** Exit status for a run that failed. */
    public static final int FAILED = 1;

    private final int status;

    SampleException(int status, String message) {
        super(message);
        this.status = status;
    }

    static SampleException usage(String message) {
        return new SampleException(USAGE, message);
    }

    static SampleException failed(String message) {
        return new SampleException(FAILED, message);
    }

    /**
     * The exit status the sample ends with.
     *
     * @return {@link #USAGE} or {@link #FAILED}
     */
    public int status() {
        return status;
    }
}
