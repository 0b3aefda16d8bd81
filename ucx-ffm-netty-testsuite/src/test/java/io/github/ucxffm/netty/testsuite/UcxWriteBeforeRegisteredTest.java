package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.WriteBeforeRegisteredTest;

import java.util.List;

/** Netty's {@link WriteBeforeRegisteredTest} with a UCX client. */
class UcxWriteBeforeRegisteredTest extends WriteBeforeRegisteredTest {

    @Override
    protected List<BootstrapFactory<Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.clientSocket();
    }
}
