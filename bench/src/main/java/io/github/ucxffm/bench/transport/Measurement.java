package io.github.ucxffm.bench.transport;

/**
 * One cell measured over one transport.
 *
 * @param transport  the transport
 * @param cell       the cell
 * @param rep        the repetition of the sitting, from 1
 * @param requests   requests answered in the measured round (stream: messages received)
 * @param bytes      payload bytes of those answers
 * @param seconds    the measured round's length
 * @param p50Micros  median round trip, or NaN (a stream, or a failure)
 * @param p99Micros  99th percentile round trip, or NaN
 * @param clientCpu  CPU seconds the client process used during the round ({@code /proc/self/stat})
 * @param serverCpu  CPU seconds the server process used during the round ({@code /proc/PID/stat})
 * @param verified   answers whose every byte was checked and matched
 * @param error      why the cell failed, or {@code null}
 * @param warmupSeconds how long the connection was warmed up before the measured round
 */
record Measurement(TransportKind transport, Cell cell, int rep, long requests, long bytes, double seconds,
                   double p50Micros, double p99Micros, double clientCpu, double serverCpu, long verified, String error,
                   double warmupSeconds) {

    /** MB in MB/s: 2^20 bytes, as {@code ucx_perftest} and {@code bench compare} count. */
    static final double MB = 1 << 20;

    /**
     * A cell that failed.
     *
     * @param transport the transport
     * @param cell      the cell
     * @param rep       the repetition
     * @param error     why
     * @return the measurement, all numbers NaN
     */
    static Measurement failed(TransportKind transport, Cell cell, int rep, String error) {
        double none = Double.NaN;
        return new Measurement(transport, cell, rep, 0, 0, none, none, none, none, none, 0, error, none);
    }

    /** Whether the cell ran to the end with every answer right. */
    boolean ok() {
        return error == null;
    }

    /** Requests (stream: messages) per second. */
    double requestsPerSecond() {
        return ok() && seconds > 0 ? requests / seconds : Double.NaN;
    }

    /** Payload MB (2^20 bytes) per second in one direction. */
    double megabytesPerSecond() {
        return ok() && seconds > 0 ? bytes / MB / seconds : Double.NaN;
    }

    /** CPU seconds of both processes per million requests. */
    double cpuPerMillion() {
        return clientCpuPerMillion() + serverCpuPerMillion();
    }

    /** The client's CPU seconds per million requests. */
    double clientCpuPerMillion() {
        return ok() && requests > 0 ? clientCpu / requests * 1e6 : Double.NaN;
    }

    /** The server's CPU seconds per million requests. */
    double serverCpuPerMillion() {
        return ok() && requests > 0 ? serverCpu / requests * 1e6 : Double.NaN;
    }
}
