package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketHalfClosedTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.List;

/** Netty's {@link SocketHalfClosedTest} with a UCX server and a UCX client. */
class UcxSocketHalfClosedTest extends SocketHalfClosedTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    @Test
    @Disabled(Findings.BLOCKED_LOOP)
    @Override
    public void testAutoCloseFalseDoesShutdownOutput(TestInfo testInfo) {
    }
}
