package io.github.ucxffm.bench.transport;

/** What a cell of {@code bench transport} runs over a transport. */
enum Scenario implements Labelled {
    /** Netty echo, one message outstanding: the round-trip time of a message and its echo. */
    ECHO_PINGPONG("echo-pingpong", true),
    /** Netty echo with a window of messages outstanding: requests per second under pipelining. */
    ECHO_WINDOW("echo-window", true),
    /** A gRPC unary call, one at a time: request and response of the same small size. */
    GRPC_UNARY("grpc-unary", true),
    /** A gRPC server-streaming call: the server sends a run of messages as fast as flow control lets it. */
    GRPC_STREAM("grpc-stream", false);

    private final String label;
    private final boolean latency;

    Scenario(String label, boolean latency) {
        this.label = label;
        this.latency = latency;
    }

    @Override
    public String label() {
        return label;
    }

    /** Whether each request's round trip is timed (a stream's messages are not requests answered one by one). */
    boolean timesRequests() {
        return latency;
    }

    /** Whether the cell is a Netty echo (its sizes are {@code --sizes}). */
    boolean isEcho() {
        return this == ECHO_PINGPONG || this == ECHO_WINDOW;
    }

    /**
     * The test of a name.
     *
     * @param name e.g. {@code echo-pingpong}
     * @return it
     * @throws IllegalArgumentException naming the value and the names there are
     */
    static Scenario byLabel(String name) {
        return Labelled.byLabel(Scenario.class, name, "test");
    }
}
