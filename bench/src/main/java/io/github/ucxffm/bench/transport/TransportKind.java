package io.github.ucxffm.bench.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/** The Netty transports {@code bench transport} compares. */
enum TransportKind implements Labelled {
    /** Netty's native epoll transport over loopback TCP: the reference of the ratios. */
    EPOLL("epoll", "Netty epoll, loopback TCP"),
    /** Netty's NIO transport over loopback TCP. */
    NIO("nio", "Netty NIO, loopback TCP"),
    /** ucx-ffm-netty with UCX's shared-memory transports. */
    UCX_SHM("ucx-shm", "ucx-ffm-netty, UCX shared memory"),
    /** ucx-ffm-netty with UCX's tcp transport. */
    UCX_TCP("ucx-tcp", "ucx-ffm-netty, UCX tcp"),
    /**
     * {@link #UCX_SHM} with event loops that keep progressing for a while ({@link #SPIN_NANOS} unless
     * {@code --ucx-spin} says otherwise) before they sleep: ucx-ffm-netty's spin window, a core traded for latency.
     */
    UCX_SHM_SPIN("ucx-shm-spin", "ucx-ffm-netty, UCX shared memory, idle loops spin before sleeping"),
    /** {@link #UCX_TCP} with the spin window of {@link #UCX_SHM_SPIN}. */
    UCX_TCP_SPIN("ucx-tcp-spin", "ucx-ffm-netty, UCX tcp, idle loops spin before sleeping");

    /** The spin window of the spinning transports when {@code --ucx-spin} gives none: 50 us. */
    static final long SPIN_NANOS = 50_000;

    private final String label;
    private final String description;

    TransportKind(String label, String description) {
        this.label = label;
        this.description = description;
    }

    @Override
    public String label() {
        return label;
    }

    /** Whether it is ucx-ffm-netty's. */
    boolean isUcx() {
        return this == UCX_SHM || this == UCX_TCP || spins();
    }

    /** Whether it is one of ucx-ffm-netty's with event loops that spin before sleeping by default. */
    boolean spins() {
        return this == UCX_SHM_SPIN || this == UCX_TCP_SPIN;
    }

    /**
     * The idle spin of this transport's event loops.
     *
     * @param option {@code --ucx-spin}, or negative when not given
     * @return the spin in ns, or negative for ucx-ffm-netty's default (no spin unless its system property says)
     */
    long spinNanos(long option) {
        return spins() && option < 0 ? SPIN_NANOS : option;
    }

    /** What it is, in a few words. */
    String description() {
        return description;
    }

    /**
     * The transport of a name.
     *
     * @param name e.g. {@code ucx-shm}
     * @return it
     * @throws IllegalArgumentException naming the value and the names there are
     */
    static TransportKind byLabel(String name) {
        return Labelled.byLabel(TransportKind.class, name, "transport");
    }

    /**
     * Event loops and channel classes of this transport.
     *
     * @param threads   event-loop threads
     * @param spinNanos the UCX transports' idle spin before sleeping ({@link UcxTransports#config}), negative for
     *                  ucx-ffm-netty's default; the others ignore it
     * @return the transport, whose group the caller shuts down
     * @throws IllegalStateException when the transport cannot run here (no epoll, no UCX)
     */
    NettyTransport open(int threads, long spinNanos) {
        return switch (this) {
            case EPOLL -> {
                Epoll.ensureAvailability();
                EventLoopGroup g = new MultiThreadIoEventLoopGroup(threads, EpollIoHandler.newFactory());
                yield new NettyTransport(g, EpollServerSocketChannel.class, EpollSocketChannel.class, true);
            }
            case NIO -> new NettyTransport(new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory()),
                    NioServerSocketChannel.class, NioSocketChannel.class, true);
            case UCX_SHM, UCX_TCP, UCX_SHM_SPIN, UCX_TCP_SPIN -> UcxTransports.open(this, threads, spinNanos);
        };
    }
}
