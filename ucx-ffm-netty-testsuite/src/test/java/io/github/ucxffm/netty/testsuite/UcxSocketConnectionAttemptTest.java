package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.SocketConnectionAttemptTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.util.List;

/**
 * Netty's {@link SocketConnectionAttemptTest} with a UCX client: a refused connection (to a closed loopback port) must
 * fail the connect future with {@link java.net.ConnectException}, with and without half-closure.
 */
class UcxSocketConnectionAttemptTest extends SocketConnectionAttemptTest {

    private static final String OFF_LOOPBACK = "not run here: it connects to Netty's BAD_HOST, 198.51.100.254, an "
            + "address off this machine; this project's tests send traffic only to loopback";

    @Override
    protected List<BootstrapFactory<Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.clientSocket();
    }

    @Test
    @Disabled(OFF_LOOPBACK)
    @Override
    public void testConnectTimeout(TestInfo testInfo) {
    }

    @Test
    @Disabled(OFF_LOOPBACK)
    @Override
    public void testConnectCancellation(TestInfo testInfo) {
    }
}
