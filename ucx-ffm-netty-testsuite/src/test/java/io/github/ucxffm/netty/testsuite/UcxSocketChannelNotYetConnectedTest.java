package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.SocketChannelNotYetConnectedTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.List;

/** Netty's {@link SocketChannelNotYetConnectedTest} with a UCX client. */
class UcxSocketChannelNotYetConnectedTest extends SocketChannelNotYetConnectedTest {

    @Override
    protected List<BootstrapFactory<Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.clientSocket();
    }

    @Test
    @Disabled(Findings.NIO_SERVER)
    @Override
    public void readMustBePendingUntilChannelIsActive(TestInfo testInfo) {
    }
}
