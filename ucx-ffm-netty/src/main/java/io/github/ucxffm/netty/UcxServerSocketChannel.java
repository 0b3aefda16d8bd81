package io.github.ucxffm.netty;

import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpListener;
import io.github.ucxffm.UcxException;
import io.netty.channel.AbstractServerChannel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;

import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.Map;

/**
 * A listening channel that accepts {@link UcxSocketChannel}s: a UCX listener ({@code ucp_listener_create}) on its
 * event loop's worker. Each accepted connection's endpoint is created on the worker of the event loop the child
 * channel is registered with (UCX moves the connection there), so a server spreads its connections over its child
 * group as a TCP server does. Binding port 0 reports the chosen port in {@link #localAddress()}.
 * <p>
 * <b>Options.</b> {@code SO_BACKLOG}, {@code SO_REUSEADDR} and {@code SO_RCVBUF} are accepted and kept; UCX's
 * listener has its own settings ({@code UCX_TCP_*}).
 */
public final class UcxServerSocketChannel extends AbstractServerChannel {

    private final ServerConfig config = new ServerConfig(this);
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private UcxIoHandler handler;
    private IoRegistration registration;
    private UcpListener listener;
    private InetSocketAddress local;
    private boolean open = true;
    private boolean readRequested;
    private boolean queued;

    /** A server channel, for {@code ServerBootstrap}. */
    public UcxServerSocketChannel() {
    }

    private record Pending(UcpEndpoint.Params params, InetSocketAddress client) {
    }

    @Override
    public ChannelConfig config() {
        return config;
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
        return loop instanceof IoEventLoop io && io.isCompatible(ServerUnsafe.class);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new ServerUnsafe();
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        ((IoEventLoop) eventLoop()).register((ServerUnsafe) unsafe()).addListener(f -> {
            if (f.isSuccess()) {
                registration = (IoRegistration) f.getNow();
                handler = registration.attachment();
                promise.setSuccess();
            } else {
                promise.setFailure(f.cause());
            }
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

    /** On the listener's worker's thread, inside progress: record; the loop makes the child channel. */
    private void onRequest(UcpConnectionRequest request) {
        pending.add(new Pending(request.endpointParams(), request.clientAddress()));
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
            p.fireChannelRead(new UcxSocketChannel(this, r.params(), r.client(), local));
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

    /** Server options: the common ones, and socket options kept for compatibility. */
    private static final class ServerConfig extends DefaultChannelConfig {
        private volatile int backlog = 128;
        private volatile boolean reuseAddress = true;
        private volatile int receiveBufferSize;

        ServerConfig(UcxServerSocketChannel channel) {
            super(channel);
        }

        @Override
        public Map<ChannelOption<?>, Object> getOptions() {
            return getOptions(super.getOptions(), ChannelOption.SO_BACKLOG, ChannelOption.SO_REUSEADDR,
                    ChannelOption.SO_RCVBUF);
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T getOption(ChannelOption<T> option) {
            if (option == ChannelOption.SO_BACKLOG) {
                return (T) Integer.valueOf(backlog);
            }
            if (option == ChannelOption.SO_REUSEADDR) {
                return (T) Boolean.valueOf(reuseAddress);
            }
            if (option == ChannelOption.SO_RCVBUF) {
                return (T) Integer.valueOf(receiveBufferSize);
            }
            return super.getOption(option);
        }

        @Override
        public <T> boolean setOption(ChannelOption<T> option, T value) {
            validate(option, value);
            if (option == ChannelOption.SO_BACKLOG) {
                backlog = (Integer) value;
            } else if (option == ChannelOption.SO_REUSEADDR) {
                reuseAddress = (Boolean) value;
            } else if (option == ChannelOption.SO_RCVBUF) {
                receiveBufferSize = (Integer) value;
            } else {
                return super.setOption(option, value);
            }
            return true;
        }
    }
}
