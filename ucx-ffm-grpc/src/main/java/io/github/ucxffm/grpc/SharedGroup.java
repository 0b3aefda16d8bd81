package io.github.ucxffm.grpc;

import io.github.ucxffm.netty.UcxIoHandler;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The event loop group that the servers and channels built through the providers share: made by the first
 * {@link #acquire()}, shut down by the {@link #release} that ends the last user, made anew by a later acquire. Its
 * threads are daemons, so a process that never shuts its servers and channels down still exits. Thread-safe.
 */
final class SharedGroup {

    /** The one the providers use, configured from the system properties when it is first made. */
    static final SharedGroup PROVIDERS = new SharedGroup(() -> {
        Properties properties = System.getProperties();
        return new MultiThreadIoEventLoopGroup(UcxGrpc.threadsFrom(properties),
                new DefaultThreadFactory("ucx-grpc", true), UcxIoHandler.newFactory(UcxGrpc.configFrom(properties)));
    });

    private final Supplier<EventLoopGroup> factory;
    private EventLoopGroup group;
    private int users;

    SharedGroup(Supplier<EventLoopGroup> factory) {
        this.factory = factory;
    }

    /** The group, made if there is none; each call must be matched by one {@link #release}. */
    synchronized EventLoopGroup acquire() {
        if (group == null) {
            group = factory.get();
        }
        users++;
        return group;
    }

    /**
     * Ends one use of {@code used}; the last one shuts it down.
     *
     * @throws IllegalStateException if {@code used} is not the current group or has no user left
     */
    synchronized void release(EventLoopGroup used) {
        if (used != group || users == 0) {
            throw new IllegalStateException("release of an event loop group that is not in use: " + used);
        }
        if (--users == 0) {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS);
            group = null;
        }
    }

    /** How many servers and channels hold the group, for tests. */
    synchronized int users() {
        return users;
    }

    /** The current group, or {@code null} when none is in use; for tests. */
    synchronized EventLoopGroup current() {
        return group;
    }
}
