package io.github.ucxffm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Context creation options, queries and version adaptation. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ContextTest {

    @Test
    void shouldAnswerQueriesAboutTheRuntime() {
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.RMA)
                .name("context-test").estimatedEndpoints(4).tagSenderMask(0xFFFF_0000_0000_0000L).build()) {
            UcxVersion v = context.ucxVersion();
            assertEquals(UcxVersion.runtime(), v);
            assertTrue(v.atLeast(1, 13), v.toString());
            assertTrue(context.requestSize() > 0);
            assertTrue(context.memoryTypes().contains(UcsMemoryType.HOST), context.memoryTypes().toString());
            assertTrue(Set.of(UcsThreadMode.values()).contains(context.threadMode()));
            assertEquals(Set.of(UcpContext.Feature.TAG, UcpContext.Feature.RMA), context.features());
            String info = context.describe();
            assertTrue(info.contains("UCP context") && info.contains("resource 0"), info);
            try (UcpWorker w = context.newWorker()) {
                String workerInfo = w.describe();
                assertTrue(workerInfo.contains("UCP worker") && workerInfo.contains("address:"), workerInfo);
            }
        }
    }

    @Test
    void shouldApplyConfigurationOverridesOnlyToThisContext() {
        try (UcpContext tcpOnly = UcpContext.builder().features(UcpContext.Feature.TAG).config("UCX_TLS", "tcp")
                .build();
             UcpContext shmOnly = UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "shm,self")
                     .build()) {
            String tcpInfo = tcpOnly.describe();
            String shmInfo = shmOnly.describe();
            // Resource lines name transport/device: "tcp/lo", "posix/memory".
            assertTrue(tcpInfo.contains("tcp/lo") && !tcpInfo.contains("posix/memory"), tcpInfo);
            assertTrue(!shmInfo.contains("tcp/lo") && shmInfo.contains("posix/memory"), shmInfo);
        }
    }

    @Test
    void shouldRefuseBadOptionsClearly() {
        assertThrows(IllegalArgumentException.class, () -> UcpContext.builder().build(), "no feature");
        IllegalArgumentException badValue = assertThrows(IllegalArgumentException.class,
                () -> UcpContext.builder().features(UcpContext.Feature.TAG).config("RNDV_THRESH", "lots").build());
        assertTrue(badValue.getMessage().contains("UCX_RNDV_THRESH=lots"), badValue.getMessage());
        // UCX accepts the option and then finds no transport: the failure names the call and the status.
        UcxCallException noDevice = assertThrows(UcxCallException.class,
                () -> UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "no-such-transport")
                        .build().close());
        assertEquals(UcsStatus.ERR_NO_DEVICE, noDevice.status());
        assertTrue(noDevice.getMessage().startsWith("ucp_init(..) failed: UCS_ERR_NO_DEVICE"), noDevice.getMessage());
        assertThrows(IllegalArgumentException.class, () -> UcpContext.builder().estimatedEndpoints(0));
    }

    /**
     * A worker UCX refuses to create (its one transport refuses the options: a tcp receive segment smaller than the
     * send segment) fails with the call and the status, is no child of its context, and leaves the context able
     * to close. UCX 1.13 takes a transport's option through the context by its name without the transport's prefix,
     * later releases with it.
     */
    @Test
    void shouldReportAWorkerUcxCannotCreateAndLeaveTheContextClosable() {
        String rxSegment = UcxVersion.runtime().atLeast(1, 14) ? "TCP_RX_SEG_SIZE" : "RX_SEG_SIZE";
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "tcp")
                .config(rxSegment, "4k").build()) {
            UcxException refused = assertThrows(UcxException.class, context::newWorker);
            assertTrue(refused.getMessage().startsWith("ucp_worker_create"), refused.getMessage());
            assertEquals(0, context.childrenSnapshot().size(), "the failed worker is no child of the context");
            // a second try fails the same way (not with a state the first left behind)
            assertTrue(assertThrows(UcxException.class, context::newWorker).getMessage()
                    .startsWith("ucp_worker_create"));
        } // and the context closes
    }

    @Test
    void shouldRefuseFeaturesNewerThanTheRuntimeNamingTheVersions() {
        if (UcxVersion.runtime().atLeast(1, 15)) {
            try (UcpContext c = UcpContext.builder().features(UcpContext.Feature.EXPORTED_MEMH).build()) {
                assertTrue(c.features().contains(UcpContext.Feature.EXPORTED_MEMH));
            }
            return;
        }
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.EXPORTED_MEMH).build());
        assertTrue(e.getMessage().contains("1.15") && e.getMessage().contains(UcxVersion.runtime().toString()),
                e.getMessage());
    }

    @Test
    void shouldGiveTypedExceptionsNamingTheCallAndStatus() {
        UcxException e = UcxException.of("ucp_ep_create", UcsStatus.ERR_UNREACHABLE.code());
        assertTrue(e instanceof UcxPeerFailureException);
        assertEquals("ucp_ep_create(..) failed: UCS_ERR_UNREACHABLE (Destination is unreachable)", e.getMessage());
        assertTrue(UcxException.of("x", UcsStatus.ERR_TIMED_OUT.code()) instanceof UcxTimeoutException);
        assertTrue(UcxException.of("x", UcsStatus.ERR_REJECTED.code()) instanceof UcxRejectedException);
        assertTrue(UcxException.of("x", UcsStatus.ERR_CANCELED.code()) instanceof UcxCanceledException);
        assertTrue(UcxException.of("x", UcsStatus.ERR_MESSAGE_TRUNCATED.code()) instanceof UcxTruncatedException);
        assertTrue(UcxException.of("x", UcsStatus.ERR_NO_MEMORY.code()) instanceof UcxCallException);
        assertTrue(UcxException.of("x", -45) instanceof UcxPeerFailureException, "link-failure range");
        for (UcsStatus s : UcsStatus.values()) {
            if (s != UcsStatus.UNKNOWN) {
                assertEquals(s, UcsStatus.of(s.code()), "O(1) lookup round trip");
                assertTrue(!s.description().isBlank());
            }
        }
        assertEquals(UcsStatus.UNKNOWN, UcsStatus.of(-45));
    }
}
