package io.github.ucxffm.netty;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;
import io.github.ucxffm.UcxVersion;
import io.github.ucxffm.testsupport.UcxLogCapture;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The options the transport gives its contexts reach the UCX release loaded: UCX takes each without a word (it warns
 * "invalid configuration" at a worker's creation for an option no transport it opened knows, and UCX 1.23 refuses the
 * context outright), and, where UCX shows it, the value is in force. The names differ between releases
 * ({@link UcxTransportConfig#rxSegmentOption}); this is what catches a wrong one on each release of the matrix.
 */
class UcxContextOptionsTest {

    /**
     * Contexts made the way the transport makes them, for transports with tcp alone, UCX's default, shared memory
     * beside tcp and shared memory without tcp (where no tcp option may be given): a worker of each is created and
     * UCX logs no warning or error about the options.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp,self", "", "posix,sysv,cma,tcp,self", "posix,sysv,cma,self"})
    void shouldGiveContextsOnlyOptionsTheReleaseTakes(String tls) {
        UcxTransportConfig.Builder b = UcxTransportConfig.builder();
        if (!tls.isEmpty()) {
            b.config("TLS", tls);
        }
        UcxTransportConfig config = b.build();
        Map<String, String> options = config.contextOptions();
        assertWorkerMadeSilently(config);
        if (UcxTransportConfig.tlsMayUseTcp(tls.isEmpty() ? System.getenv("UCX_TLS") : tls)
                && System.getenv("UCX_TCP_RX_SEG_SIZE") == null) {
            String rx = UcxTransportConfig.rxSegmentOption(UcxVersion.runtime());
            if (rx != null) {
                assertEquals(UcxTransportConfig.TCP_SEGMENT_DEFAULT, options.get(rx), "receive segment in " + options);
            }
        }
    }

    /**
     * The transport's segments are in force, not only accepted, on each release: UCX refuses to open tcp, and so to
     * create a worker, with a receive segment smaller than the send segment. A send segment of 128k beside the
     * transport's options is taken (so its receive segment is 128k), and on 1.18 and later, where the transport sets
     * the send segment too, a receive segment of 64K put over the transport's is refused (so its send segment is
     * 128k).
     */
    @Test
    void shouldPutTheTcpSegmentsInForce() {
        UcxVersion ucx = UcxVersion.runtime();
        String rx = UcxTransportConfig.rxSegmentOption(ucx);
        Assumptions.assumeTrue(rx != null, "UCX " + ucx + ": the transport leaves the segments to UCX there");
        Assumptions.assumeTrue(System.getenv("UCX_TCP_RX_SEG_SIZE") == null
                && System.getenv("UCX_TCP_TX_SEG_SIZE") == null, "a tcp segment is set in the environment");
        Map<String, String> options = UcxTransportConfig.builder().config("TLS", "tcp,self").build().contextOptions();
        String tx = txSegmentOption(ucx);
        try (UcpContext context = context(options, Map.of(tx, "128k")); UcpWorker worker = context.newWorker()) {
            worker.progress();
        }
        if (ucx.atLeast(1, 18)) {
            try (UcpContext context = context(options, Map.of(rx, "64k"))) {
                UcxException refused = assertThrows(UcxException.class, context::newWorker,
                        "a 64K receive segment under the transport's send segment " + options);
                assertTrue(refused.getMessage().startsWith("ucp_worker_create"), refused.getMessage());
            }
        }
    }

    /**
     * A segment the user sets bounds the transport's default of the other: with the receive segment 32k alone, or the
     * send segment 256k with a receive segment of the same, workers are created and UCX says nothing.
     */
    @Test
    void shouldLetTheUsersSegmentBoundTheOther() {
        UcxVersion ucx = UcxVersion.runtime();
        String rx = UcxTransportConfig.rxSegmentOption(ucx);
        Assumptions.assumeTrue(rx != null, "UCX " + ucx + ": the transport leaves the segments to UCX there");
        String tx = txSegmentOption(ucx);
        for (Map<String, String> own : List.of(Map.of(rx, "32k"), Map.of(rx, "256k", tx, "256k"))) {
            UcxTransportConfig.Builder b = UcxTransportConfig.builder().config("TLS", "tcp,self");
            own.forEach(b::config);
            assertWorkerMadeSilently(b.build());
        }
    }

    /**
     * Makes a context as the transport does and a worker of it, and asserts that UCX logged no warning or error
     * meanwhile.
     */
    private static void assertWorkerMadeSilently(UcxTransportConfig config) {
        UcxVersion.runtime(); // UCX loaded through the bindings before the capture binds its logger
        List<UcxLogCapture.Entry> logged;
        try (UcxLogCapture log = UcxLogCapture.start()) {
            try (UcpContext context = UcxIoHandler.newContext(config); UcpWorker worker = context.newWorker()) {
                worker.progress();
            }
            logged = log.entries();
        }
        assertEquals(List.of(), logged.stream().map(e -> e + " (" + e.text() + ")").toList(),
                "UCX's warnings and errors for a context with " + config.contextOptions());
    }

    /** The name under which a context on {@code ucx} takes tcp's send segment: without the prefix on 1.13. */
    private static String txSegmentOption(UcxVersion ucx) {
        return ucx.atLeast(1, 14) ? UcxTransportConfig.TCP_SEGMENT : UcxTransportConfig.TCP_SEGMENT_UNPREFIXED;
    }

    /** A context as the transport makes one, with {@code over} put over its options. */
    private static UcpContext context(Map<String, String> options, Map<String, String> over) {
        UcpContext.Builder b = UcpContext.builder().features(UcpContext.Feature.AM, UcpContext.Feature.WAKEUP);
        options.forEach(b::config);
        over.forEach(b::config);
        return b.build();
    }
}
