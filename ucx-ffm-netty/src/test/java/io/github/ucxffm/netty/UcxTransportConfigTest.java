package io.github.ucxffm.netty;

import io.github.ucxffm.UcxVersion;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The UCX options the transport adds to its contexts of its own accord, and when it leaves them to the user. */
class UcxTransportConfigTest {

    private static final UcxVersion UCX_1_18 = new UcxVersion(1, 18, 1);
    private static final UcxTransportConfig.DataProtocol AUTO = UcxTransportConfig.DataProtocol.AUTOMATIC;

    @Test
    void shouldSendTcpInLargeSegmentsUnlessTheUserChoseASize() {
        Map<String, String> none = Map.of();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(none, name -> null,
                UCX_1_18, AUTO));
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(none, name -> null,
                new UcxVersion(1, 23, 0), AUTO));
        // set in the config (with or without the UCX_ prefix, which the builder strips), or in the environment
        UcxTransportConfig own = UcxTransportConfig.builder().config("UCX_TCP_TX_SEG_SIZE", "16k").build();
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(own.ucxConfig(), name -> null, UCX_1_18, AUTO));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none,
                name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "8k" : null, UCX_1_18, AUTO));
        // other options and variables change nothing
        UcxTransportConfig tls = UcxTransportConfig.builder().config("TLS", "sm,tcp").build();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "64k"), UcxTransportConfig.contextDefaults(tls.ucxConfig(),
                name -> name.equals("UCX_TLS") ? "tcp" : null, UCX_1_18, AUTO));
    }

    /**
     * Over tcp alone every data message goes eager, so the second rendezvous lane would only add an interface to poll:
     * one rail, on every release, unless the data may go by rendezvous ({@code BY_SIZE}), the transports are not tcp
     * alone, or the user chose the rails.
     */
    @Test
    void shouldUseOneRendezvousRailOverTcpAlone() {
        Map<String, String> one = Map.of("MAX_RNDV_RAILS", "1");
        UcxVersion ucx113 = new UcxVersion(1, 13, 1);
        for (String tls : List.of("tcp", "tcp,self", " self , TCP ")) {
            Map<String, String> options = Map.of("TLS", tls);
            assertEquals(one, UcxTransportConfig.contextDefaults(options, name -> null, ucx113, AUTO), tls);
            assertEquals(one, UcxTransportConfig.contextDefaults(options, name -> null, ucx113,
                    UcxTransportConfig.DataProtocol.EAGER), tls);
            assertEquals(Map.of(), UcxTransportConfig.contextDefaults(options, name -> null, ucx113,
                    UcxTransportConfig.DataProtocol.BY_SIZE), tls);
            assertEquals("1", UcxTransportConfig.contextDefaults(options, name -> null, UCX_1_18, AUTO)
                    .get("MAX_RNDV_RAILS"), tls);
        }
        // from the environment too, where the config names no transports; the config's own TLS wins over it
        assertEquals(one, UcxTransportConfig.contextDefaults(Map.of(), name -> name.equals("UCX_TLS") ? "tcp" : null,
                ucx113, AUTO));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TLS", "sm,tcp,self"),
                name -> name.equals("UCX_TLS") ? "tcp" : null, ucx113, AUTO));
        // anything that may bring in another transport, or no transports named at all (UCX's default: all)
        for (String tls : List.of("sm,tcp,self", "tcp,rc", "^sm", "^tcp", "self", "all", "")) {
            assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TLS", tls), name -> null, ucx113,
                    AUTO), tls);
        }
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of(), name -> null, ucx113, AUTO));
        // the user's choice of rails, in the config or the environment, stands
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TLS", "tcp", "MAX_RNDV_RAILS", "2"),
                name -> null, ucx113, AUTO));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TLS", "tcp"),
                name -> name.equals("UCX_MAX_RNDV_RAILS") ? "2" : null, ucx113, AUTO));
        // what a context of such a config gets on the UCX loaded here
        UcxTransportConfig tcp = UcxTransportConfig.builder().config("TLS", "tcp").build();
        if (System.getenv("UCX_MAX_RNDV_RAILS") == null) {
            assertEquals("1", tcp.contextOptions().get("MAX_RNDV_RAILS"));
        }
    }

    /** UCX 1.13 sends a large eager message over tcp in one call already, and warns about the option set this way. */
    @Test
    void shouldLeaveUcx113AsItIs() {
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of(), name -> null, new UcxVersion(1, 13, 1), AUTO));
    }

    /**
     * Data messages over tcp fit one of UCX's tcp segments less the headroom for headers: the receive segment (64K
     * unless set), and from 1.18 on no more than the send segment, which the transport's own default makes 64k there.
     */
    @Test
    void shouldCutTcpMessagesToTheSegmentUcxUses() {
        UcxVersion ucx113 = new UcxVersion(1, 13, 1);
        int headroom = UcxTransportConfig.TCP_SEGMENT_HEADROOM;
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), name -> null, ucx113));
        // 1.18: the options a context gets carry the transport's send segment of 64k
        Map<String, String> defaults118 = UcxTransportConfig.contextDefaults(Map.of(), name -> null, UCX_1_18, AUTO);
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(defaults118, name -> null, UCX_1_18));
        // UCX's own 8K send segment, where nothing sets one, cuts messages on 1.18, not on 1.13
        assertEquals(8192 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), name -> null, UCX_1_18));
        Function<String, String> smallSend = name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "8k" : null;
        assertEquals(8192 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), smallSend, UCX_1_18));
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), smallSend, ucx113));
        // a receive segment from the environment counts on every release, one from the options from 1.18 on only
        Function<String, String> rx256 = name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "256k" : null;
        assertEquals(262144 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), rx256, ucx113));
        Map<String, String> rx16 = Map.of("TCP_RX_SEG_SIZE", "16K", "TCP_TX_SEG_SIZE", "64k");
        assertEquals(16384 - headroom, UcxTransportConfig.tcpMessageBytes(rx16, rx256, UCX_1_18));
        assertEquals(262144 - headroom, UcxTransportConfig.tcpMessageBytes(rx16, rx256, ucx113),
                "UCX 1.13 refuses tcp options set through the context: the environment's stands");
        // never below the floor; a value UCX would not take counts as its default
        assertEquals(UcxTransportConfig.TCP_MESSAGE_MIN, UcxTransportConfig.tcpMessageBytes(
                Map.of(), name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "1k" : null, ucx113));
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(
                Map.of(), name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "lots" : null, ucx113));
        // what a config gives on the UCX loaded here is the same sum
        UcxTransportConfig config = UcxTransportConfig.builder().config("TLS", "tcp").build();
        assertEquals(UcxTransportConfig.tcpMessageBytes(config.contextOptions(), System::getenv, UcxVersion.runtime()),
                config.tcpMessageBytes());
    }

    @Test
    void shouldReadSizesAsUcxWritesThem() {
        assertEquals(65536, UcxTransportConfig.parseUcxBytes("65536"));
        assertEquals(65536, UcxTransportConfig.parseUcxBytes("64k"));
        assertEquals(65536, UcxTransportConfig.parseUcxBytes(" 64K "));
        assertEquals(65536, UcxTransportConfig.parseUcxBytes("64kb"));
        assertEquals(65536, UcxTransportConfig.parseUcxBytes("64KB"));
        assertEquals(1 << 20, UcxTransportConfig.parseUcxBytes("1m"));
        assertEquals(2L << 30, UcxTransportConfig.parseUcxBytes("2G"));
        assertEquals(100, UcxTransportConfig.parseUcxBytes("100b"));
        assertEquals(1L << 40, UcxTransportConfig.parseUcxBytes("1024g"));
        for (String bad : new String[] {"", "k", "b", "-1k", "1.5k", "inf", "auto", "64kk", "9999999999999999999k", "999999999999g"}) {
            assertEquals(-1, UcxTransportConfig.parseUcxBytes(bad), bad);
        }
    }

    /** What a context gets: the defaults for the UCX loaded here, then the config's own, which win. */
    @Test
    void shouldGiveContextsTheDefaultsOfTheLoadedUcxThenTheConfigsOptions() {
        UcxTransportConfig tls = UcxTransportConfig.builder().config("TLS", "tcp").build();
        Map<String, String> expected = new LinkedHashMap<>(UcxTransportConfig.contextDefaults(tls.ucxConfig(),
                System::getenv, UcxVersion.runtime(), AUTO));
        expected.put("TLS", "tcp");
        assertEquals(expected, tls.contextOptions());
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(tls.contextOptions().keySet()), "defaults first");
        UcxTransportConfig own = UcxTransportConfig.builder().config("TCP_TX_SEG_SIZE", "16k").build();
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "16k"), own.contextOptions());
    }

    /**
     * The automatic protocol sends data eager up to the shared-memory limit over shared memory alone (tcp beside it
     * included), and leaves the choice to UCX over anything else, over tcp alone (where every message goes eager
     * anyway) and whenever the protocol was chosen.
     */
    @Test
    void shouldSendDataEagerUpToTheLimitOverSharedMemoryOnly() {
        UcxTransportConfig auto = UcxTransportConfig.builder().build();
        int limit = UcxTransportConfig.SHARED_MEMORY_EAGER_DEFAULT;
        assertEquals(limit, auto.sharedMemoryEagerBytes());
        assertEquals(limit, auto.eagerUpTo(Set.of("sysv", "posix", "cma")));
        assertEquals(limit, auto.eagerUpTo(Set.of("posix", "tcp")));
        assertEquals(limit, auto.eagerUpTo(Set.of("self")));
        assertEquals(0, auto.eagerUpTo(Set.of("tcp")), "tcp alone: eager at every size, not by this limit");
        assertEquals(0, auto.eagerUpTo(Set.of("posix", "rc_mlx5")), "an RDMA lane");
        assertEquals(0, auto.eagerUpTo(Set.of("sysv", "xpmem")), "a zero-copy module");
        assertEquals(0, auto.eagerUpTo(Set.of()), "lanes unknown");

        UcxTransportConfig bySize = UcxTransportConfig.builder()
                .dataProtocol(UcxTransportConfig.DataProtocol.BY_SIZE).build();
        assertEquals(0, bySize.eagerUpTo(Set.of("sysv", "posix")));
        UcxTransportConfig smaller = UcxTransportConfig.builder().sharedMemoryEagerBytes(4096).build();
        assertEquals(4096, smaller.eagerUpTo(Set.of("sysv", "posix")));
        UcxTransportConfig none = UcxTransportConfig.builder().sharedMemoryEagerBytes(0).build();
        assertEquals(0, none.eagerUpTo(Set.of("sysv", "posix")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UcxTransportConfig.builder().sharedMemoryEagerBytes(-1));
        assertEquals("sharedMemoryEagerBytes must not be negative: -1", e.getMessage());
    }
}
