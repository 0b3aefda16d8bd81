package io.github.ucxffm.netty;

import io.github.ucxffm.UcxVersion;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The UCX options the transport adds to its contexts of its own accord, and when it leaves them to the user. */
class UcxTransportConfigTest {

    private static final UcxVersion UCX_1_18 = new UcxVersion(1, 18, 1);

    @Test
    void shouldSendTcpInLargeSegmentsUnlessTheUserChoseASize() {
        Map<String, String> none = Map.of();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(none, name -> null,
                UCX_1_18));
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(none, name -> null,
                new UcxVersion(1, 23, 0)));
        // set in the config (with or without the UCX_ prefix, which the builder strips), or in the environment
        UcxTransportConfig own = UcxTransportConfig.builder().config("UCX_TCP_TX_SEG_SIZE", "16k").build();
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(own.ucxConfig(), name -> null, UCX_1_18));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none,
                name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "8k" : null, UCX_1_18));
        // other options and variables change nothing
        UcxTransportConfig tls = UcxTransportConfig.builder().config("TLS", "tcp").build();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(tls.ucxConfig(),
                name -> name.equals("UCX_TLS") ? "tcp" : null, UCX_1_18));
    }

    /** UCX 1.13 sends a large eager message over tcp in one call already, and warns about the option set this way. */
    @Test
    void shouldLeaveUcx113AsItIs() {
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of(), name -> null, new UcxVersion(1, 13, 1)));
    }

    /** What a context gets: the defaults for the UCX loaded here, then the config's own, which win. */
    @Test
    void shouldGiveContextsTheDefaultsOfTheLoadedUcxThenTheConfigsOptions() {
        UcxTransportConfig tls = UcxTransportConfig.builder().config("TLS", "tcp").build();
        Map<String, String> expected = new LinkedHashMap<>(UcxTransportConfig.contextDefaults(tls.ucxConfig(),
                System::getenv, UcxVersion.runtime()));
        expected.put("TLS", "tcp");
        assertEquals(expected, tls.contextOptions());
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(tls.contextOptions().keySet()), "defaults first");
        UcxTransportConfig own = UcxTransportConfig.builder().config("TCP_TX_SEG_SIZE", "16k").build();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "16k"), own.contextOptions());
    }
}
