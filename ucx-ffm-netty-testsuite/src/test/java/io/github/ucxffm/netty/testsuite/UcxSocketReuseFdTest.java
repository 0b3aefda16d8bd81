package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.AbstractSocketReuseFdTest;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;

/**
 * Netty's {@link AbstractSocketReuseFdTest} with a UCX server and a UCX client: many connections opened and closed
 * in turn, each carrying its data intact (for epoll, file descriptors reused; here, UCX endpoints and connection ids).
 */
class UcxSocketReuseFdTest extends AbstractSocketReuseFdTest {

    @Override
    protected SocketAddress newSocketAddress() {
        return new InetSocketAddress("127.0.0.1", 0);
    }

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }
}
