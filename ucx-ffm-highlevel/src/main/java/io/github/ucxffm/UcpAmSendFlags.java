package io.github.ucxffm;

import static io.github.ucxffm.bindings.ucx_h.UCP_AM_SEND_FLAG_EAGER;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_SEND_FLAG_REPLY;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_SEND_FLAG_RNDV;

/**
 * Flags of an active-message send ({@code enum ucp_send_am_flags}), combined with {@code |} and passed to
 * {@link UcpEndpoint#sendAm}. Constants only; there is nothing to create or close.
 */
public final class UcpAmSendFlags {

    /** No flag: UCX picks the protocol by size, and the receiver gets no reply endpoint. */
    public static final int NONE = 0;

    /**
     * {@code UCP_AM_SEND_FLAG_REPLY}: the receiver's handler gets an endpoint to answer on,
     * {@link UcpAmMessage#replyEndpoint()}.
     */
    public static final int REPLY = UCP_AM_SEND_FLAG_REPLY();

    /**
     * {@code UCP_AM_SEND_FLAG_EAGER}: eager protocol only, whatever the size; the data arrives with the message
     * (in fragments that UCX reassembles when it is large). Excludes {@link #RNDV}.
     */
    public static final int EAGER = UCP_AM_SEND_FLAG_EAGER();

    /**
     * {@code UCP_AM_SEND_FLAG_RNDV}: rendezvous protocol only, whatever the size; the receiver gets a descriptor
     * and fetches the data with {@link UcpAmData#receive}. Excludes {@link #EAGER}.
     */
    public static final int RNDV = UCP_AM_SEND_FLAG_RNDV();

    static final int ALL = REPLY | EAGER | RNDV;

    private UcpAmSendFlags() {
    }

    /** Rejects unknown bits and contradictory protocol choices before UCX sees them. */
    static void check(int flags) {
        if ((flags & ~ALL) != 0) {
            throw new IllegalArgumentException("unknown active-message send flags 0x" + Integer.toHexString(flags
                    & ~ALL) + " (use UcpAmSendFlags)");
        }
        if ((flags & EAGER) != 0 && (flags & RNDV) != 0) {
            throw new IllegalArgumentException("UcpAmSendFlags.EAGER and UcpAmSendFlags.RNDV exclude each other");
        }
    }
}
