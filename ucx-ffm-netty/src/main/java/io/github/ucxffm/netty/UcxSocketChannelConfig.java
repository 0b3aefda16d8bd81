package io.github.ucxffm.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.MessageSizeEstimator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannelConfig;

import java.util.Map;

/**
 * The configuration of a {@link UcxSocketChannel}: Netty's common options, {@code ALLOW_HALF_CLOSURE}, and the
 * socket options a TCP application sets. {@code SO_RCVBUF} (before connecting) is the channel's receive window;
 * {@code SO_LINGER} 0 makes {@code close()} a reset: the peer gets {@code exceptionCaught} with an
 * {@code IOException} ("Connection reset by peer") and loses what it had not read, as with TCP (other values are
 * an ordinary close); {@code SO_SNDBUF}, {@code TCP_NODELAY}, {@code SO_KEEPALIVE}, {@code IP_TOS} and
 * {@code SO_REUSEADDR} are kept and reported but change nothing: UCX sends each flush at once, and its TCP
 * transport has settings of its own ({@code UCX_TCP_*}).
 *
 * <p>{@code WRITE_BUFFER_WATER_MARK} defaults to {@link #DEFAULT_WRITE_BUFFER_WATER_MARK} (512 KiB to 1 MiB), not
 * Netty's 32 to 64 KiB. Writers that write as much as {@link io.netty.channel.Channel#bytesBeforeUnwritable()}
 * allows and then flush, as Netty's HTTP/2 flow controller does for gRPC, make one UCX message per flush here,
 * where a kernel socket takes a flush as one more system call into its own buffer: with 64 KiB, each 64 KiB gRPC
 * message went out as two UCX messages (the frames up to the mark, then the 14-byte rest). The bytes in flight stay
 * bounded by the peer's receive window ({@link UcxTransportConfig#windowBytes()}), whatever the mark.
 */
public final class UcxSocketChannelConfig extends DefaultChannelConfig implements SocketChannelConfig {

    /** The default {@code WRITE_BUFFER_WATER_MARK}: unwritable above 1 MiB queued, writable again below 512 KiB. */
    public static final WriteBufferWaterMark DEFAULT_WRITE_BUFFER_WATER_MARK =
            new WriteBufferWaterMark(512 << 10, 1 << 20);

    private volatile boolean allowHalfClosure;
    private volatile int receiveBufferSize;
    private volatile int sendBufferSize;
    private volatile boolean tcpNoDelay = true;
    private volatile int soLinger = -1;
    private volatile boolean keepAlive;
    private volatile int trafficClass;
    private volatile boolean reuseAddress;

    UcxSocketChannelConfig(UcxSocketChannel channel) {
        super(channel);
        super.setWriteBufferWaterMark(DEFAULT_WRITE_BUFFER_WATER_MARK);
    }

    @Override
    protected void autoReadCleared() {
        ((UcxSocketChannel) channel).clearReadRequested();
    }

    @Override
    public Map<ChannelOption<?>, Object> getOptions() {
        return getOptions(super.getOptions(), ChannelOption.ALLOW_HALF_CLOSURE, ChannelOption.SO_RCVBUF,
                ChannelOption.SO_SNDBUF, ChannelOption.TCP_NODELAY, ChannelOption.SO_LINGER,
                ChannelOption.SO_KEEPALIVE, ChannelOption.IP_TOS, ChannelOption.SO_REUSEADDR);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(ChannelOption<T> option) {
        if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            return (T) Boolean.valueOf(allowHalfClosure);
        }
        if (option == ChannelOption.SO_RCVBUF) {
            return (T) Integer.valueOf(receiveBufferSize);
        }
        if (option == ChannelOption.SO_SNDBUF) {
            return (T) Integer.valueOf(sendBufferSize);
        }
        if (option == ChannelOption.TCP_NODELAY) {
            return (T) Boolean.valueOf(tcpNoDelay);
        }
        if (option == ChannelOption.SO_LINGER) {
            return (T) Integer.valueOf(soLinger);
        }
        if (option == ChannelOption.SO_KEEPALIVE) {
            return (T) Boolean.valueOf(keepAlive);
        }
        if (option == ChannelOption.IP_TOS) {
            return (T) Integer.valueOf(trafficClass);
        }
        if (option == ChannelOption.SO_REUSEADDR) {
            return (T) Boolean.valueOf(reuseAddress);
        }
        return super.getOption(option);
    }

