package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketReadPendingTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.List;

/** Netty's {@link SocketReadPendingTest} with a UCX server and a UCX client. */
class UcxSocketReadPendingTest extends SocketReadPendingTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    @Test
    @Disabled(Findings.RECV_ALLOCATOR)
    @Override
    public void testReadPendingIsResetAfterEachRead(TestInfo testInfo) {
    }
}
