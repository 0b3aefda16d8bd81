package io.github.ucxffm.samples;

import io.github.ucxffm.netty.UcxIoHandler;
import io.github.ucxffm.netty.UcxTransportConfig;
import io.github.ucxffm.netty.UcxTransportStats;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.Locale;

/** What the Netty and gRPC samples share: their UCX event loop groups, made from the options, and the counters. */
final class NettyTransport {

    private NettyTransport() {
    }

    /**
     * A group of {@code threads} UCX event loops, with {@code --transport} as UCX's {@code TLS} (tcp added: UCX's
     * connection manager sets connections up over TCP whatever carries the data), without peer error handling for
     * shared memory. The caller shuts it down.
     */
    static EventLoopGroup group(SampleOptions options, int threads, String name) {
        UcxTransportConfig.Builder config = UcxTransportConfig.builder();
        String tls = options.transport();
        if (tls != null) {
            config.config("TLS", tls.matches(".*\\btcp\\b.*") ? tls : tls + ",tcp");
        }
        // as the other samples: UCX 1.13 keeps shared memory out of endpoints with peer error handling
        config.peerErrorHandling(!options.sharedMemory());
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true),
                UcxIoHandler.newFactory(config.build()));
    }

    /** The transports asked for, for the report. */
    static String transports(SampleOptions options) {
        return options.transport() == null ? "ucx-default" : options.transport();
    }

    /** The UCX transport's counters in this process, one line: what went through UCX. */
    static String counters() {
        return String.format(Locale.ROOT, "ucx-stats bytesSent=%d bytesReceived=%d messagesSent=%d channelsOpened=%d",
                UcxTransportStats.bytesSent(), UcxTransportStats.bytesReceived(), UcxTransportStats.messagesSent(),
                UcxTransportStats.channelsOpened());
    }
}
