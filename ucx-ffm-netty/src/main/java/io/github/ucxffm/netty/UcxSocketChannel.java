package io.github.ucxffm.netty;

import io.github.ucxffm.UcpAmData;
import io.github.ucxffm.UcpAmMessage;
import io.github.ucxffm.UcpAmSendFlags;
import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AbstractChannel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.FileRegion;
import io.netty.channel.IoEvent;
import io.netty.channel.IoRegistration;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.concurrent.Future;
import io.netty.util.internal.StringUtil;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * A byte-stream channel over a UCX endpoint, the UCX counterpart of a TCP socket channel (a Netty
 * {@link SocketChannel}, so that code written for TCP channels takes it as it is): made by a
 * {@code Bootstrap} with {@code channel(UcxSocketChannel.class)} on a group of {@link UcxIoHandler} loops, or
 * accepted by a {@link UcxServerSocketChannel}. Writes ({@code ByteBuf}s, {@code FileRegion}s) arrive at the peer in
 * order, as written; message boundaries are not kept, as with TCP. See the package comment for the protocol.
 * <p>
 * <b>Options.</b> {@code ALLOW_HALF_CLOSURE}, {@code AUTO_READ}, {@code WRITE_BUFFER_WATER_MARK},
 * {@code CONNECT_TIMEOUT_MILLIS} behave as for TCP. {@code SO_RCVBUF}, set before the channel connects, is its
 * receive window (else {@link UcxTransportConfig#windowBytes()}). {@code SO_LINGER} 0 makes {@code close()} a reset
 * for the peer ({@code IOException}, then {@code channelInactive}). {@code SO_SNDBUF} and {@code TCP_NODELAY} are
 * accepted and have no effect: a flush is sent at once, within the peer's window.
 * <p>
 * <b>Threads.</b> As any Netty channel: its event loop runs it; the counters may be read from any thread.
 */
public final class UcxSocketChannel extends AbstractChannel implements SocketChannel {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(UcxSocketChannel.class);
    private static final ChannelMetadata METADATA = new ChannelMetadata(false, 16);
    private static final int MAX_IOV = 64;
    /** Up to this many bytes, a gathered data message over tcp alone is copied into one buffer ({@link #sendData}). */
    static final int GATHER_COPY_MAX = 64 * 1024;
    /**
     * The pieces of data UCX's tcp transport sends in one socket call beside the message's headers (its default
     * {@code UCX_TCP_MAX_IOV} of 6, less the two headers); a message of more is copied ({@link #sendData}).
     */
    static final int TCP_PIECES_PER_CALL = 4;
    /**
     * Data messages from this size on complete through a callback; smaller ones are polled, since they nearly always
     * complete when sent (eager, copied by UCX) and then need no operation record at all.
     */
    static final int CALLBACK_SEND_FROM = 8192;

    private final UcxSocketChannelConfig config;
    /** For an accepted channel: the connection request's endpoint parameters, used once when registered. */
    private UcpEndpoint.Params acceptParams;
    /** For an accepted channel until registered: its connection request, refused if it closes unregistered. */
    private UcpConnectionRequest acceptRequest;
    private final boolean accepted;
    private InetSocketAddress local;
    private InetSocketAddress remote;
    /** Where a client's socket is bound ({@code bind()}, or the local address of {@code connect}), if anywhere. */
    private InetSocketAddress bindAddress;

    private UcxIoHandler handler;
    private IoRegistration registration;
    // Written on the loop only; volatile where Netty's state queries (isActive, isOpen...) read them from any thread.
    private volatile UcpEndpoint ep;
    private int localId;
    private int peerId;
    private volatile boolean open = true;
    /** The hello exchange is done: the peer's id and window are known. */
    private volatile boolean connected;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;
    private boolean eosSent;
    /** The peer said it closes: the failure of its endpoint that follows is no error. */
    private boolean peerClosing;
    /** The peer closed with {@code SO_LINGER} 0: {@link #failure} is the reset, reported as it is. */
    private boolean resetByPeer;
    private boolean queued;
    private boolean readRequested;
    /** The peer's end of stream is in {@link #inOrder}: what precedes it is read out whether read() was called. */
    private boolean eosQueued;
    private boolean flushNeeded;
    private boolean connectFinished;
    /** An accepted channel got its client's hello and its answer went out: {@code channelActive} is due. */
    private boolean activeNeeded;
    /** An accepted channel's {@code HELLO_ACK} while UCX still holds it: the channel becomes active when it completes. */
    private SendOp helloAck;
    private boolean failureHandled;
    private Throwable failure;

    private long sendCredit;
    private long seqOut;
    private long seqIn;
    private long consumedUnacked;
    private int window;
    /** What the pipeline gets next, in order: a {@code ByteBuf} (plain data), or an {@link Inbound} (flagged). */
    private final ArrayDeque<Object> inOrder = new ArrayDeque<>();
    private LongObjectHashMap<Inbound> early;

    private ChannelPromise connectPromise;
    private Future<?> connectTimeout;
    private final Collector collector = new Collector();
    /** Sends handed to UCX and not yet completed: the endpoint is closed only after them. */
    private int sendsInFlight;
    /** {@link #dataFlags()}, or -1 before the first data message. */
    private int dataFlags = -1;
    /** Whether every lane of the endpoint is UCX's tcp transport; set with {@link #dataFlags}. */
    private boolean tcpAlone;
    /** The largest data message; set with {@link #dataFlags}. */
    private int messageLimit;
    /**
     * The largest data message the peer takes in over tcp, from its hello
     * ({@link UcxTransportConfig#tcpReceiveBytes()}); 0 if it gave none.
     */
    private long peerTcpReceive;
    /** Data messages up to this size go eager whatever UCX's threshold, 0 for none; set with {@link #dataFlags}. */
    private int eagerUpTo;
    /** Closed while sends were in flight: the endpoint, closed when the last of them completes. */
    private UcpEndpoint closeAfterSends;

    private volatile long bytesSent;
    private volatile long bytesReceived;
    private volatile long messagesSent;
    /** Data messages whose gathered pieces were copied into one buffer before the send ({@link #sendData}). */
    private long gathersCopied;
    private volatile long messagesReceived;

    /** A client channel, for {@code Bootstrap}. */
    public UcxSocketChannel() {
        super(null);
        this.config = new UcxSocketChannelConfig(this);
        this.accepted = false;
    }

    UcxSocketChannel(UcxServerSocketChannel parent, UcpConnectionRequest request, UcpEndpoint.Params params,
                     InetSocketAddress remote, InetSocketAddress local) {
        super(parent);
        this.config = new UcxSocketChannelConfig(this);
        this.accepted = true;
        this.acceptRequest = request;
        this.acceptParams = params;
        this.remote = remote;
        this.local = local;
    }

    // ---- Channel -------------------------------------------------------------------------------------------------

    @Override
    public UcxSocketChannelConfig config() {
        return config;
    }

    @Override
    public ServerSocketChannel parent() {
        return (ServerSocketChannel) super.parent();
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && ep != null && connected; // an accepted channel: once its client's hello came
    }

    @Override
    public ChannelMetadata metadata() {
        return METADATA;
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) super.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return (InetSocketAddress) super.remoteAddress();
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return remote;
    }

    /**
     * Payload bytes this channel handed to UCX.
     *
     * @return bytes
     */
    public long bytesSent() {
        return bytesSent;
    }

    /**
     * Payload bytes that arrived for this channel from UCX.
     *
     * @return bytes
     */
    public long bytesReceived() {
        return bytesReceived;
    }

    /**
     * Data active messages this channel sent.
     *
     * @return messages
     */
    public long messagesSent() {
        return messagesSent;
    }

    /** Data messages sent from one copy of their gathered pieces, for tests; read on the channel's loop. */
    long gathersCopied() {
        return gathersCopied;
    }

    /**
     * Data active messages that arrived for this channel.
     *
     * @return messages
     */
    public long messagesReceived() {
        return messagesReceived;
    }

    // ---- DuplexChannel -------------------------------------------------------------------------------------------

    @Override
    public boolean isInputShutdown() {
        return inputShutdown || !isActive();
    }

    @Override
    public boolean isOutputShutdown() {
        return outputShutdown || !isActive();
    }

    @Override
    public boolean isShutdown() {
        return isInputShutdown() && isOutputShutdown();
    }

    @Override
    public ChannelFuture shutdownOutput() {
        return shutdownOutput(newPromise());
    }

    @Override
    public ChannelFuture shutdownOutput(ChannelPromise promise) {
        EventLoop loop = eventLoop();
        if (loop.inEventLoop()) {
            ((AbstractUnsafe) unsafe()).shutdownOutput(promise);
        } else {
            loop.execute(() -> ((AbstractUnsafe) unsafe()).shutdownOutput(promise));
        }
        return promise;
    }

    @Override
    public ChannelFuture shutdownInput() {
        return shutdownInput(newPromise());
    }

    @Override
    public ChannelFuture shutdownInput(ChannelPromise promise) {
        EventLoop loop = eventLoop();
        if (loop.inEventLoop()) {
            shutdownInput0(promise);
        } else {
            loop.execute(() -> shutdownInput0(promise));
        }
        return promise;
    }

    private void shutdownInput0(ChannelPromise promise) {
        if (!isActive()) {
            promise.setFailure(open ? new NotYetConnectedException() : new ClosedChannelException());
            return;
        }
        inputShutdown = true;
        if (handler != null) {
            handler.markReady(ready); // drop what waits, and credit it
        }
        promise.setSuccess();
    }

    @Override
    public ChannelFuture shutdown() {
        return shutdown(newPromise());
    }

    @Override
    public ChannelFuture shutdown(ChannelPromise promise) {
        ChannelFuture out = shutdownOutput();
        out.addListener(f -> shutdownInput().addListener(g -> {
            Throwable cause = f.cause() != null ? f.cause() : g.cause();
            if (cause != null) {
                promise.tryFailure(cause);
            } else {
                promise.trySuccess();
            }
        }));
        return promise;
    }

    // ---- AbstractChannel -----------------------------------------------------------------------------------------

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new UcxUnsafe();
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return UcxIoHandler.isCompatible(loop);
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        UcxIoHandler.register(this, (UcxUnsafe) unsafe(), promise, r -> {
            registration = r;
            handler = r.attachment();
            if (accepted && acceptParams != null) {
                acceptOnThisLoop();
            }
        });
    }

    /** Accepts the connection on this loop's worker (another than the listener's, usually). */
    private void acceptOnThisLoop() {
        UcpEndpoint.Params params = acceptParams;
        acceptParams = null;
        acceptRequest = null;
        UcpWorker worker = handler.worker();
        ep = worker.connect(params.peerErrorHandling(handler.config().peerErrorHandling())
                .onError(this::onEndpointError));
        localId = handler.register(this);
        handler.accepted(ep, this);
        window = receiveWindow();
        UcxTransportStats.opened();
        int timeoutMillis = config.getConnectTimeoutMillis();
        if (timeoutMillis > 0) {
            // a client whose hello never comes (without peer error handling its endpoint may not fail either)
            connectTimeout = eventLoop().schedule(() -> {
                if (!connected) {
                    unsafe().close(unsafe().voidPromise());
                }
            }, timeoutMillis, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    protected void doDeregister() {
        if (registration != null) {
            registration.cancel();
        }
    }

    @Override
    protected void doBind(SocketAddress localAddress) {
        if (ep != null) {
            throw new AlreadyConnectedException(); // as a kernel socket refuses a bind once connected
        }
        bindAddress = localAddress(localAddress); // UCX binds the client's socket to it when it connects
        local = bindAddress;
    }

    /**
     * Checks a client's local address: a resolved {@code InetSocketAddress}. Whether UCX may use it (the high-level
     * API refuses IPv6 unless told otherwise) is decided where the remote address is, by the connect: UCX binds the
     * socket only then, and an address in use fails the connect too.
     */
    private static InetSocketAddress localAddress(SocketAddress address) {
        if (!(address instanceof InetSocketAddress a)) {
            throw new IllegalArgumentException("expected an InetSocketAddress: " + address);
        }
        if (a.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return a;
    }

    @Override
    protected void doDisconnect() throws Exception {
        doClose();
    }

    private int receiveWindow() {
        int rcv = config.getReceiveBufferSize();
        return rcv > 0 ? Math.max(rcv, 4096) : handler.config().windowBytes();
    }

    private void doConnect(InetSocketAddress address) {
        if (handler == null) {
            throw new IllegalStateException("not registered");
        }
        UcpWorker worker = handler.worker();
        UcpEndpoint.Params params = UcpEndpoint.Params.socket(address)
                .peerErrorHandling(handler.config().peerErrorHandling()).onError(this::onEndpointError);
        if (bindAddress != null) {
            params.localAddress(bindAddress);
        }
        ep = worker.connect(params);
        remote = address;
        localId = handler.register(this);
        window = receiveWindow();
        UcxTransportStats.opened();
        sendControl(Wire.HELLO, 0, handler.config().tcpReceiveBytes(), UcpAmSendFlags.REPLY);
    }

    @Override
    protected void doClose() {
        if (!open) {
            return;
        }
        open = false;
        ChannelPromise p = connectPromise;
        if (p != null) {
            connectPromise = null;
            p.tryFailure(new ClosedChannelException());
        }
        cancelConnectTimeout();
        if (acceptRequest != null) {
            UcpConnectionRequest r = acceptRequest;
            acceptRequest = null;
            acceptParams = null;
            ((UcxServerSocketChannel) super.parent()).reject(r); // closed before it was registered, so accepted
        }
        UcpEndpoint e = ep;
        if (handler != null && localId != 0) {
            handler.forget(localId, e);
        }
        if (e != null && peerClosing) {
            // The peer closed first and closes its endpoint: nothing more reaches it, and a flush would wait for
            // an answer that does not come (UCX logs "error during flush: Endpoint timeout" without peer error
            // handling). Closed at once.
            UcxIoHandler.closeForce(e);
        } else if (e != null) {
            if (connected && failure == null && !e.isFailed() && !eosSent) {
                try {
                    sendEos(config.getSoLinger() == 0 ? Wire.FLAG_EOS | Wire.FLAG_CLOSING | Wire.FLAG_RESET
                            : Wire.FLAG_EOS | Wire.FLAG_CLOSING);
                } catch (IOException | RuntimeException ignored) {
                    // the endpoint failed meanwhile: the peer learns from its own endpoint's error
                }
            }
            if (sendsInFlight > 0) {
                closeAfterSends(e);
            } else {
                handler.closeEndpoint(e);
            }
        }
        releaseInbound();
    }

    /**
     * Closes the endpoint once the sends in flight completed. A flush does not wait for them: a rendezvous message
     * is complete only when the peer has fetched its data, which it cannot once the endpoint is closed (the peer's
     * fetch then fails with an endpoint timeout, and the data written before {@code close()} is lost). Bounded: a
     * peer that fetches nothing for as long as a close may flush has its endpoint closed all the same.
     */
    private void closeAfterSends(UcpEndpoint e) {
        closeAfterSends = e;
        try {
            eventLoop().schedule(() -> {
                if (closeAfterSends == e) {
                    closeAfterSends = null;
                    handler.closeEndpoint(e);
                }
            }, UcxIoHandler.CLOSE_FLUSH_NANOS, TimeUnit.NANOSECONDS);
        } catch (RuntimeException rejected) {
            closeAfterSends = null; // the loop is shutting down: its handler flushes and closes what is left
            handler.closeEndpoint(e);
        }
    }

    private void sendEnded() {
        if (--sendsInFlight == 0 && closeAfterSends != null) {
            UcpEndpoint e = closeAfterSends;
            closeAfterSends = null;
            handler.closeEndpoint(e);
        }
    }

    private void releaseInbound() {
        for (Object x; (x = inOrder.poll()) != null; ) {
            if (x instanceof ByteBuf b) {
                b.release();
            } else {
                ((Inbound) x).releaseBuffer();
            }
        }
        if (early != null) {
            for (Inbound x : early.values()) {
                if (x.done) {
                    x.releaseBuffer(); // the others are still being received: they free their buffer when done
                }
            }
            early.clear();
        }
    }

    @Override
    protected void doShutdownOutput() throws Exception {
        if (outputShutdown) {
            return;
        }
        if (ep == null) {
            throw new NotYetConnectedException();
        }
        outputShutdown = true;
        if (connected && !eosSent) {
            sendEos(Wire.FLAG_EOS);
        } // else: sent when the hello exchange completes
    }

    /** {@code AUTO_READ} turned off: a read requested before is forgotten, as a TCP channel stops reading. */
    void clearReadRequested() {
        if (!isRegistered()) {
            readRequested = false; // a child option, set before the channel has a loop
            return;
        }
        EventLoop loop = eventLoop();
        if (loop.inEventLoop()) {
            readRequested = false;
        } else {
            loop.execute(() -> readRequested = false);
        }
    }

    @Override
    protected void doBeginRead() {
        if (!open) {
            return;
        }
        readRequested = true;
        if (!inOrder.isEmpty() && handler != null) {
            handler.markReady(ready);
        }
    }

    @Override
    protected Object filterOutboundMessage(Object msg) {
        if (msg instanceof ByteBuf buf) {
            int pieces = buf.nioBufferCount();
            if (buf.isDirect() && (buf.hasMemoryAddress() || (pieces > 0 && pieces <= MAX_IOV))) {
                return buf; // sent from where it is
            }
            // heap memory, or a composite of more pieces than one message gathers: copied once
            int n = buf.readableBytes();
            ByteBuf direct = alloc().directBuffer(n);
            direct.writeBytes(buf, buf.readerIndex(), n);
            buf.release();
            return direct;
        }
        if (msg instanceof FileRegion) {
            return msg; // read into direct buffers as it is sent
        }
        throw new UnsupportedOperationException("unsupported message type: " + StringUtil.simpleClassName(msg)
                + " (expected ByteBuf or FileRegion)");
    }

    // ---- writing -------------------------------------------------------------------------------------------------

    @Override
    protected void doWrite(ChannelOutboundBuffer in) throws Exception {
        if (!connected || eosSent || ep == null) {
            return; // an accepted channel before its client's hello: written once the peer is known
        }
        dataFlags(); // decides the message limit too
        while (!in.isEmpty() && sendCredit > 0) {
            int limit = (int) Math.min(sendCredit, messageLimit);
            if (in.current() instanceof FileRegion region) {
                writeRegion(in, region, limit);
                continue;
            }
            Collector c = collector;
            c.start(limit);
            in.forEachFlushedMessage(c);
            if (c.total == 0) {
                in.remove(); // an empty buffer
                continue;
            }
            sendData(c);
            in.removeBytes(c.total);
        }
    }

    /**
     * Sends up to {@code limit} bytes of a file region, read into a pooled direct buffer (UCX has no sendfile); the
     * region leaves the outbound buffer once all of it is sent.
     */
    private void writeRegion(ChannelOutboundBuffer in, FileRegion region, int limit) throws IOException {
        long left = region.count() - region.transferred();
        if (left <= 0) {
            in.remove();
            return;
        }
        int n = (int) Math.min(left, limit);
        ByteBuf buf = alloc().directBuffer(n, n);
        try {
            RegionSink sink = new RegionSink(buf);
            while (buf.isWritable() && region.transferred() < region.count()) {
                long got = region.transferTo(sink, region.transferred());
                if (got <= 0) {
                    break;
                }
            }
            int read = buf.readableBytes();
            if (read == 0 && region.transferred() >= region.count()) {
                in.remove(); // a region that counts as sent without having given bytes
                return;
            }
            if (read == 0) {
                throw new IOException("the file region ended after " + region.transferred() + " of its "
                        + region.count() + " bytes");
            }
            Collector c = collector;
            c.start(read);
            c.processMessage(buf);
            sendData(c);
            in.progress(read);
        } finally {
            buf.release();
        }
        if (region.transferred() >= region.count()) {
            in.remove();
        }
    }

    /** Where a file region's bytes go: a direct buffer, taking at most what it has room for. */
    private static final class RegionSink implements WritableByteChannel {
        private final ByteBuf buf;

        RegionSink(ByteBuf buf) {
            this.buf = buf;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = Math.min(src.remaining(), buf.writableBytes());
            ByteBuffer part = src.slice(src.position(), n);
            buf.writeBytes(part);
            src.position(src.position() + n);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    /**
     * The send flags of this connection's data messages, chosen before the first one
     * ({@link UcxTransportConfig.DataProtocol}), and with them the largest data message: the config's, and over tcp
     * alone with eager data no more than UCX sends in one fragment ({@link UcxTransportConfig#tcpMessageBytes()}) and
     * the peer takes in ({@link #peerTcpReceive}), and the size up to which a message goes eager whatever the flags
     * ({@link UcxTransportConfig#eagerUpTo}).
     */
    private int dataFlags() {
        int f = dataFlags;
        if (f < 0) {
            UcxTransportConfig config = handler.config();
            java.util.Set<String> lanes = lanes();
            tcpAlone = tcpAlone(lanes);
            eagerUpTo = config.eagerUpTo(lanes);
            f = switch (config.dataProtocol()) {
                case EAGER -> UcpAmSendFlags.EAGER;
                case BY_SIZE -> UcpAmSendFlags.NONE;
                case AUTOMATIC -> tcpAlone ? UcpAmSendFlags.EAGER : UcpAmSendFlags.NONE;
            };
            int limit = config.maxMessageBytes();
            if (tcpAlone && f == UcpAmSendFlags.EAGER) {
                limit = Math.min(limit, config.tcpMessageBytes());
                if (peerTcpReceive > 0) { // a message above the peer's receive segment would abort the peer's process
                    limit = (int) Math.min(limit, peerTcpReceive);
                }
            }
            messageLimit = limit;
            dataFlags = f;
        }
        return f;
    }

    /**
     * The largest data message this channel sends, once its first has been sent; 0 before.
     *
     * @return bytes
     */
    int messageLimit() {
        return messageLimit;
    }

    /** The transports of the endpoint's lanes; none when UCX's description cannot be had (a diagnostic print). */
    private java.util.Set<String> lanes() {
        try {
            return transports();
        } catch (RuntimeException e) {
            LOG.debug("the lanes of {} are unknown; UCX chooses its data protocol by size", this, e);
            return java.util.Set.of();
        }
    }

    /** Whether a connection's lanes all use UCX's tcp transport (none known: no). */
    static boolean tcpAlone(java.util.Set<String> transports) {
        return !transports.isEmpty() && transports.stream().allMatch("tcp"::equals);
    }

    private void sendData(Collector c) throws IOException {
        int flags = dataFlags();
        if (tcpAlone && c.segmentCount > TCP_PIECES_PER_CALL && c.total <= GATHER_COPY_MAX) {
            // UCX's tcp transport sends at most 6 pieces per socket call (UCX_TCP_MAX_IOV, headers included), and UCP
            // splits a longer list into fragments of that many: a flush of 64 small writes went out in 7 sendmsg
            // calls on average. One copy into one buffer sends it in one.
            try {
                c.gatherByCopy(alloc());
            } catch (RuntimeException e) { // no direct memory for the copy: the write fails, nothing stays retained
                c.releaseAll();
                throw sendFailed(e);
            }
            gathersCopied++;
        }
        if (c.total <= eagerUpTo) {
            flags = UcpAmSendFlags.EAGER;
        }
        ByteBuf header = alloc().directBuffer(Wire.DATA_HEADER);
        header.writeIntLE(peerId).writeIntLE(0).writeLongLE(seqOut);
        if (c.total >= CALLBACK_SEND_FROM) {
            sendDataByCallback(c, header, flags);
            return;
        }
        long token;
        try {
            MemorySegment h = Wire.segment(header, 0, Wire.DATA_HEADER);
            token = c.segmentCount == 1 ? ep.sendAm(Wire.AM_DATA, h, c.segments[0], 0, c.total, flags)
                    : ep.sendAm(Wire.AM_DATA, h, Arrays.copyOf(c.segments, c.segmentCount), flags);
        } catch (RuntimeException e) {
            header.release();
            c.releaseAll();
            throw sendFailed(e);
        }
        sentData(c);
        if (token == UcpWorker.COMPLETED) {
            header.release(); // done at once (eager, copied by UCX): nothing to keep
            c.releaseAll();
        } else {
            SendOp op = new SendOp(header, Arrays.copyOf(c.bufs, c.count));
            op.token = token;
            handler.addOp(op);
        }
        c.clear();
    }

    /**
     * A large send: completed through its callback, so that the loop does not test it after every progress (with
     * a window of them in flight, those tests took a large share of a streaming sender's time).
     */
    private void sendDataByCallback(Collector c, ByteBuf header, int flags) throws IOException {
        SendOp op = new SendOp(header, null);
        int status;
        try {
            MemorySegment h = Wire.segment(header, 0, Wire.DATA_HEADER);
            UcxIoHandler.beginCallback(op);
            if (c.segmentCount == 1) {
                ep.sendAm(Wire.AM_DATA, h, c.segments[0], 0, c.total, flags, op);
            } else {
                ep.sendAm(Wire.AM_DATA, h, Arrays.copyOf(c.segments, c.segmentCount), flags, op);
            }
            status = handler.endCallback(op);
        } catch (RuntimeException e) {
            op.done(e); // never in flight
            c.releaseAll();
            throw sendFailed(e);
        }
        if (status < 0) {
            UcxException e = UcxException.of(op.operation(), status);
            op.done(e);
            c.releaseAll();
            throw sendFailed(e);
        }
        sentData(c);
        if (status == UcxIoHandler.Op.IN_FLIGHT) {
            op.keep(Arrays.copyOf(c.bufs, c.count)); // released when the callback has come
            c.clear();
        } else {
            op.done(null); // done at once
            c.releaseAll();
        }
    }

    /** Counts a data message handed to UCX. */
    private void sentData(Collector c) {
        seqOut++;
        sendCredit -= c.total;
        bytesSent += c.total;
        messagesSent++;
        UcxTransportStats.sent(c.total);
    }

    private IOException sendFailed(RuntimeException e) {
        return new IOException("UCX send failed on " + this + ": " + e.getMessage(), e);
    }

    private void submitted(UcxIoHandler.Op op, long token) {
        if (token == UcpWorker.COMPLETED) {
            op.done(null);
        } else {
            op.token = token;
            handler.addOp(op);
        }
    }

    private void sendEos(int flags) throws IOException {
        ByteBuf header = alloc().directBuffer(Wire.DATA_HEADER);
        header.writeIntLE(peerId).writeIntLE(flags).writeLongLE(seqOut);
        try {
            sendHeader(Wire.AM_DATA, header, Wire.DATA_HEADER, 0);
        } catch (RuntimeException e) {
            throw new IOException("UCX send failed on " + this + ": " + e.getMessage(), e);
        }
        seqOut++;
        eosSent = true;
    }

    /** Sends a control message; returns its send while UCX holds it, or {@code null} once it is done. */
    private SendOp sendControl(int type, int dst, long value, int flags) {
        ByteBuf header = alloc().directBuffer(Wire.CONTROL_HEADER);
        header.writeIntLE(dst).writeIntLE(type).writeLongLE(value).writeIntLE(localId).writeIntLE(window);
        return sendHeader(Wire.AM_CONTROL, header, Wire.CONTROL_HEADER, flags);
    }

    /**
     * Sends an active message that is its header alone; the header is released when UCX is done with it. Returns the
     * send while UCX holds it, or {@code null} when it completed at once.
     */
    private SendOp sendHeader(int id, ByteBuf header, int length, int flags) {
        SendOp op = new SendOp(header, null);
        long token;
        try {
            token = ep.sendAm(id, Wire.segment(header, 0, length), MemorySegment.NULL, 0, 0, flags);
        } catch (RuntimeException e) {
            op.done(e); // never in flight
            throw e;
        }
        submitted(op, token);
        return token == UcpWorker.COMPLETED ? null : op;
    }

    /** Gathers flushed buffers for one message, each retained until the send completes. */
    private static final class Collector implements ChannelOutboundBuffer.MessageProcessor {
        final ByteBuf[] bufs = new ByteBuf[MAX_IOV];
        final MemorySegment[] segments = new MemorySegment[MAX_IOV];
        int count;
        int segmentCount;
        int total;
        int remaining;

        void start(int limit) {
            count = 0;
            segmentCount = 0;
            total = 0;
            remaining = limit;
        }

        void clear() {
            Arrays.fill(bufs, 0, count, null);
            Arrays.fill(segments, 0, segmentCount, null);
            count = 0;
            segmentCount = 0;
        }

        /**
         * Replaces the gathered pieces by one pooled direct buffer holding their bytes, and gives the written buffers
         * back (their bytes are sent from the copy).
         */
        void gatherByCopy(ByteBufAllocator alloc) {
            ByteBuf one = alloc.directBuffer(total, total);
            try {
                for (int i = 0; i < segmentCount; i++) {
                    MemorySegment piece = segments[i];
                    one.writeBytes(piece.asByteBuffer());
                }
            } catch (RuntimeException e) {
                one.release();
                throw e;
            }
            releaseAll();
            bufs[count++] = one;
            segmentCount = Wire.segments(one, one.readerIndex(), total, segments, 0);
        }

        /** Gives back the references taken for a send that is over (or never started). */
        void releaseAll() {
            for (int i = 0; i < count; i++) {
                bufs[i].release();
            }
            clear();
        }

        @Override
        public boolean processMessage(Object msg) {
            if (!(msg instanceof ByteBuf buf)) {
                return false;
            }
            int n = Math.min(buf.readableBytes(), remaining);
            if (n == 0) {
                return remaining > 0;
            }
            int pieces = buf.hasMemoryAddress() ? 1 : buf.nioBufferCount();
            if (segmentCount + pieces > MAX_IOV) {
                return false;
            }
            segmentCount = Wire.segments(buf, buf.readerIndex(), n, segments, segmentCount);
            bufs[count++] = buf.retain();
            total += n;
            remaining -= n;
            return remaining > 0 && count < MAX_IOV;
        }
    }

    /**
     * A send in flight: the header and the written buffers, released when UCX is done with them; counted in
     * {@link #sendsInFlight} from its creation to its completion.
     */
    private final class SendOp extends UcxIoHandler.Op {
        private ByteBuf header;
        private ByteBuf[] bufs;

        SendOp(ByteBuf header, ByteBuf[] bufs) {
            this.header = header;
            this.bufs = bufs;
            sendsInFlight++;
        }

        /** The written buffers of a send in flight, released with it. */
        void keep(ByteBuf[] written) {
            bufs = written;
        }

        @Override
        String operation() {
            return "ucp_am_send_nbx";
        }

        @Override
        void done(Throwable failure) {
            abandon();
            sendEnded();
            if (this == helloAck) {
                helloAck = null;
                if (failure == null) {
                    activeNeeded = true;
                    handler.markReady(ready);
                } // else the endpoint failed: its error closes the channel, never active
            }
        }

        @Override
        void abandon() {
            if (header != null) {
                header.release();
                header = null;
            }
            if (bufs != null) {
                for (ByteBuf b : bufs) {
                    b.release();
                }
                bufs = null;
            }
        }
    }

    // ---- what arrives (UCX callbacks: record, then let the loop process) ----------------------------------------

    private final UcxIoHandler.Ready ready = new UcxIoHandler.Ready() {
        @Override
        public void process() {
            UcxSocketChannel.this.process();
        }

        @Override
        public boolean queued() {
            return queued;
        }

        @Override
        public void queued(boolean q) {
            queued = q;
        }

        @Override
        public String toString() {
            return UcxSocketChannel.this.toString();
        }
    };

    private void onEndpointError(UcxException e) {
        if (failure == null) {
            failure = e;
        }
        handler.markReady(ready);
    }

    void onHello(int src, int peerWindow, long peerTcpReceive) {
        peerId = src;
        sendCredit = peerWindow;
        this.peerTcpReceive = peerTcpReceive;
        connected = true;
        // Answered here, in the callback, and active only once UCX is done with the answer (over tcp it can wait for
        // the connection to the client and so for this worker's progress): the client's connect completes whatever
        // this channel's channelActive then does with the loop.
        helloAck = sendControl(Wire.HELLO_ACK, src, handler.config().tcpReceiveBytes(), 0);
        activeNeeded = helloAck == null;
        flushNeeded = true;
        handler.markReady(ready);
    }

    void onHelloAck(int src, int peerWindow, long peerTcpReceive) {
        peerId = src;
        sendCredit = peerWindow;
        this.peerTcpReceive = peerTcpReceive;
        connected = true;
        connectFinished = true;
        handler.markReady(ready);
    }

    void onCredit(long bytes) {
        sendCredit += bytes;
        flushNeeded = true;
        handler.markReady(ready);
    }

    void onData(UcpAmMessage m, int flags, long seq) {
        if ((flags & Wire.FLAG_RESET) != 0) {
            if (failure == null) {
                failure = new IOException("Connection reset by peer (the peer closed with SO_LINGER 0)");
                resetByPeer = true;
            }
            handler.markReady(ready);
            return;
        }
        if ((flags & Wire.FLAG_CLOSING) != 0) {
            peerClosing = true;
        }
        long length = m.dataLength();
        if (length == 0) {
            Inbound in = new Inbound(seq, flags);
            in.done = true;
            arrived(in);
            return;
        }
        int len = (int) length;
        bytesReceived += len;
        messagesReceived++;
        UcxTransportStats.received(len);
        ByteBuf buf = config.getAllocator().directBuffer(len, len);
        if (m.isRendezvous()) {
            receiveRendezvous(m, buf, len, flags, seq);
            return;
        }
        m.copyData(0, Wire.segment(buf, 0, len), 0, len);
        buf.writerIndex(len);
        if (flags == 0 && seq == seqIn && (early == null || early.isEmpty())) {
            inOrder.add(buf); // the usual case, in order with nothing held back: the buffer alone, no record
            seqIn++;
            handler.markReady(ready);
            return;
        }
        Inbound in = new Inbound(seq, flags);
        in.buf = buf;
        in.length = len;
        in.done = true;
        arrived(in);
    }

    /** Fetches a rendezvous message straight into {@code buf}; it takes its place in order when complete. */
    private void receiveRendezvous(UcpAmMessage m, ByteBuf buf, int len, int flags, long seq) {
        UcxTransportStats.rendezvous();
        Inbound in = new Inbound(seq, flags);
        in.buf = buf;
        in.length = len;
        UcpAmData data = m.keep();
        int status;
        try {
            UcxIoHandler.beginCallback(in); // completed through its callback: nothing to test per loop turn
            data.receive(Wire.segment(buf, 0, len), 0, in);
            status = handler.endCallback(in);
        } catch (RuntimeException e) {
            in.releaseBuffer();
            throw e;
        }
        if (status < 0) {
            in.releaseBuffer();
            throw UcxException.of(in.operation(), status);
        }
        if (status != UcxIoHandler.Op.IN_FLIGHT) {
            in.finish();
        }
        arrived(in);
    }

    private void arrived(Inbound in) {
        if (in.seq == seqIn && in.done && (early == null || early.isEmpty())) {
            inOrder(in);
        } else {
            if (early == null) {
                early = new LongObjectHashMap<>();
            }
            early.put(in.seq, in);
            drainEarly();
        }
        if (!inOrder.isEmpty()) {
            handler.markReady(ready);
        }
    }

    private void drainEarly() {
        Inbound x;
        while ((x = early.get(seqIn)) != null && x.done) {
            early.remove(seqIn);
            inOrder(x);
        }
    }

    private void inOrder(Inbound in) {
        inOrder.add(in);
        seqIn++;
        if ((in.flags & Wire.FLAG_EOS) != 0) {
            eosQueued = true; // as a TCP channel on the peer's FIN: what is queued is read, with autoRead or not
        }
    }

    /** Data of one active message, received in place or fetched by rendezvous. */
    private final class Inbound extends UcxIoHandler.Op {
        final long seq;
        final int flags;
        ByteBuf buf;
        int length;
        boolean done;

        Inbound(long seq, int flags) {
            this.seq = seq;
            this.flags = flags;
        }

        void finish() {
            buf.writerIndex(length);
            done = true;
        }

        @Override
        String operation() {
            return "ucp_am_recv_data_nbx";
        }

        void releaseBuffer() {
            if (buf != null) {
                buf.release();
                buf = null;
            }
        }

        @Override
        void done(Throwable f) {
            if (f != null || !open) {
                releaseBuffer();
                done = true;
                if (f != null && open && failure == null) {
                    failure = f; // the data is lost: the stream cannot go on
                    handler.markReady(ready);
                }
                return;
            }
            finish();
            if (early != null) {
                drainEarly();
            }
            if (!inOrder.isEmpty()) {
                handler.markReady(ready);
            }
        }

        @Override
        void abandon() {
            releaseBuffer();
        }
    }

    // ---- acting on it, on the loop outside UCX callbacks ----------------------------------------------------------

    private void process() {
        if (!open) {
            return;
        }
        if (connectFinished) {
            connectFinished = false;
            finishConnect();
        }
        if (activeNeeded) {
            activeNeeded = false;
            cancelConnectTimeout();
            pipeline().fireChannelActive(); // writes from channelActive go out at once: the peer is known
        }
        if (flushNeeded && connected && open) {
            flushNeeded = false;
            if (outputShutdown && !eosSent) {
                try {
                    sendEos(Wire.FLAG_EOS);
                } catch (IOException e) {
                    failure = e;
                }
            }
            ((UcxUnsafe) unsafe()).resumeWrites();
        }
        if (open && connected && (readRequested || config.isAutoRead() || inputShutdown || eosQueued)) {
            deliver(); // a client passes nothing up before its connect completed (channelActive); after
                       // shutdownInput what comes is dropped (and credited) whether the application reads or not
        }
        if (open && failure != null && !failureHandled) {
            failureHandled = true;
            onFailure();
        }
    }

    /** Cancels the connect (or, accepted, hello) deadline, if one is set. */
    private void cancelConnectTimeout() {
        if (connectTimeout != null) {
            connectTimeout.cancel(false);
            connectTimeout = null;
        }
    }

    private void finishConnect() {
        ChannelPromise p = connectPromise;
        connectPromise = null;
        cancelConnectTimeout();
        try {
            local = ep.localAddress();
        } catch (RuntimeException e) {
            local = null; // UCX could not say: the address stays unknown
        }
        if (p == null || !p.trySuccess()) {
            return; // canceled or timed out: closed by then
        }
        if (outputShutdown && !eosSent) {
            flushNeeded = true;
            handler.markReady(ready);
        }
        pipeline().fireChannelActive();
    }

    private void onFailure() {
        ChannelPromise p = connectPromise;
        if (p != null) {
            connectPromise = null;
            ConnectException ce = new ConnectException("UCX connection to " + remote + " failed: "
                    + failure.getMessage());
            ce.initCause(failure);
            unsafe().close(unsafe().voidPromise()); // closed first, so that the failed connect finds it closed
            p.tryFailure(ce);
            return;
        }
        if (!connected || helloAck != null) {
            connected = false; // not active before its close either, so no channelInactive without channelActive
            helloAck = null;
            unsafe().close(unsafe().voidPromise()); // an accepted channel whose client went before the hello
            return;                                 // exchange ended: never active, as a TCP connection reset in
        }                                           // the backlog
        if (peerClosing) {
            if (!config.isAllowHalfClosure() && inOrder.isEmpty()) {
                unsafe().close(unsafe().voidPromise());
            }
            return; // the peer closed: its end-of-stream, in order, tells the pipeline
        }
        pipeline().fireExceptionCaught(resetByPeer ? failure : new IOException("UCX endpoint to " + remote
                + " failed: " + failure.getMessage(), failure));
        unsafe().close(unsafe().voidPromise());
    }

    /**
     * Passes what arrived up the pipeline as a read loop of the channel's {@code RecvByteBufAllocator} handle would:
     * at most {@code guess()} bytes per {@code channelRead} (a slice of the arrived buffer when it is larger), as
     * long as the handle continues reading; the rest stays queued for the next read. After {@code shutdownInput}
     * what arrives is dropped (and credited).
     */
    @SuppressWarnings("deprecation") // Handle is what recvBufAllocHandle() gives
    private void deliver() {
        if (inputShutdown) {
            drop();
            return;
        }
        if (inOrder.isEmpty()) {
            // Nothing to read: no read loop. An empty one would still tell the handle "0 bytes read" and shrink an
            // adaptive allocator's guess, so that a later message would be cut into smaller reads than it needs.
            return;
        }
        ChannelPipeline p = pipeline();
        RecvByteBufAllocator.Handle h = unsafe().recvBufAllocHandle();
        h.reset(config);
        boolean any = false;
        boolean eos = false;
        long consumed = 0;
        do {
            Object next = inOrder.peek();
            if (next == null) {
                break;
            }
            ByteBuf b = next instanceof ByteBuf plain ? plain : ((Inbound) next).buf;
            if (b == null || !b.isReadable()) {
                inOrder.poll();
                if (b != null) {
                    b.release();
                }
                if (next instanceof Inbound x && (x.flags & Wire.FLAG_EOS) != 0) {
                    eos = true;
                    break;
                }
                continue;
            }
            int guess = Math.max(1, h.guess());
            int n = b.readableBytes();
            ByteBuf out;
            if (n <= guess) {
                out = b;
                inOrder.poll();
                if (next instanceof Inbound x) {
                    x.buf = null;
                    if ((x.flags & Wire.FLAG_EOS) != 0) {
                        inOrder.addFirst(new Inbound(x.seq, x.flags)); // data and end: the end read next
                    }
                }
            } else {
                out = b.readRetainedSlice(guess);
                n = guess;
            }
            // more queued: this read filled what it was offered, so the handle goes on while it allows
            h.attemptedBytesRead(inOrder.isEmpty() ? guess : n);
            h.lastBytesRead(n);
            h.incMessagesRead(1);
            consumed += n;
            any = true;
            readRequested = false;
            p.fireChannelRead(out);
        } while (open && !inputShutdown && (eosQueued || h.continueReading()));
        h.readComplete();
        returnCredit(consumed);
        if (any || eos) {
            if (eos) {
                readRequested = false;
            }
            p.fireChannelReadComplete();
        }
        if (eos && open) {
            endOfStream();
        }
        if (open && !inOrder.isEmpty() && (readRequested || config.isAutoRead() || inputShutdown || eosQueued)) {
            handler.markReady(ready);
        }
    }

    /** Drops (and credits) what arrived after {@code shutdownInput}, up to and with the peer's end of stream. */
    private void drop() {
        long consumed = 0;
        boolean eos = false;
        for (Object next; !eos && (next = inOrder.poll()) != null; ) {
            ByteBuf b;
            if (next instanceof ByteBuf plain) {
                b = plain;
            } else {
                Inbound x = (Inbound) next;
                b = x.buf;
                x.buf = null;
                eos = (x.flags & Wire.FLAG_EOS) != 0;
            }
            if (b != null) {
                consumed += b.readableBytes();
                b.release();
            }
        }
        returnCredit(consumed);
        if (eos && open) {
            endOfStream();
        }
    }

    private void endOfStream() {
        boolean wasShut = inputShutdown;
        inputShutdown = true;
        if (config.isAllowHalfClosure()) {
            if (!wasShut) {
                pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
            }
            pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE);
        } else {
            unsafe().close(unsafe().voidPromise());
        }
    }

    private void returnCredit(long consumed) {
        if (consumed == 0) {
            return;
        }
        consumedUnacked += consumed;
        if (consumedUnacked >= Math.max(1, window / 4) && open && ep != null && !ep.isFailed() && !peerClosing) {
            long n = consumedUnacked;
            consumedUnacked = 0;
            try {
                sendControl(Wire.CREDIT, peerId, n, 0);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                    handler.markReady(ready);
                }
            }
        }
    }

    /** The UCX transports of the endpoint's lanes, on the channel's loop: for tests. */
    java.util.Set<String> transports() {
        return ep == null ? java.util.Set.of() : ep.transports();
    }

    /** Closes the endpoint at once without telling the peer, as a crash would: for tests of peer failure. */
    void killEndpointForTest() {
        UcpEndpoint e = ep;
        if (e != null) {
            handler.forget(localId, e);
            localId = 0;
            UcxIoHandler.closeForce(e);
        }
    }

    // ---- unsafe --------------------------------------------------------------------------------------------------

    private final class UcxUnsafe extends AbstractUnsafe implements UcxIoHandler.UcxIoHandle {

        @Override
        public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
            if (!promise.setUncancellable() || !ensureOpen(promise)) {
                return;
            }
            if (connectPromise != null) {
                promise.setFailure(new ConnectionPendingException());
                return;
            }
            if (ep != null) {
                promise.setFailure(new AlreadyConnectedException());
                return;
            }
            if (!(remoteAddress instanceof InetSocketAddress address)) {
                promise.setFailure(new IllegalArgumentException("expected an InetSocketAddress: " + remoteAddress));
                return;
            }
            if (address.isUnresolved()) {
                promise.setFailure(new UnresolvedAddressException());
                return;
            }
            try {
                if (localAddress != null) {
                    doBind(localAddress);
                }
                doConnect(address);
            } catch (Throwable t) {
                promise.tryFailure(annotateConnectException(t, address));
                close(voidPromise());
                return;
            }
            connectPromise = promise;
            int timeoutMillis = config.getConnectTimeoutMillis();
            if (timeoutMillis > 0) {
                connectTimeout = eventLoop().schedule(() -> {
                    ChannelPromise p = connectPromise;
                    if (p != null) {
                        connectPromise = null;
                        connectTimeout = null;
                        close(voidPromise());
                        p.tryFailure(new ConnectTimeoutException("connection timed out after " + timeoutMillis
                                + " ms: " + address));
                    }
                }, timeoutMillis, TimeUnit.MILLISECONDS);
            }
            promise.addListener(f -> {
                if (f.isCancelled()) {
                    close(voidPromise());
                }
            });
        }

        void resumeWrites() {
            flush0();
        }

        @Override
        public void handle(IoRegistration registration, IoEvent event) {
            // UCX channels get their events from the worker's callbacks, not from IoEvents
        }

        @Override
        public void close() {
            close(voidPromise());
        }
    }
}
