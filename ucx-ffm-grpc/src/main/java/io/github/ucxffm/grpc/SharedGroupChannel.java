package io.github.ucxffm.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;

import java.util.concurrent.TimeUnit;

/** A grpc-netty channel on the shared group, which it gives back once it has terminated. */
final class SharedGroupChannel extends ManagedChannel {

    private final ManagedChannel delegate;
    private final Lease lease;

    SharedGroupChannel(ManagedChannel delegate, Lease lease) {
        this.delegate = delegate;
        this.lease = lease;
    }

    @Override
    public ManagedChannel shutdown() {
        delegate.shutdown();
        lease.releaseAfter(this::awaitDelegateTermination);
        return this;
    }

    @Override
    public ManagedChannel shutdownNow() {
        delegate.shutdownNow();
        lease.releaseAfter(this::awaitDelegateTermination);
        return this;
    }

    private void awaitDelegateTermination() throws InterruptedException {
        boolean terminated; // ManagedChannel has no untimed wait: wait as long as its calls take
        do {
            terminated = delegate.awaitTermination(1, TimeUnit.MINUTES);
        } while (!terminated);
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
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return delegate.newCall(method, options);
    }

    @Override
    public String authority() {
        return delegate.authority();
    }

    @Override
    public ConnectivityState getState(boolean requestConnection) {
        return delegate.getState(requestConnection);
    }

    @Override
    public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
        delegate.notifyWhenStateChanged(source, callback);
    }

    @Override
    public void resetConnectBackoff() {
        delegate.resetConnectBackoff();
    }

    @Override
    public void enterIdle() {
        delegate.enterIdle();
    }

    @Override
    public String toString() {
        return "UCX " + delegate;
    }
}