    @Override
    public <T> boolean setOption(ChannelOption<T> option, T value) {
        validate(option, value);
        if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            setAllowHalfClosure((Boolean) value);
        } else if (option == ChannelOption.SO_RCVBUF) {
            setReceiveBufferSize((Integer) value);
        } else if (option == ChannelOption.SO_SNDBUF) {
            setSendBufferSize((Integer) value);
        } else if (option == ChannelOption.TCP_NODELAY) {
            setTcpNoDelay((Boolean) value);
        } else if (option == ChannelOption.SO_LINGER) {
            setSoLinger((Integer) value);
        } else if (option == ChannelOption.SO_KEEPALIVE) {
            setKeepAlive((Boolean) value);
        } else if (option == ChannelOption.IP_TOS) {
            setTrafficClass((Integer) value);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            setReuseAddress((Boolean) value);
        } else {
            return super.setOption(option, value);
        }
        return true;
    }

    @Override
    public boolean isAllowHalfClosure() {
        return allowHalfClosure;
    }

    @Override
    public UcxSocketChannelConfig setAllowHalfClosure(boolean allow) {
        this.allowHalfClosure = allow;
        return this;
    }

    /**
     * The receive window asked for ({@code SO_RCVBUF}); 0 for the transport's.
     *
     * @return bytes
     */
    @Override
    public int getReceiveBufferSize() {
        return receiveBufferSize;
    }

    /**
     * Sets the receive window for the next connection of this channel ({@code SO_RCVBUF}).
     *
     * @param bytes the window, 0 for the transport's; below 4096 counts as 4096
     * @return this config
     */
    @Override
    public UcxSocketChannelConfig setReceiveBufferSize(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("SO_RCVBUF must not be negative: " + bytes);
        }
        this.receiveBufferSize = bytes;
        return this;
    }

    /**
     * {@code SO_SNDBUF} as set; no effect.
     *
     * @return bytes
     */
    @Override
    public int getSendBufferSize() {
        return sendBufferSize;
    }

    /**
     * Keeps {@code SO_SNDBUF}; no effect on UCX.
     *
     * @param bytes the value
     * @return this config
     */
    @Override
    public UcxSocketChannelConfig setSendBufferSize(int bytes) {
        this.sendBufferSize = bytes;
        return this;
    }

    /**
     * {@code TCP_NODELAY} as set (default {@code true}); no effect.
     *
     * @return the value
     */
    @Override
    public boolean isTcpNoDelay() {
        return tcpNoDelay;
    }

    /**
     * Keeps {@code TCP_NODELAY}; no effect: UCX sends each flush at once.
     *
     * @param noDelay the value
     * @return this config
     */
    @Override
    public UcxSocketChannelConfig setTcpNoDelay(boolean noDelay) {
        this.tcpNoDelay = noDelay;
        return this;
    }

    @Override
    public int getSoLinger() {
        return soLinger;
    }

    @Override
    public UcxSocketChannelConfig setSoLinger(int soLinger) {
        this.soLinger = soLinger;
        return this;
    }

    @Override
    public boolean isKeepAlive() {
        return keepAlive;
    }

    @Override
    public UcxSocketChannelConfig setKeepAlive(boolean keepAlive) {
        this.keepAlive = keepAlive;
        return this;
    }

    @Override
    public int getTrafficClass() {
        return trafficClass;
    }

    @Override
    public UcxSocketChannelConfig setTrafficClass(int trafficClass) {
        this.trafficClass = trafficClass;
        return this;
    }

    @Override
    public boolean isReuseAddress() {
        return reuseAddress;
    }

    @Override
    public UcxSocketChannelConfig setReuseAddress(boolean reuseAddress) {
        this.reuseAddress = reuseAddress;
        return this;
    }

    @Override
    public UcxSocketChannelConfig setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        return this;
    }

    @Override
    public UcxSocketChannelConfig setConnectTimeoutMillis(int connectTimeoutMillis) {
        super.setConnectTimeoutMillis(connectTimeoutMillis);
        return this;
    }

    @Override
    @Deprecated
    public UcxSocketChannelConfig setMaxMessagesPerRead(int maxMessagesPerRead) {
        super.setMaxMessagesPerRead(maxMessagesPerRead);
        return this;
    }

    @Override
    public UcxSocketChannelConfig setWriteSpinCount(int writeSpinCount) {
        super.setWriteSpinCount(writeSpinCount);
        return this;
    }

    @Override
    public UcxSocketChannelConfig setAllocator(ByteBufAllocator allocator) {
        super.setAllocator(allocator);
        return this;
    }

    @Override
    public UcxSocketChannelConfig setRecvByteBufAllocator(RecvByteBufAllocator allocator) {
        super.setRecvByteBufAllocator(allocator);
        return this;
    }

    @Override
    public UcxSocketChannelConfig setAutoRead(boolean autoRead) {
        super.setAutoRead(autoRead);
        return this;
    }

    @Override
    public UcxSocketChannelConfig setAutoClose(boolean autoClose) {
        super.setAutoClose(autoClose);
        return this;
    }

    @Override
    public UcxSocketChannelConfig setMessageSizeEstimator(MessageSizeEstimator estimator) {
        super.setMessageSizeEstimator(estimator);
        return this;
    }

    @Override
    public UcxSocketChannelConfig setWriteBufferWaterMark(WriteBufferWaterMark writeBufferWaterMark) {
        super.setWriteBufferWaterMark(writeBufferWaterMark);
        return this;
    }
}
