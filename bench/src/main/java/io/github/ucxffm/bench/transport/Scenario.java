package io.github.ucxffm.bench.transport;

import java.util.Locale;

/** What a cell of {@code bench transport} runs over a transport. */
enum Scenario {
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

    /** The name on the command line, in the table and in the CSV. */
    String label() {
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
     * The scenario of a name.
     *
     * @param name e.g. {@code echo-pingpong}
     * @return the scenario
     * @throws IllegalArgumentException naming the value and the names there are
     */
    static Scenario byLabel(String name) {
        for (Scenario s : values()) {
            if (s.label.equals(name.trim().toLowerCase(Locale.ROOT))) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown test '" + name + "' (echo-pingpong, echo-window, grpc-unary, "
                + "grpc-stream)");
    }
}
