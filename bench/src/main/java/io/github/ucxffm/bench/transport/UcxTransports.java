package io.github.ucxffm.bench.transport;

import io.github.ucxffm.netty.UcxIoHandler;
import io.github.ucxffm.netty.UcxServerSocketChannel;
import io.github.ucxffm.netty.UcxSocketChannel;
import io.github.ucxffm.netty.UcxTransportConfig;
import io.netty.channel.MultiThreadIoEventLoopGroup;

/** ucx-ffm-netty's transport over UCX shared memory or UCX tcp, as the benchmark configures it. */
final class UcxTransports {

    private UcxTransports() {
    }

    /**
     * The settings of a UCX transport: {@code ucx-shm} lets UCX choose its shared-memory transports ({@code tcp}
     * is there for the connection manager, which UCX 1.13 needs to connect at all) and has no peer error handling,
     * which on UCX 1.13 would keep shared memory out of the endpoints; {@code ucx-tcp} has UCX's tcp alone and
     * ucx-ffm-netty's defaults.
     *
     * @param kind      {@link TransportKind#UCX_SHM} or {@link TransportKind#UCX_TCP}, or their spinning kinds
     *                  (the same settings; the spin comes as {@code spinNanos})
     * @param spinNanos how long an idle event loop progresses before it sleeps, or negative for the default
     * @return the config
     */
    static UcxTransportConfig config(TransportKind kind, long spinNanos) {
        UcxTransportConfig.Builder b = switch (kind) {
            case UCX_SHM, UCX_SHM_SPIN -> UcxTransportConfig.builder().config("TLS", "sm,tcp,self")
                    .peerErrorHandling(false);
            case UCX_TCP, UCX_TCP_SPIN -> UcxTransportConfig.builder().config("TLS", "tcp");
            default -> throw new IllegalArgumentException(kind.label() + " is not a UCX transport");
        };
        if (spinNanos >= 0) {
            b.spinNanos(spinNanos);
        }
        return b.name("bench-" + kind.label()).build();
    }

    static NettyTransport open(TransportKind kind, int threads, long spinNanos) {
        return new NettyTransport(new MultiThreadIoEventLoopGroup(threads,
                UcxIoHandler.newFactory(config(kind, spinNanos))), UcxServerSocketChannel.class,
                UcxSocketChannel.class, false);
    }
}
