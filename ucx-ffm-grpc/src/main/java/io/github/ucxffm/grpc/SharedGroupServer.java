package io.github.ucxffm.grpc;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;

import java.io.IOException;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A grpc-netty server on the shared group, which it gives back once it has terminated. */
final class SharedGroupServer extends Server {

    private final Server delegate;
    private final Lease lease;

    SharedGroupServer(Server delegate, Lease lease) {
        this.delegate = delegate;
        this.lease = lease;
    }

    @Override
    public Server start() throws IOException {
        try {
            delegate.start();
        } catch (IOException | RuntimeException e) {
            // a server that did not start is done with the group (gRPC terminates it after a failed start)
            lease.releaseAfter(delegate::awaitTermination);
            delegate.shutdownNow();
            throw e;
        }
        return this;
    }

    @Override
    public int getPort() {
        return delegate.getPort();
    }

    @Override
    public List<? extends SocketAddress> getListenSockets() {
        return delegate.getListenSockets();
    }

    @Override
    public List<ServerServiceDefinition> getServices() {
        return delegate.getServices();
    }

    @Override
    public List<ServerServiceDefinition> getImmutableServices() {
        return delegate.getImmutableServices();
    }

    @Override
    public List<ServerServiceDefinition> getMutableServices() {
        return delegate.getMutableServices();
    }

    @Override
    public Server shutdown() {
        delegate.shutdown();
        lease.releaseAfter(delegate::awaitTermination);
        return this;
    }

    @Override
    public Server shutdownNow() {
        delegate.shutdownNow();
        lease.releaseAfter(delegate::awaitTermination);
        return this;
    }

    @Override
    public boolean isShutdown() {
        return delegate.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return delegate.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return delegate.awaitTermination(timeout, unit);
    }

    @Override
    public void awaitTermination() throws InterruptedException {
        delegate.awaitTermination();
    }

    @Override
    public String toString() {
        return "UCX " + delegate;
    }
}
