package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketDataReadInitialStateTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.List;

/** Netty's {@link SocketDataReadInitialStateTest} with a UCX server and a UCX client. */
class UcxSocketDataReadInitialStateTest extends SocketDataReadInitialStateTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    @Test
    @Disabled(Findings.NO_BACKLOG)
    @Override
    public void testAutoReadOffNoDataReadUntilReadCalled(TestInfo testInfo) {
    }
}
