package io.github.ucxffm.netty;

import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpListener;
import io.github.ucxffm.UcxException;
import io.netty.channel.AbstractServerChannel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoRegistration;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;

import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;

/**
 * A listening channel that accepts {@link UcxSocketChannel}s: a UCX listener ({@code ucp_listener_create}) on its
 * event loop's worker. Each accepted connection's endpoint is created on the worker of the event loop the child
 * channel is registered with (UCX moves the connection there), so a server spreads its connections over its child
 * group as a TCP server does. Binding port 0 reports the chosen port in {@link #localAddress()}. The parent and
 * child groups must use the same UCX context: factories of the same {@link UcxTransportConfig} (same UCX options
 * and name); a child on a loop of another context fails to register, and its client's connect fails.
 * <p>
 * <b>Options.</b> {@code SO_BACKLOG}, {@code SO_REUSEADDR} and {@code SO_RCVBUF} are accepted and kept; UCX's
 * listener has its own settings ({@code UCX_TCP_*}).
 */
public final class UcxServerSocketChannel extends AbstractServerChannel implements ServerSocketChannel {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(UcxServerSocketChannel.class);

    private final UcxServerSocketChannelConfig config = new UcxServerSocketChannelConfig(this);
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private UcxIoHandler handler;
    private IoRegistration registration;
    private volatile UcpListener listener;
    private volatile InetSocketAddress local;
    private volatile boolean open = true;
    private boolean readRequested;
    private boolean queued;

    /** A server channel, for {@code ServerBootstrap}. */
    public UcxServerSocketChannel() {
    }

    private record Pending(UcpConnectionRequest request, UcpEndpoint.Params params, InetSocketAddress client) {
    }

    @Override
    public UcxServerSocketChannelConfig config() {
        return config;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return null;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && listener != null;
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) super.localAddress();
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return UcxIoHandler.isCompatible(loop);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new ServerUnsafe();
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        UcxIoHandler.register(this, (ServerUnsafe) unsafe(), promise, r -> {
            registration = r;
            handler = r.attachment();
        });
    }

    @Override
    protected void doDeregister() {
        if (registration != null) {
            registration.cancel();
        }
    }

    @Override
    protected void doBind(SocketAddress localAddress) throws Exception {
        if (!(localAddress instanceof InetSocketAddress address)) {
            throw new IllegalArgumentException("expected an InetSocketAddress: " + localAddress);
        }
        try {
            listener = handler.worker().listen(address, null, this::onRequest);
        } catch (UcxException e) {
            BindException b = new BindException("UCX cannot listen on " + address + ": " + e.getMessage());
            b.initCause(e);
            throw b;
        }
        local = listener.address();
    }

    /**
     * Refuses a connection request whose child channel closed before it was registered (so before it accepted),
     * on this channel's loop, the listener's thread; nothing if the listener closed (it refused the request then).
     */
    void reject(UcpConnectionRequest request) {
        Runnable r = () -> {
            if (open && request.isPending()) {
                try {
                    request.reject();
                } catch (RuntimeException e) {
                    LOG.debug("rejecting {} failed", request, e);
                }
            }
        };
        if (eventLoop().inEventLoop()) {
            r.run();
        } else {
            eventLoop().execute(r);
        }
    }

    /** On the listener's worker's thread, inside progress: record; the loop makes the child channel. */
    private void onRequest(UcpConnectionRequest request) {
        pending.add(new Pending(request, request.endpointParams(), request.clientAddress()));
        handler.markReady(ready);
    }

    @Override
    protected void doClose() {
        if (!open) {
            return;
        }
        open = false;
        pending.clear();
        if (listener != null) {
            listener.close(); // rejects the requests no child took
        }
    }

    @Override
    protected void doBeginRead() {
        readRequested = true;
        if (!pending.isEmpty() && handler != null) {
            handler.markReady(ready);
        }
    }

    private void accept() {
        if (!open || pending.isEmpty() || !(readRequested || config.isAutoRead())) {
            return;
        }
        readRequested = false;
        ChannelPipeline p = pipeline();
        for (Pending r; (r = pending.poll()) != null; ) {
            p.fireChannelRead(new UcxSocketChannel(this, r.request(), r.params(), r.client(), local));
        }
        p.fireChannelReadComplete();
    }

    private final UcxIoHandler.Ready ready = new UcxIoHandler.Ready() {
        @Override
        public void process() {
            accept();
        }

        @Override
        public boolean queued() {
            return queued;
        }

        @Override
        public void queued(boolean q) {
            queued = q;
        }
    };

    private final class ServerUnsafe extends AbstractUnsafe implements UcxIoHandler.UcxIoHandle {
        @Override
        public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
            promise.setFailure(new UnsupportedOperationException("a server channel does not connect"));
        }

        @Override
        public void handle(IoRegistration registration, IoEvent event) {
        }

        @Override
        public void close() {
            close(voidPromise());
        }
    }
}
