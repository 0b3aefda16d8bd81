package io.github.ucxffm;

import static io.github.ucxffm.bindings.ucx_h.UCP_AM_FLAG_PERSISTENT_DATA;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_FLAG_WHOLE_MSG;

/**
 * Receives the active messages of one id on one worker, registered with {@link UcpWorker#setAmHandler}.
 * <p>
 * <b>Thread.</b> Runs on the thread that progresses the worker, inside {@link UcpWorker#progress()}; UCX 1.13
 * delivers even a worker's messages to itself there. The body must be short and must not progress the worker; it
 * may send, including a reply on {@link UcpAmMessage#replyEndpoint()}, and may start a receive of the message's
 * data.
 * <p>
 * <b>When.</b> Handlers see messages in the order they came. On Linux x86-64 a small eager message (up to 216 bytes
 * of header and data) of a handler without {@link #PERSISTENT_DATA} is copied into the worker's queue by a native
 * callback and handed on once {@code ucp_worker_progress} has returned, still inside {@code progress()}, without an
 * upcall (and without data to {@link UcpAmMessage#keep() keep}: it is a copy); other messages, and every message of
 * a {@link UcsThreadMode#MULTI} worker, on other platforms or with {@code -Ducxffm.am.queue=false}, are handed on from
 * inside {@code ucp_worker_progress} by an upcall. The rules above hold either way. A queued message's handler runs
 * after the other callbacks of the same {@code progress()} call (completions, endpoint errors); UCX promises no
 * order between those and active messages in any case.
 * <p>
 * <b>Validity.</b> The message and everything it hands out are valid only during the call, except what
 * {@link UcpAmMessage#keep()} returns, which owns the data until it is released or received.
 * <p>
 * <b>Errors.</b> An exception thrown by the handler does not reach UCX: the worker gives back any data the handler
 * kept and did not receive (a rendezvous sender then completes with {@link UcxCanceledException}), and rethrows the
 * exception from the {@code progress()} call that ran the handler.
 */
@FunctionalInterface
public interface UcpAmHandler {

    /**
     * {@code UCP_AM_FLAG_WHOLE_MSG}: the whole message in one call. UCX delivers messages of
     * {@code ucp_am_send_nbx} whole in any case; the flag is the default of {@link UcpWorker#setAmHandler(int,
     * UcpAmHandler)}.
     */
    int WHOLE_MESSAGE = UCP_AM_FLAG_WHOLE_MSG();

    /**
     * {@code UCP_AM_FLAG_PERSISTENT_DATA}: eager data always comes in a descriptor the handler may
     * {@link UcpAmMessage#keep() keep} beyond the call, at the cost of a copy for small messages that UCX would
     * otherwise hand over in place.
     */
    int PERSISTENT_DATA = UCP_AM_FLAG_PERSISTENT_DATA();

    /**
     * Handles one message.
     *
     * @param message a view of the message, reused by the worker: valid only until this method returns
     */
    void onMessage(UcpAmMessage message);
}
