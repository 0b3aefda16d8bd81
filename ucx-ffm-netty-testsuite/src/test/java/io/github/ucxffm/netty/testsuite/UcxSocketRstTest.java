package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketRstTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.List;

/** Netty's {@link SocketRstTest} with a UCX server and a UCX client. */
class UcxSocketRstTest extends SocketRstTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    @Test
    @Disabled(Findings.SO_LINGER)
    @Override
    public void testSoLingerZeroCausesOnlyRstOnClose(TestInfo testInfo) {
    }
}
