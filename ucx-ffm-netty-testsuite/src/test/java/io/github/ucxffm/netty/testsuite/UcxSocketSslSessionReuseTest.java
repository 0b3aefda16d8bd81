package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketSslSessionReuseTest;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;

/** Netty's {@link SocketSslSessionReuseTest} with a UCX server and a UCX client. */
class UcxSocketSslSessionReuseTest extends SocketSslSessionReuseTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    /**
     * The JDK case only: the OpenSSL case of {@code jdkAndOpenSSL} needs netty-tcnative, which this build does not
     * have (NoClassDefFoundError io/netty/internal/tcnative/SSLPrivateKeyMethod): nothing of the transport's.
     */
    @ParameterizedTest
    @MethodSource("jdkOnly")
    @Timeout(30)
    @Override
    public void testSslSessionTrustManagerResumption(SslContextBuilder serverCtx, SslContextBuilder clientCtx,
            TestInfo testInfo) throws Throwable {
        super.testSslSessionTrustManagerResumption(serverCtx, clientCtx, testInfo);
    }
}
