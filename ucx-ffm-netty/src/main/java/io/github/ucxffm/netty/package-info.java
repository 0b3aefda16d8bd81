/**
 * A Netty 4.2 transport over UCX: {@link io.github.ucxffm.netty.UcxIoHandler} (one UCX worker per event loop),
 * {@link io.github.ucxffm.netty.UcxSocketChannel} and {@link io.github.ucxffm.netty.UcxServerSocketChannel}.
 * <pre>{@code
 * EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, UcxIoHandler.newFactory(
 *         UcxTransportConfig.builder().config("TLS", "tcp").build()));
 * new ServerBootstrap().group(group).channel(UcxServerSocketChannel.class).childHandler(...).bind(host, 0);
 * new Bootstrap().group(group).channel(UcxSocketChannel.class).handler(...).connect(host, port);
 * }</pre>
 *
 * <h2>Connections</h2>
 * A server channel listens with a UCX listener on its loop's worker. A connection request is handed, as endpoint
 * parameters, to the child channel, which creates the server endpoint on its own loop's worker when registered
 * ({@code ucp_ep_create} with the request on a worker other than the listener's: UCX moves the connection there;
 * checked on UCX 1.13.1, 1.18.1 and 1.23). The client creates its endpoint to the socket address, then the two
 * sides exchange a hello: the client sends {@code HELLO} (with the reply flag, so that the server's handler finds
 * the accepted endpoint, and so the child channel), carrying the client's connection id, receive window and the
 * largest data message it takes in over tcp; the server answers {@code HELLO_ACK} with its own. From then on each
 * side addresses the other's messages by the id the other chose: every data and control header starts with the
 * receiver's connection id, looked up in a hash map of the worker. The client's connect completes on {@code HELLO_ACK}; a failed endpoint before it fails the
 * connect with {@link java.net.ConnectException}, and {@code CONNECT_TIMEOUT_MILLIS} with
 * {@link io.netty.channel.ConnectTimeoutException}. The server sends {@code HELLO_ACK} inside the worker's callback
 * that received {@code HELLO}, and its child channel becomes active ({@code channelActive}) only once UCX is done
 * with that answer (over tcp the answer can wait for this worker's connection to the client): whatever the child's
 * {@code channelActive} does (write, hold its loop, close), the client's connect completes, and a child closed there
 * gives the client end of stream, as with TCP. A child whose client
 * goes before its hello closes without being active; one whose hello does not come within its
 * {@code CONNECT_TIMEOUT_MILLIS} closes. There is no backlog: the server's endpoint, whose creation completes the
 * client's UCX connection, is made on the child's own loop's worker, so only once the server channel has read the
 * connection (with {@code AUTO_READ} off, after {@code read()}).
 *
 * <h2>Messages</h2>
 * Active message {@code 0x5543} carries data, header {@code [int dst][int flags][long seq]} (little-endian), the
 * bytes as the message's data. A flush sends the flushed buffers as one message of at most
 * {@link io.github.ucxffm.netty.UcxTransportConfig#maxMessageBytes()} (more if needed), gathered from the
 * buffers themselves (the scatter-gather send; heap buffers are copied to direct ones first), which stay retained
 * until UCX completes the send; over UCX's tcp transport alone, which sends six pieces per socket call, a message of
 * more than four pieces and at most 64 KiB is copied into one buffer first. A {@code FileRegion} is read into
 * pooled direct buffers and sent the same way (UCX has no sendfile). Whether a data message goes eager or by
 * rendezvous is UCX's choice by size, except on a connection whose lanes all use UCX's tcp transport, where every
 * data message is eager, and over shared memory, where a data message of up to 256 KiB is eager
 * ({@link io.github.ucxffm.netty.UcxTransportConfig.DataProtocol}). The receiver copies an eager message once into
 * a direct buffer of the channel's allocator; a rendezvous message is fetched by UCX straight into such a buffer.
 * UCX may complete messages of one
 * endpoint out of order (a rendezvous fetch outlasts later eager messages): the receiver passes data up strictly by
 * {@code seq}, holding early arrivals. Flag {@code EOS} (a message without data, in sequence) is the end of the
 * stream ({@code shutdownOutput}); {@code EOS|CLOSING} is sent by {@code close()}: the reader sees end of stream
 * after all data, and the endpoint failure that follows the peer's close is not reported as an error;
 * {@code EOS|CLOSING|RESET}, sent by a {@code close()} with {@code SO_LINGER} 0, fails the reader's stream at once
 * ({@code IOException} "Connection reset by peer"), as a TCP reset does.
 * <p>
 * Active message {@code 0x5544} is control, header {@code [int dst][int type][long value][int src][int window]}:
 * {@code HELLO} and {@code HELLO_ACK} (value = the largest data message the sender takes in over tcp, its tcp
 * receive segment less the headroom for headers), and {@code CREDIT}. Over tcp alone a side cuts its data messages to
 * the smaller of its own send limit and the peer's: UCX's tcp transport aborts the process that receives a message
 * larger than its receive segment, and segments may differ between the two sides (set by the user on one of them).
 *
 * <h2>Flow control</h2>
 * Each side may have at most the peer's receive window (its {@code SO_RCVBUF}, else
 * {@link io.github.ucxffm.netty.UcxTransportConfig#windowBytes()}) of bytes sent and not yet passed to the peer's
 * pipeline. The receiver gives credit ({@code CREDIT}, value = bytes) as its pipeline takes data, once a quarter
 * of its window has been taken. A sender without credit sends nothing more: the writes stay in Netty's outbound
 * buffer, whose water marks turn {@code isWritable()} false and fire {@code channelWritabilityChanged}, as a full
 * TCP socket does. A reader with {@code AUTO_READ} off therefore holds at most one window, and a writer that
 * respects {@code isWritable()} holds at most the high water mark plus one message.
 *
 * <h2>Close and failure</h2>
 * {@code close()} sends {@code EOS|CLOSING}, waits for the channel's sends in flight (a rendezvous message is
 * complete only once the peer has fetched its data, which it cannot from a closed endpoint; {@code ucp_ep_flush}
 * does not wait for active messages), then flushes the endpoint and closes it by force, without blocking the loop
 * (at most two seconds for each); a channel whose peer closed first sends nothing and
 * closes its endpoint at once (the peer's end is gone: a flush would only time out). A peer's death or a link
 * failure (the endpoint's error callback, with peer error handling on, the default) reaches the pipeline as
 * {@code exceptionCaught} with an {@link java.io.IOException}, then {@code channelInactive} (tested with a peer
 * process killed by SIGKILL, over TCP).
 * With peer error handling off (which lets UCX 1.13 use shared memory), a dead peer may go unnoticed.
 */
package io.github.ucxffm.netty;
