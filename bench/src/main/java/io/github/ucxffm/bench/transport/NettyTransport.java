package io.github.ucxffm.bench.transport;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;

import java.util.concurrent.TimeUnit;

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

    /** Shuts the event loops down at once and waits up to 10 s for them to stop. */
    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
}
