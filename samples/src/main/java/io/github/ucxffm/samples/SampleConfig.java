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
    /** Message size of the bandwidth sample: large enough that the transport, not the per-message cost, limits. */
    public static final long BANDWIDTH_SIZE = 1 << 20;
    /** Measured messages of the bandwidth sample (2 GiB at the default size). */
    public static final long BANDWIDTH_ITERATIONS = 2_000;
    /** Warm-up messages of the bandwidth sample. */
    public static final long BANDWIDTH_WARMUP = 200;

    private SampleConfig() {
    }
}
