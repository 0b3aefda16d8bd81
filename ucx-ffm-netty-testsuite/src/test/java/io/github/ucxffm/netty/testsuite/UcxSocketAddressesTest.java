package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketAddressesTest;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Netty's {@link SocketAddressesTest} with a UCX server and a UCX client: addresses are IP socket addresses. */
class UcxSocketAddressesTest extends SocketAddressesTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    @Override
    protected void assertAddress(SocketAddress address) {
        InetSocketAddress inet = assertInstanceOf(InetSocketAddress.class, address);
        assertTrue(inet.getPort() > 0 && inet.getAddress() != null, "a resolved address with a port: " + address);
    }
}
