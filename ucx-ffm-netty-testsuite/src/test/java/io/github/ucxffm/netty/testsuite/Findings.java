package io.github.ucxffm.netty.testsuite;

/**
 * Why a testsuite method is disabled for the UCX transport: each a transport finding (listed in this module's
 * README), the symptom observed on this transport as it stands. Remove the {@code @Disabled} when the finding is
 * fixed.
 */
final class Findings {

    /** F5, not applicable. */
    static final String BLOCKED_LOOP = "F5, not applicable: the leader's channelActive holds its event loop (awaits "
            + "the follower's close) and then expects its second write to fail because the follower closed with "
            + "SO_LINGER 0. With TCP the kernel takes the peer's reset in while the loop is held, and the write "
            + "system call fails; with UCX everything that arrives, the peer's reset included, is taken in by the "
            + "loop's own worker progress, which a held loop does not run: the write is handed to UCX and does not "
            + "fail (\"second write should have failed!\"; the connect, which hung before, now completes)";
    /** F6, not applicable. */
    static final String NO_BACKLOG = "F6, not applicable: a UCX client's connect completes only once the server has "
            + "created the endpoint of the connection request (ucp_ep_create), on the worker of the child channel's "
            + "own event loop (an endpoint cannot move between workers), and a server channel with AUTO_READ off "
            + "makes no child, so chooses no loop, until read() is called; there is no kernel that completes the "
            + "handshake first, so this test's connect().sync() before serverChannel.read() waits for ever";
    /** Not applicable. */
    static final String NIO_SERVER = "the server of this test is an NioServerSocketChannel (kernel TCP), which a UCX "
            + "client cannot talk to";
    /** F7. */
    static final String FAST_OPEN = "TCP fast open has no UCX counterpart (TCP_FASTOPEN_CONNECT is an unknown option) "
            + "and this test's server side is a ChannelInitializer<SocketChannel> (F1): the connect fails with "
            + "UCS_ERR_CONNECTION_RESET";
    /** Not the transport's. */
    static final String NO_TCNATIVE = "needs netty-tcnative's OpenSSL, which this build does not have "
            + "(NoClassDefFoundError io/netty/internal/tcnative/SSLPrivateKeyMethod); its JDK-provider case is the "
            + "other parameter";

    private Findings() {
    }
}
