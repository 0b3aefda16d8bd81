package io.github.ucxffm.netty;

import io.github.ucxffm.UcxVersion;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The UCX options the transport adds to its contexts of its own accord, and when it leaves them to the user. */
class UcxTransportConfigTest {

    private static final UcxVersion UCX_1_13 = new UcxVersion(1, 13, 1);
    private static final UcxVersion UCX_1_18 = new UcxVersion(1, 18, 1);
    private static final UcxTransportConfig.DataProtocol AUTO = UcxTransportConfig.DataProtocol.AUTOMATIC;

    /**
     * Segments of 128k where tcp may be among the transports: receive and send from 1.18 on, the receive segment alone
     * on 1.13 and under the name 1.13's context takes, nothing where that was not tried (1.14 to 1.17) or where the
     * user chose a size, and never a receive segment smaller than the send segment (UCX would refuse to open tcp).
     */
    @Test
    void shouldGiveTcpLargeSegmentsUnlessTheUserChoseASize() {
        Map<String, String> none = Map.of();
        Map<String, String> both = Map.of("TCP_RX_SEG_SIZE", "128k", "TCP_TX_SEG_SIZE", "128k");
        assertEquals(both, UcxTransportConfig.contextDefaults(none, name -> null, UCX_1_18, AUTO));
        assertEquals(both, UcxTransportConfig.contextDefaults(none, name -> null, new UcxVersion(1, 23, 0), AUTO));
        assertEquals(Map.of("RX_SEG_SIZE", "128k"), UcxTransportConfig.contextDefaults(none, name -> null, UCX_1_13,
                AUTO));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none, name -> null, new UcxVersion(1, 15, 0), AUTO));
        // either set in the config (with or without the UCX_ prefix, which the builder strips), or in the environment
        UcxTransportConfig ownTx = UcxTransportConfig.builder().config("UCX_TCP_TX_SEG_SIZE", "16k").build();
        assertEquals(Map.of("TCP_RX_SEG_SIZE", "128k"), UcxTransportConfig.contextDefaults(ownTx.ucxConfig(),
                name -> null, UCX_1_18, AUTO));
        assertEquals(Map.of("TCP_RX_SEG_SIZE", "128k"), UcxTransportConfig.contextDefaults(none,
                name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "8k" : null, UCX_1_18, AUTO));
        // a receive segment of the user's bounds the send segment (UCX refuses to open tcp with a receive segment
        // smaller than the send segment), and a larger one leaves it at 128k
        Function<String, String> rxInEnvironment = name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "32k" : null;
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "32k"), UcxTransportConfig.contextDefaults(none, rxInEnvironment,
                UCX_1_18, AUTO));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none, rxInEnvironment, UCX_1_13, AUTO));
        for (String key : List.of("TCP_RX_SEG_SIZE", "RX_SEG_SIZE")) {
            Map<String, String> own = Map.of(key, "32k");
            assertEquals(Map.of(), UcxTransportConfig.contextDefaults(own, name -> null, UCX_1_13, AUTO), key);
            assertEquals(Map.of("TCP_TX_SEG_SIZE", "32k"), UcxTransportConfig.contextDefaults(own, name -> null,
                    UCX_1_18, AUTO), key);
        }
        assertEquals(Map.of("TCP_TX_SEG_SIZE", "128k"), UcxTransportConfig.contextDefaults(
                Map.of("TCP_RX_SEG_SIZE", "1m"), name -> null, UCX_1_18, AUTO));
        // one UCX would not read leaves the other unset too (UCX refuses it itself)
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TCP_RX_SEG_SIZE", "lots"), name -> null,
                UCX_1_18, AUTO));
        // a send segment of the user's above 128k leaves the receive segment to the user too, on every release
        Function<String, String> largeTx = name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "256k" : null;
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none, largeTx, UCX_1_18, AUTO));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none, largeTx, UCX_1_13, AUTO));
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TX_SEG_SIZE", "256k"), name -> null,
                UCX_1_13, AUTO));
        assertEquals(Map.of("RX_SEG_SIZE", "128k"), UcxTransportConfig.contextDefaults(none,
                name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "128k" : null, UCX_1_13, AUTO));
        // transports that may include tcp; the config's own TLS wins over the environment's
        for (String tls : List.of("sm,tcp", "tcp", "all", "^sm", "\\tcp", "tcp:aux,sm", " TCP ")) {
            assertEquals(both.keySet(), UcxTransportConfig.contextDefaults(Map.of("TLS", tls), name -> null, UCX_1_18,
                    AUTO).keySet().stream().filter(k -> k.endsWith("SEG_SIZE")).collect(Collectors.toSet()), tls);
            assertTrue(UcxTransportConfig.tlsMayUseTcp(tls), tls);
        }
        UcxTransportConfig smTcp = UcxTransportConfig.builder().config("TLS", "sm,tcp").build();
        assertEquals(both, UcxTransportConfig.contextDefaults(smTcp.ucxConfig(),
                name -> name.equals("UCX_TLS") ? "sm" : null, UCX_1_18, AUTO));
        // and transports without it: an option of a transport not opened draws UCX's warning
        for (String tls : List.of("sm,self", "posix,sysv,cma,self", "^tcp", "^sm,tcp", "self", "rc,ud")) {
            assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TLS", tls), name -> null, UCX_1_18,
                    AUTO), tls);
            assertEquals(Map.of(), UcxTransportConfig.contextDefaults(Map.of("TLS", tls), name -> null, UCX_1_13,
                    AUTO), tls);
            assertFalse(UcxTransportConfig.tlsMayUseTcp(tls), tls);
        }
        assertEquals(Map.of(), UcxTransportConfig.contextDefaults(none, name -> name.equals("UCX_TLS") ? "sm" : null,
                UCX_1_18, AUTO));
    }

    /**
     * Over tcp alone every data message goes eager, so the second rendezvous lane would only add an interface to poll:
     * one rail, on every release, unless the data may go by rendezvous ({@code BY_SIZE}), the transports are not tcp
     * alone, or the user chose the rails.
     */
    @Test
    void shouldUseOneRendezvousRailOverTcpAlone() {
        String one = "1";
        for (String tls : List.of("tcp", "tcp,self", " self , TCP ")) {
            Map<String, String> options = Map.of("TLS", tls);
            assertEquals(one, rails(options, name -> null, UCX_1_13, AUTO), tls);
            assertEquals(one, rails(options, name -> null, UCX_1_13,
                    UcxTransportConfig.DataProtocol.EAGER), tls);
            assertNull(rails(options, name -> null, UCX_1_13,
                    UcxTransportConfig.DataProtocol.BY_SIZE), tls);
            assertEquals(one, rails(options, name -> null, UCX_1_18, AUTO), tls);
        }
        // from the environment too, where the config names no transports; the config's own TLS wins over it
        assertEquals(one, rails(Map.of(), name -> name.equals("UCX_TLS") ? "tcp" : null,
                UCX_1_13, AUTO));
        assertNull(rails(Map.of("TLS", "sm,tcp,self"),
                name -> name.equals("UCX_TLS") ? "tcp" : null, UCX_1_13, AUTO));
        // anything that may bring in another transport, or no transports named at all (UCX's default: all)
        for (String tls : List.of("sm,tcp,self", "tcp,rc", "^sm", "^tcp", "self", "all", "")) {
            assertNull(rails(Map.of("TLS", tls), name -> null, UCX_1_13,
                    AUTO), tls);
        }
        assertNull(rails(Map.of(), name -> null, UCX_1_13, AUTO));
        // the user's choice of rails, in the config or the environment, stands
        assertNull(rails(Map.of("TLS", "tcp", "MAX_RNDV_RAILS", "2"),
                name -> null, UCX_1_13, AUTO));
        assertNull(rails(Map.of("TLS", "tcp"),
                name -> name.equals("UCX_MAX_RNDV_RAILS") ? "2" : null, UCX_1_13, AUTO));
        // what a context of such a config gets on the UCX loaded here
        UcxTransportConfig tcp = UcxTransportConfig.builder().config("TLS", "tcp").build();
        if (System.getenv("UCX_MAX_RNDV_RAILS") == null) {
            assertEquals("1", tcp.contextOptions().get("MAX_RNDV_RAILS"));
        }
    }

    /** The rendezvous rails {@link UcxTransportConfig#contextDefaults} sets, or {@code null}. */
    private static String rails(Map<String, String> options, Function<String, String> environment, UcxVersion ucx,
                                UcxTransportConfig.DataProtocol protocol) {
        return UcxTransportConfig.contextDefaults(options, environment, ucx, protocol).get("MAX_RNDV_RAILS");
    }

    /**
     * Data messages over tcp fit one of UCX's tcp segments less the headroom for headers: the receive segment (64K
     * unless set), and from 1.18 on no more than the send segment (8K unless set); the transport's own defaults make
     * both 128k.
     */
    @Test
    void shouldCutTcpMessagesToTheSegmentUcxUses() {
        int headroom = UcxTransportConfig.TCP_SEGMENT_HEADROOM;
        // what a context gets: the transport's 128k segments, under the names that reach each release
        for (UcxVersion ucx : List.of(UCX_1_13, UCX_1_18)) {
            Map<String, String> defaults = UcxTransportConfig.contextDefaults(Map.of(), name -> null, ucx, AUTO);
            assertEquals(131072 - headroom, UcxTransportConfig.tcpMessageBytes(defaults, name -> null, ucx),
                    ucx::toString);
        }
        // UCX's own segments where nothing sets them: the receive segment's 64K on 1.13, the 8K send segment on 1.18
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), name -> null, UCX_1_13));
        assertEquals(8192 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), name -> null, UCX_1_18));
        Function<String, String> smallSend = name -> name.equals("UCX_TCP_TX_SEG_SIZE") ? "8k" : null;
        assertEquals(8192 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of("TCP_RX_SEG_SIZE", "128k"), smallSend,
                UCX_1_18));
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), smallSend, UCX_1_13));
        // a receive segment from the environment counts on every release; one from the options only under the name
        // that reaches the release (1.13 refuses TCP_RX_SEG_SIZE through the context, 1.18 RX_SEG_SIZE)
        Function<String, String> rx256 = name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "256k" : null;
        assertEquals(262144 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), rx256, UCX_1_13));
        Map<String, String> rx16 = Map.of("TCP_RX_SEG_SIZE", "16K", "TCP_TX_SEG_SIZE", "64k");
        assertEquals(16384 - headroom, UcxTransportConfig.tcpMessageBytes(rx16, rx256, UCX_1_18));
        assertEquals(262144 - headroom, UcxTransportConfig.tcpMessageBytes(rx16, rx256, UCX_1_13));
        Map<String, String> rx16Unprefixed = Map.of("RX_SEG_SIZE", "16K", "TCP_TX_SEG_SIZE", "64k");
        assertEquals(16384 - headroom, UcxTransportConfig.tcpMessageBytes(rx16Unprefixed, rx256, UCX_1_13));
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(rx16Unprefixed, rx256, UCX_1_18));
        // 1.14 to 1.17: UCX's segments, as the transport sets none there
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(Map.of(), name -> null,
                new UcxVersion(1, 16, 0)));
        // never below the floor; a value UCX would not take counts as its default
        assertEquals(UcxTransportConfig.TCP_MESSAGE_MIN, UcxTransportConfig.tcpMessageBytes(
                Map.of(), name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "1k" : null, UCX_1_13));
        assertEquals(65536 - headroom, UcxTransportConfig.tcpMessageBytes(
                Map.of(), name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "lots" : null, UCX_1_13));
        // what a config gives on the UCX loaded here is the same sum
        UcxTransportConfig config = UcxTransportConfig.builder().config("TLS", "tcp").build();
        assertEquals(UcxTransportConfig.tcpMessageBytes(config.contextOptions(), System::getenv, UcxVersion.runtime()),
                config.tcpMessageBytes());
    }

    /**
     * What a side takes in over tcp, which it tells its peer in the hello, is its receive segment less the headroom:
     * on 1.18 a smaller send segment limits what the side sends, not what it receives.
     */
    @Test
    void shouldTellThePeerTheReceiveSegment() {
        int headroom = UcxTransportConfig.TCP_SEGMENT_HEADROOM;
        Map<String, String> rx64tx16 = Map.of("TCP_RX_SEG_SIZE", "64k", "TCP_TX_SEG_SIZE", "16k");
        assertEquals(65536 - headroom, UcxTransportConfig.tcpReceiveBytes(rx64tx16, name -> null, UCX_1_18));
        assertEquals(16384 - headroom, UcxTransportConfig.tcpMessageBytes(rx64tx16, name -> null, UCX_1_18));
        assertEquals(262144 - headroom, UcxTransportConfig.tcpReceiveBytes(Map.of("RX_SEG_SIZE", "256k"),
                name -> null, UCX_1_13));
        assertEquals(65536 - headroom, UcxTransportConfig.tcpReceiveBytes(Map.of(), name -> null, UCX_1_13));
        assertEquals(131072 - headroom, UcxTransportConfig.tcpReceiveBytes(Map.of(),
                name -> name.equals("UCX_TCP_RX_SEG_SIZE") ? "128k" : null, new UcxVersion(1, 16, 0)));
        UcxTransportConfig config = UcxTransportConfig.builder().config("TLS", "tcp").build();
        assertEquals(UcxTransportConfig.tcpReceiveBytes(config.contextOptions(), System::getenv, UcxVersion.runtime()),
                config.tcpReceiveBytes());
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
        UcxTransportConfig own = UcxTransportConfig.builder().config("TLS", "sm,self").config("TCP_TX_SEG_SIZE", "16k")
                .config("MAX_RNDV_RAILS", "2").build();
        assertEquals(Map.of("TLS", "sm,self", "TCP_TX_SEG_SIZE", "16k", "MAX_RNDV_RAILS", "2"), own.contextOptions(),
                "nothing of the transport's own where the config sets it or tcp is not among the transports");
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
