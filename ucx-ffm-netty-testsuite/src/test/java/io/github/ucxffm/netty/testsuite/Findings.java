package io.github.ucxffm.netty.testsuite;

/**
 * Why a testsuite method is disabled for the UCX transport: each a transport finding (listed in this module's
 * README), the symptom observed on this transport as it stands. Remove the {@code @Disabled} when the finding is
 * fixed.
 */
final class Findings {

    /** F1. */
    static final String NOT_YET_CONNECTED = "F1: shutdownInput()/shutdownOutput() of a channel that is not yet "
            + "connected fails with java.nio.channels.ClosedChannelException, not the not-yet-connected failure this "
            + "test expects";
    /** F2. */
    static final String RECV_ALLOCATOR = "F2: a read hands up what arrived regardless of the channel's "
            + "RecvByteBufAllocator (its buffer size and maxMessagesPerRead): this test counts the reads of a small "
            + "allocator and gets fewer (testReadPendingIsResetAfterEachRead: expected 2 but was 1; "
            + "testAutoReadOffDuringReadOnlyReadsOneTime: more than one read after autoRead was turned off)";
    /** F3. */
    static final String FILE_REGION = "F3: UcxSocketChannel writes ByteBufs only: a FileRegion write fails with "
            + "UnsupportedOperationException (unsupported message type ... expected ByteBuf), and the tests that "
            + "wait for the region's bytes time out (60 s each)";
    /** F4. */
    static final String SO_LINGER = "F4: SO_LINGER=0 is accepted but a close with it is an ordinary close: the client "
            + "gets channelInactive without an IOException (the test then fails with NullPointerException on the "
            + "missing cause)";
    /** F5. */
    static final String HALF_CLOSURE = "F5: times out (20 s) waiting for the half-closure events this test expects "
            + "(ALLOW_HALF_CLOSURE, AUTO_CLOSE false, AUTO_READ false, small RecvByteBufAllocator); cause not isolated";
    /** F5, the one that fails at once. */
    static final String HALF_CLOSURE_CONNECT = "F5: the client's connect fails at once with ConnectException "
            + "(UCS_ERR_ENDPOINT_TIMEOUT) in this test (ALLOW_HALF_CLOSURE, AUTO_READ off on the server)";
    /** F6. */
    static final String READ_BEFORE_ACTIVE = "F6: with AUTO_READ off, the data the peer sent is not delivered after "
            + "read() is called (testAutoReadOffNoDataReadUntilReadCalled times out after 10 s; "
            + "readMustBePendingUntilChannelIsActive, read() before the connect completed, times out after 30 s)";
    /** F7. */
    static final String CLOSE_FORCIBLY = "F7: times out (60 s): the server child is closed from its accept with "
            + "SO_LINGER 0 and the test waits for the client side to end; cause not isolated";

    private Findings() {
    }
}
