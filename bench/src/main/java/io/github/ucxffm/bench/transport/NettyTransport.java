package io.github.ucxffm.bench.transport;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;

import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Netty transport ready to use: its event loops and the channel classes that go with them.
 *
 * @param group         the event loops; closed by {@link #close()}
 * @param serverChannel the server channel class
 * @param channel       the client channel class
 * @param tcpSocket     whether the channels are TCP sockets, which take {@code TCP_NODELAY}
 */
record NettyTransport(EventLoopGroup group, Class<? extends ServerChannel> serverChannel,
                      Class<? extends Channel> channel, boolean tcpSocket) implements AutoCloseable {

    /**
     * Netty's bootstraps ({@code Bootstrap}, {@code ServerBootstrap}, each with its own logger below this one) log a
     * warning for each channel option a channel does not know: gRPC sets {@code SO_KEEPALIVE} on every channel it
     * makes, which ucx-ffm-netty's channels do not have, so each gRPC connection over UCX would print one. Kept here,
     * strongly referenced, so that the level stays.
     */
    private static final Logger BOOTSTRAP_LOG = Logger.getLogger("io.netty.bootstrap");

    /** Quiets {@link #BOOTSTRAP_LOG}'s warnings; errors still show. */
    static void quietUnknownOptions() {
        BOOTSTRAP_LOG.setLevel(Level.SEVERE);
    }

    /** Shuts the event loops down at once and waits up to 10 s for them to stop. */
    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
}
