package io.github.ucxffm;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.lang.foreign.Arena;

/**
 * The setting of the single-process tests: one context with the given features, two of its workers {@code a} and
 * {@code b}, an endpoint {@code ab} from a to b (and {@code ba} back, when asked for), and a confined arena for the
 * buffers; made before each test and closed after it.
 */
abstract class TwoWorkerTest {

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
        context = UcpContext.builder().features(features).build();
        a = context.newWorker();
        b = context.newWorker();
        ab = a.connect(b.address());
        if (bothWays) {
            ba = b.connect(a.address());
        }
        arena = Arena.ofConfined();
    }

    @AfterEach
    void closeWorkers() {
        context.close();
        arena.close();
    }
}
