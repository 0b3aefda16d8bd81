package io.github.ucxffm.netty;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The UCX options the transport adds to its contexts of its own accord, and when it leaves them to the user. */
class UcxTransportConfigTest {

    @Test
    void shouldSendTcpInLargeSegmentsUnlessTheUserChoseASize() {
        Map<String, String> none = Map.of();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(none, name -> null));
        // set in the config (with or without the UCX_ prefix, which the builder strips), or in the environment
        UcxTransportConfig own = UcxTransportConfig.builder().config("UCX_TCP_TX_SEG_SIZE", "16k").build();
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(own.ucxConfig(), name -> null));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none,
                name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "8k" : null));
        // other options and variables change nothing
        UcxTransportConfig tls = UcxTransportConfig.builder().config("TLS", "tcp").build();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(tls.ucxConfig(),
                name -> name.equals("UCX_TLS") ? "tcp" : null));
    }
}
