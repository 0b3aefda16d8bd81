package io.github.ucxffm.grpc;

import io.github.ucxffm.netty.UcxServerSocketChannel;
import io.github.ucxffm.netty.UcxSocketChannel;
import io.github.ucxffm.netty.UcxTransportConfig;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * grpc-netty builders on the UCX transport, and the rule that decides whether the providers of this module take
 * over {@code ServerBuilder.forPort} and {@code ManagedChannelBuilder.forTarget}.
 * <p>
 * The builders returned here are plain grpc-netty builders with the UCX channel types and the given event loop group;
 * everything else (credentials, flow control, keep-alive) is configured on them as for any Netty server or channel.
 * The group must be made with {@code UcxIoHandler.newFactory(..)}; it stays the caller's, who shuts it down after the
 * servers and channels using it have terminated. Thread-safe: these are static methods without shared state.
 */
public final class UcxGrpc {

    /**
     * The system property that turns the providers on: {@code true} or {@code false}. When it is absent, the
     * environment variable {@value #ENABLE_ENV} decides; when both are absent, the providers stay off and gRPC picks
     * its own.
     */
    public static final String ENABLE_PROPERTY = "io.github.ucxffm.grpc";
    /** The environment variable that turns the providers on when {@value #ENABLE_PROPERTY} is not set. */
    public static final String ENABLE_ENV = "UCXFFM_GRPC";
    /**
     * Prefix of the system properties that carry UCX settings to the providers' shared transport:
     * {@code io.github.ucxffm.grpc.ucx.TLS=tcp} sets {@code TLS} ({@code UCX_TLS}).
     */
    public static final String UCX_PROPERTY_PREFIX = ENABLE_PROPERTY + ".ucx.";
    /**
     * The system property that turns the providers' peer error handling off ({@code false}; default {@code true}):
     * see {@code UcxTransportConfig.Builder.peerErrorHandling}, which on UCX 1.13 keeps shared memory out.
     */
    public static final String PEER_ERRORS_PROPERTY = ENABLE_PROPERTY + ".peerErrorHandling";
    /** The system property giving the number of event loops (UCX workers) of the providers' shared group. */
    public static final String THREADS_PROPERTY = ENABLE_PROPERTY + ".threads";
    /** The providers' priority when enabled: above grpc-netty's (5) and OkHttp's. */
    public static final int PROVIDER_PRIORITY = 8;

    private UcxGrpc() {
    }

    /**
     * A grpc-netty server builder listening on {@code address} over UCX, its boss and worker loops from
     * {@code group}.
     *
     * @param address where to listen (an {@link InetSocketAddress}; port 0 lets the system choose)
     * @param group   a UCX event loop group, owned by the caller
     * @return the builder, to configure further
     * @throws IllegalArgumentException if {@code address} is not an {@link InetSocketAddress}
     */
    public static NettyServerBuilder serverBuilder(SocketAddress address, EventLoopGroup group) {
        return withTransport(NettyServerBuilder.forAddress(inet(address)), group);
    }

    /**
     * A grpc-netty server builder listening on {@code port} of every local address over UCX.
     *
     * @param port  the port (0 lets the system choose; {@code Server.getPort()} tells it after start)
     * @param group a UCX event loop group, owned by the caller
     * @return the builder, to configure further
     * @throws IllegalArgumentException if {@code port} is not in [0, 65535]
     */
    public static NettyServerBuilder serverBuilder(int port, EventLoopGroup group) {
        return withTransport(NettyServerBuilder.forPort(port), group);
    }

    /**
     * A grpc-netty channel builder for {@code target} (a name gRPC resolves to IP addresses: {@code host:port} or
     * {@code dns:///host:port}) over UCX. Plaintext needs {@code usePlaintext()}, as with any Netty channel.
     *
     * @param target the gRPC target
     * @param group  a UCX event loop group, owned by the caller
     * @return the builder, to configure further
     */
    public static NettyChannelBuilder channelBuilder(String target, EventLoopGroup group) {
        return withTransport(NettyChannelBuilder.forTarget(target), group);
    }

