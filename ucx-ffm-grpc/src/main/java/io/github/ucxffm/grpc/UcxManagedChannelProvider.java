package io.github.ucxffm.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ManagedChannelProvider;
import io.grpc.netty.NettyChannelBuilder;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collection;
import java.util.List;

/**
 * Makes {@code ManagedChannelBuilder.forTarget}/{@code forAddress} and {@code Grpc.newChannelBuilder} build
 * grpc-netty channels on UCX when {@link UcxGrpc#providersEnabled()} (registered in
 * {@code META-INF/services/io.grpc.ManagedChannelProvider}). Targets are those gRPC resolves to IP socket addresses;
 * credentials are grpc-netty's. The channels share one event loop group, see {@link io.github.ucxffm.grpc}.
 */
public final class UcxManagedChannelProvider extends ManagedChannelProvider {

    /** For {@link java.util.ServiceLoader}. */
    public UcxManagedChannelProvider() {
    }

    /**
     * Whether the providers are enabled; a malformed setting is logged and reads as off.
     *
     * @return {@link UcxGrpc#providersEnabled()}
     */
    @Override
    protected boolean isAvailable() {
        return ProviderSwitch.enabled();
    }

    /**
     * Above grpc-netty's.
     *
     * @return {@link UcxGrpc#PROVIDER_PRIORITY}
     */
    @Override
    protected int priority() {
        return UcxGrpc.PROVIDER_PRIORITY;
    }

    /**
     * A builder for a channel to {@code host:port}, without credentials yet (call {@code usePlaintext()} or
     * {@code useTransportSecurity()}).
     *
     * @param host the server's host
     * @param port the server's port
     * @return the builder
     */
    @Override
    protected ManagedChannelBuilder<?> builderForAddress(String host, int port) {
        return new SharedGroupChannelBuilder(NettyChannelBuilder.forAddress(host, port), SharedGroup.PROVIDERS);
    }

    /**
     * A builder for a channel to {@code target}, without credentials yet.
     *
     * @param target the gRPC target
     * @return the builder
     */
    @Override
    protected ManagedChannelBuilder<?> builderForTarget(String target) {
        return new SharedGroupChannelBuilder(NettyChannelBuilder.forTarget(target), SharedGroup.PROVIDERS);
    }

    /**
     * A builder for a channel to {@code target} with {@code credentials}.
     *
     * @param target      the gRPC target
     * @param credentials what grpc-netty accepts
     * @return the builder, or the reason grpc-netty refuses the credentials
     */
    @Override
    protected NewChannelBuilderResult newChannelBuilder(String target, ChannelCredentials credentials) {
        NettyChannelBuilder netty;
        try {
            netty = NettyChannelBuilder.forTarget(target, credentials);
        } catch (IllegalArgumentException e) {
            return NewChannelBuilderResult.error(e.getMessage());
        }
        return NewChannelBuilderResult.channelBuilder(new SharedGroupChannelBuilder(netty, SharedGroup.PROVIDERS));
    }

    /**
     * UCX connects to IP socket addresses.
     *
     * @return {@link InetSocketAddress}
     */
    @Override
    protected Collection<Class<? extends SocketAddress>> getSupportedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
