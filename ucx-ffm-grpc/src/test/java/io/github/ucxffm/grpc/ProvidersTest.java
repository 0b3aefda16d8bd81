package io.github.ucxffm.grpc;

import io.github.ucxffm.testsupport.Await;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelProvider;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerProvider;
import io.grpc.netty.NettyChannelProvider;
import io.grpc.stub.ClientCalls;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rule that turns the providers on, their rank, and the event loop group their servers and channels share. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProvidersTest {

    @Test
    void shouldBeOffUnlessThePropertyOrElseTheVariableSaysTrue() {
        assertFalse(UcxGrpc.enabled(null, null));
        assertFalse(UcxGrpc.enabled(null, " "));
        assertTrue(UcxGrpc.enabled("true", null));
        assertTrue(UcxGrpc.enabled(null, "TRUE"));
        assertFalse(UcxGrpc.enabled("false", "true"), "the property wins over the variable");
        assertTrue(UcxGrpc.enabled("true", "false"), "the property wins over the variable");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UcxGrpc.enabled("yes", null));
        assertTrue(e.getMessage().contains(UcxGrpc.ENABLE_PROPERTY) && e.getMessage().contains("'yes'"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> UcxGrpc.enabled(null, "1"));
        assertTrue(e.getMessage().contains(UcxGrpc.ENABLE_ENV) && e.getMessage().contains("'1'"), e.getMessage());
    }

    @Test
    void shouldOutrankGrpcNettyOnlyWhenEnabledAndStayOffOnAMalformedSetting() {
        String old = System.getProperty(UcxGrpc.ENABLE_PROPERTY);
        try {
            System.setProperty(UcxGrpc.ENABLE_PROPERTY, "true");
            assertTrue(new UcxServerProvider().isAvailable());
            assertTrue(new UcxManagedChannelProvider().isAvailable());
            System.setProperty(UcxGrpc.ENABLE_PROPERTY, "false");
            assertFalse(new UcxServerProvider().isAvailable());
            assertFalse(new UcxManagedChannelProvider().isAvailable());
            System.setProperty(UcxGrpc.ENABLE_PROPERTY, "maybe");
            assertFalse(new UcxServerProvider().isAvailable(), "malformed: off, and gRPC keeps working");
        } finally {
            if (old == null) {
                System.clearProperty(UcxGrpc.ENABLE_PROPERTY);
            } else {
                System.setProperty(UcxGrpc.ENABLE_PROPERTY, old);
            }
        }
        int netty = new NettyChannelProvider().priority();
        assertTrue(new UcxManagedChannelProvider().priority() > netty);
        assertTrue(new UcxServerProvider().priority() > netty);
    }

    @Test
    void shouldBeListedForServiceLoading() {
        assertTrue(ServiceLoader.load(ServerProvider.class).stream()
                .anyMatch(p -> p.type() == UcxServerProvider.class), "META-INF/services/io.grpc.ServerProvider");
        assertTrue(ServiceLoader.load(ManagedChannelProvider.class).stream()
                .anyMatch(p -> p.type() == UcxManagedChannelProvider.class),
                "META-INF/services/io.grpc.ManagedChannelProvider");
    }

    @Test
    void shouldShareOneGroupAndShutItDownAfterTheLastServerOrChannelTerminated() throws Exception {
        SharedGroup shared = SharedGroup.PROVIDERS;
        assertEquals(0, shared.users());
        Server server = new UcxServerProvider().builderForPort(0).addService(Greeter.service(() -> { })).build()
                .start();
        EventLoopGroup group = shared.current();
        assertNotNull(group);
        ManagedChannel channel = new UcxManagedChannelProvider().builderForAddress("127.0.0.1", server.getPort())
                .usePlaintext().build();
        assertEquals(2, shared.users());
        assertSame(group, shared.current(), "one group for both");
        assertEquals("hello, shared", ClientCalls.blockingUnaryCall(channel, Greeter.SAY_HELLO,
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS), "shared"));

        channel.shutdown();
        assertTrue(channel.awaitTermination(10, TimeUnit.SECONDS));
        Await.until("the channel gives the group back", Duration.ofSeconds(10), () -> shared.users() == 1);
        assertFalse(group.isShuttingDown(), "the server still uses it");

        server.shutdown();
        assertTrue(server.awaitTermination(10, TimeUnit.SECONDS));
        Await.until("the server gives the group back", Duration.ofSeconds(10), () -> shared.users() == 0);
        assertNull(shared.current());
        assertTrue(group.awaitTermination(10, TimeUnit.SECONDS), "the last user's release shut the group down");

        Server again = new UcxServerProvider().builderForPort(0).build().start();
        try {
            assertNotSame(group, shared.current(), "a new group after the old one ended");
        } finally {
            again.shutdownNow();
            assertTrue(again.awaitTermination(10, TimeUnit.SECONDS));
            Await.until("the group is given back", Duration.ofSeconds(10), () -> shared.users() == 0);
        }
    }

    @Test
    void shouldReportCredentialsGrpcNettyRefusesAndAddressesUcxCannotUse() {
        ServerProvider.NewServerBuilderResult result = new UcxServerProvider().newServerBuilderForPort(0,
                new ServerCredentials() { });
        assertNull(result.getServerBuilder());
        assertNotNull(result.getError());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UcxGrpc.serverBuilder(new LocalAddress("x"), null));
        assertTrue(e.getMessage().contains("InetSocketAddress"), e.getMessage());
    }
}
