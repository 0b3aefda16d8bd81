package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketSslSessionReuseTest;
import io.netty.handler.ssl.SslContextBuilder;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.concurrent.TimeUnit;

/** Netty's {@link SocketSslSessionReuseTest} with a UCX server and a UCX client. */
class UcxSocketSslSessionReuseTest extends SocketSslSessionReuseTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }

    /** Its JDK-provider case only: the OpenSSL case {@link Findings#NO_TCNATIVE}. */
    @ParameterizedTest(name = "{index}: serverEngine = {0}, clientEngine = {1}")
    @MethodSource("jdkOnly")
    @Timeout(value = 30000, unit = TimeUnit.MILLISECONDS)
    @Override
    public void testSslSessionTrustManagerResumption(SslContextBuilder serverCtx, SslContextBuilder clientCtx,
                                                     TestInfo testInfo) throws Throwable {
        super.testSslSessionTrustManagerResumption(serverCtx, clientCtx, testInfo);
    }
}
