package io.github.ucxffm;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.lang.foreign.Arena;

/**
 * The base of the single-process tests: a {@link TwoWorkers} fixture with the given features, made before each test
 * and closed after it, its parts in fields: the context, workers {@code a} and {@code b}, the endpoint {@code ab}
 * from a to b (and {@code ba} back, when asked for) and a confined arena for the buffers.
 */
abstract class TwoWorkerTest {

    TwoWorkers workers;
    UcpContext context;
    UcpWorker a;
    UcpWorker b;
    UcpEndpoint ab;
    /** {@code null} unless the test class asked for both directions. */
    UcpEndpoint ba;
    Arena arena;

    private final boolean bothWays;
    private final UcpContext.Feature[] features;

    TwoWorkerTest(boolean bothWays, UcpContext.Feature... features) {
        this.bothWays = bothWays;
        this.features = features;
    }

    @BeforeEach
    void setUpWorkers() {
        TwoWorkers.Builder builder = TwoWorkers.builder(features);
        workers = (bothWays ? builder.bothWays() : builder).build();
        context = workers.context;
        a = workers.a;
        b = workers.b;
        ab = workers.ab;
        ba = workers.ba;
        arena = workers.arena;
    }

    @AfterEach
    void closeWorkers() {
        workers.close();
    }
}
