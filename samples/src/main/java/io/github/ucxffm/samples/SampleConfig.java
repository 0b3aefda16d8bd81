package io.github.ucxffm.samples;

/**
 * Defaults shared by every sample, in one place.
 */
public final class SampleConfig {

    /** Port the servers listen on unless {@code --port} says otherwise. */
    public static final int DEFAULT_PORT = 13337;
    /** Message size in bytes. */
    public static final long DEFAULT_SIZE = 8;
    /** Measured iterations. */
    public static final long DEFAULT_ITERATIONS = 100_000;
    /** Warm-up iterations, not measured. */
    public static final long DEFAULT_WARMUP = 10_000;
    /** Outstanding operations for window-based samples (bandwidth, block-store queue depth). */
    public static final int DEFAULT_WINDOW = 16;
    /** How long a sample waits for one step before it declares the peer gone. */
    public static final long STEP_TIMEOUT_MILLIS = 10_000;
    /** How long a server waits for a client. */
    public static final long ACCEPT_TIMEOUT_MILLIS = 120_000;

    private SampleConfig() {
    }
}
