package io.github.ucxffm.bench.transport;

import java.util.concurrent.CompletableFuture;

/**
 * A connection that sends requests to the benchmark's server and checks its answers, in rounds: a warm-up round,
 * then the measured one. Rounds run on the connection's event loop; one at a time.
 */
interface Load extends AutoCloseable {

    /**
     * What a round did.
     *
     * @param requests requests answered (stream: messages received)
     * @param bytes    payload bytes of those answers
     * @param nanos    from the first request to the last answer
     * @param verified answers whose bytes were compared with what was expected, and matched
     */
    record Round(long requests, long bytes, long nanos, long verified) {
    }

    /**
     * Starts a round: requests until {@code count} are answered or {@code nanos} have passed since the first,
     * whichever comes first; then the round waits for the answers still outstanding.
     *
     * @param count     requests at most
     * @param nanos     time at most
     * @param latencies where each request's round trip is recorded (on the event loop), or {@code null}
     * @return completed with the round, or exceptionally when an answer is wrong or the connection fails
     */
    CompletableFuture<Round> round(long count, long nanos, Latencies latencies);

    /** Closes the connection. */
    @Override
    void close();
}
