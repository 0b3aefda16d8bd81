package io.github.ucxffm.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketFileRegionTest;
import org.junit.jupiter.api.Disabled;

import java.util.List;

/** Netty's {@link SocketFileRegionTest} with a UCX server and a UCX client. */
@Disabled(Findings.FILE_REGION)
class UcxSocketFileRegionTest extends SocketFileRegionTest {

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return UcxSocketTestPermutation.INSTANCE.socket();
    }
}
