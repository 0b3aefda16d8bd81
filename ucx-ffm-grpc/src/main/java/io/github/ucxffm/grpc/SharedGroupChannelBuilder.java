package io.github.ucxffm.grpc;

import io.grpc.ForwardingChannelBuilder2;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;

/**
 * The channel builder the provider hands out: grpc-netty's, on the UCX channel type; {@link #build()} takes the
 * shared group, which the channel gives back once it has terminated.
 */
final class SharedGroupChannelBuilder extends ForwardingChannelBuilder2<SharedGroupChannelBuilder> {

    private final NettyChannelBuilder delegate;
    private final SharedGroup shared;

    SharedGroupChannelBuilder(NettyChannelBuilder delegate, SharedGroup shared) {
        this.delegate = UcxGrpc.withChannelType(delegate);
        this.shared = shared;
    }

    @Override
    protected ManagedChannelBuilder<?> delegate() {
        return delegate;
    }

    @Override
    public ManagedChannel build() {
        Lease lease = Lease.take(shared);
        try {
            return new SharedGroupChannel(delegate.eventLoopGroup(lease.group()).build(), lease);
        } catch (RuntimeException | Error e) {
            lease.release();
            throw e;
        }
    }
}
