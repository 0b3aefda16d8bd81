package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketConnectTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.List;

/** Netty's {@link SocketConnectTest} with a UCX server and a UCX client. */
class UcxSocketConnectTest extends SocketConnectTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    @Test
    @Disabled(Findings.FAST_OPEN)
    @Override
    public void testWriteWithFastOpenBeforeConnect(TestInfo testInfo) {
    }

    @Test
    @Disabled(Findings.FAST_OPEN)
    @Override
    public void testWriteWithFastOpenBeforeConnectDirectBufferReaderIndex(TestInfo testInfo) {
    }

    @Test
    @Disabled(Findings.FAST_OPEN)
    @Override
    public void testWriteWithFastOpenBeforeConnectCompositeBuffer(TestInfo testInfo) {
    }

    @Test
    @Disabled(Findings.FAST_OPEN)
    @Override
    public void testWriteWithFastOpenBeforeConnectCompositeBufferReaderIndex(TestInfo testInfo) {
    }
}
