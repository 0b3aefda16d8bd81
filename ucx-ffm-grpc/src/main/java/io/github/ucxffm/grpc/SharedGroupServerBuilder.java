package io.github.ucxffm.grpc;

import io.grpc.ForwardingServerBuilder;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.netty.NettyServerBuilder;

/**
 * The server builder the provider hands out: grpc-netty's, on the UCX channel type; {@link #build()} takes the
 * shared group, which the server gives back once it has terminated.
 */
final class SharedGroupServerBuilder extends ForwardingServerBuilder<SharedGroupServerBuilder> {

    private final NettyServerBuilder delegate;
    private final SharedGroup shared;

    SharedGroupServerBuilder(NettyServerBuilder delegate, SharedGroup shared) {
        this.delegate = delegate;
        this.shared = shared;
    }

    @Override
    protected ServerBuilder<?> delegate() {
        return delegate;
    }

    @Override
    public Server build() {
        Lease lease = Lease.take(shared);
        try {
            return new SharedGroupServer(UcxGrpc.withTransport(delegate, lease.group()).build(), lease);
        } catch (RuntimeException | Error e) {
            lease.release();
            throw e;
        }
    }
}