    /**
     * A grpc-netty channel builder for one server address over UCX.
     *
     * @param address the server (an {@link InetSocketAddress})
     * @param group   a UCX event loop group, owned by the caller
     * @return the builder, to configure further
     * @throws IllegalArgumentException if {@code address} is not an {@link InetSocketAddress}
     */
    public static NettyChannelBuilder channelBuilder(SocketAddress address, EventLoopGroup group) {
        return withTransport(NettyChannelBuilder.forAddress(inet(address)), group);
    }

    static NettyServerBuilder withTransport(NettyServerBuilder builder, EventLoopGroup group) {
        Objects.requireNonNull(group, "group");
        return builder.channelType(UcxServerSocketChannel.class).bossEventLoopGroup(group).workerEventLoopGroup(group);
    }

    static NettyChannelBuilder withTransport(NettyChannelBuilder builder, EventLoopGroup group) {
        Objects.requireNonNull(group, "group");
        return withChannelType(builder).eventLoopGroup(group);
    }

    static NettyChannelBuilder withChannelType(NettyChannelBuilder builder) {
        return builder.channelType(UcxSocketChannel.class, InetSocketAddress.class);
    }

    private static InetSocketAddress inet(SocketAddress address) {
        if (address instanceof InetSocketAddress a) {
            return a;
        }
        throw new IllegalArgumentException("UCX listens and connects on IP socket addresses (InetSocketAddress), not "
                + (address == null ? "null" : address.getClass().getName() + " " + address));
    }

    /**
     * Whether the providers are on, by {@value #ENABLE_PROPERTY}, else {@value #ENABLE_ENV}.
     *
     * @return {@code true} when the property (or, without it, the variable) is {@code true}
     * @throws IllegalArgumentException if the value is neither {@code true} nor {@code false}
     */
    public static boolean providersEnabled() {
        return enabled(System.getProperty(ENABLE_PROPERTY), System.getenv(ENABLE_ENV));
    }

    static boolean enabled(String property, String environment) {
        if (property != null) {
            return bool(ENABLE_PROPERTY, property, false);
        }
        return bool(ENABLE_ENV, environment, false);
    }

    /** {@code true} or {@code false} in any case; {@code fallback} when absent or blank. */
    private static boolean bool(String name, String value, boolean fallback) {
        if (value == null || value.isBlank()) {
            return fallback;
        }
        return switch (value.strip().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(name + " must be true or false, not '" + value + "'");
        };
    }

    /**
     * The providers' transport settings: UCX options given as {@value #UCX_PROPERTY_PREFIX}{@code NAME=VALUE}
     * properties, and {@value #PEER_ERRORS_PROPERTY}.
     */
    static UcxTransportConfig configFrom(Properties properties) {
        UcxTransportConfig.Builder builder = UcxTransportConfig.builder().name("grpc");
        builder.peerErrorHandling(bool(PEER_ERRORS_PROPERTY, properties.getProperty(PEER_ERRORS_PROPERTY), true));
        for (Map.Entry<Object, Object> e : properties.entrySet()) {
            String key = e.getKey().toString();
            if (key.startsWith(UCX_PROPERTY_PREFIX) && key.length() > UCX_PROPERTY_PREFIX.length()) {
                builder.config(key.substring(UCX_PROPERTY_PREFIX.length()), e.getValue().toString());
            }
        }
        return builder.build();
    }

    /** The shared group's size: {@value #THREADS_PROPERTY}, else one loop per processor. */
    static int threadsFrom(Properties properties) {
        String value = properties.getProperty(THREADS_PROPERTY);
        if (value == null) {
            return Runtime.getRuntime().availableProcessors();
        }
        try {
            int threads = Integer.parseInt(value.strip());
            if (threads >= 1) {
                return threads;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(THREADS_PROPERTY + " must be a whole number of at least 1, not '" + value
                + "'");
    }
}
