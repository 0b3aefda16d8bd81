package io.github.ucxffm.netty.testsuite;

/**
 * Why a testsuite method is disabled for the UCX transport: each a transport finding (listed in this module's
 * README), the symptom observed on this transport as it stands. Remove the {@code @Disabled} when the finding is
 * fixed.
 */
final class Findings {

    /** F5. */
    static final String HALF_CLOSURE = "F5: the client's connect().sync() never completes (20 s timeout). In "
            + "testAutoCloseFalseDoesShutdownOutput, when the server child leads, its channelActive blocks the "
            + "child's loop (it awaits the follower's close) before the child has answered the client's hello, so "
            + "the UCX connect cannot complete (TCP completes it in the kernel); testAllDataReadClosure: cause not "
            + "isolated";
    /** F6. */
    static final String NO_BACKLOG = "F6: a UCX client's connect completes when the server's child channel answers "
            + "its hello, and a server channel with AUTO_READ off makes no child until read() is called (there is no "
            + "kernel backlog that completes the handshake first): this test's connect().sync() before "
            + "serverChannel.read() waits for ever";
    /** F6. */
    static final String CLOSED_BEFORE_HELLO = "F6: the server's child handler casts its ChannelHandlerContext to "
            + "DuplexChannel (ClassCastException) and so closes the child in channelActive; with TCP the client is "
            + "connected by then and sees the close as end of stream, with UCX the child closes before it answers "
            + "the client's hello, and the client's connect fails with UCS_ERR_CONNECTION_RESET";
    /** F8. */
    static final String READ_SHAPING = "F8: the read-shaping intervals are shorter than the test expects (\"The "
            + "interval of time is incorrect: 73 not> 100\"): reads go on after the handler turns AUTO_READ off, "
            + "cause not isolated";
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
