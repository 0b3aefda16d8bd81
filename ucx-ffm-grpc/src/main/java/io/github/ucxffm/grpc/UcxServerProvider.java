package io.github.ucxffm.grpc;

import io.grpc.ServerBuilder;
import io.grpc.ServerCredentials;
import io.grpc.ServerProvider;
import io.grpc.netty.NettyServerBuilder;

/**
 * Makes {@code ServerBuilder.forPort} and {@code Grpc.newServerBuilderForPort} build grpc-netty servers on UCX when
 * {@link UcxGrpc#providersEnabled()} (registered in {@code META-INF/services/io.grpc.ServerProvider}). Credentials
 * are grpc-netty's: whatever it supports (insecure, TLS) works over UCX too. The servers share one event loop
 * group, see {@link io.github.ucxffm.grpc}.
 */
public final class UcxServerProvider extends ServerProvider {

    /** For {@link java.util.ServiceLoader}. */
    public UcxServerProvider() {
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
     * A builder for a server on every local address at {@code port}, without credentials yet.
     *
     * @param port the port, 0 for any
     * @return the builder
     */
    @Override
    protected ServerBuilder<?> builderForPort(int port) {
        return new SharedGroupServerBuilder(NettyServerBuilder.forPort(port), SharedGroup.PROVIDERS);
    }

    /**
     * A builder for a server on every local address at {@code port} with {@code credentials}.
     *
     * @param port        the port, 0 for any
     * @param credentials what grpc-netty accepts
     * @return the builder, or the reason grpc-netty refuses the credentials
     */
    @Override
    protected NewServerBuilderResult newServerBuilderForPort(int port, ServerCredentials credentials) {
        NettyServerBuilder netty;
        try {
            netty = NettyServerBuilder.forPort(port, credentials);
        } catch (IllegalArgumentException e) {
            return NewServerBuilderResult.error(e.getMessage());
        }
        return NewServerBuilderResult.serverBuilder(new SharedGroupServerBuilder(netty, SharedGroup.PROVIDERS));
    }
}
