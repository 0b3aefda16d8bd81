package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketSpdyEchoTest;

import java.util.List;

/** Netty's {@link SocketSpdyEchoTest} with a UCX server and a UCX client. */
class UcxSocketSpdyEchoTest extends SocketSpdyEchoTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }
}
