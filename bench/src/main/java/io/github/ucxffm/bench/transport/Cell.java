package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.compare.CompareResults;

/**
 * One measurement's shape, run over each transport.
 *
 * @param scenario what runs
 * @param size     the message size in bytes (request and response alike; a stream's messages)
 */
record Cell(Scenario scenario, int size) {

    /** {@code echo-pingpong 64 B}, {@code grpc-stream 64 KiB}. */
    String label() {
        return scenario.label() + " " + CompareResults.formatSize(size);
    }
}
