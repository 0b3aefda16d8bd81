package io.github.ucxffm;

import io.github.ucxffm.peer.PeerMain;
import io.github.ucxffm.peer.PeerProcess;
import io.github.ucxffm.testsupport.BytePattern;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The same operations between two JVM processes, over TCP and over shared memory.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrossProcessTest {

    static UcpContext context(String tls) {
        return UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.STREAM,
                        UcpContext.Feature.AM, UcpContext.Feature.RMA, UcpContext.Feature.AMO32,
                        UcpContext.Feature.AMO64)
                .config("TLS", tls.contains("tcp") ? tls : tls + ",tcp").build();
    }

    /**
     * Connects to the peer; for shared memory without peer error handling, which on UCX 1.13 keeps shared-memory
     * transports out of an endpoint. Checks that the endpoint really uses the transports asked for.
     */
    static UcpEndpoint connect(UcpWorker worker, int port, String tls) {
        boolean shm = !tls.equals("tcp");
        UcpEndpoint ep = worker.connect(UcpEndpoint.Params.socket(new InetSocketAddress("127.0.0.1", port))
                .peerErrorHandling(!shm));
        // Wire-up completes with progress; the lanes are known once a first message went through.
        return ep;
    }

    static void assertTransport(UcpEndpoint ep, String tls) {
        String info = ep.describe();
        if (tls.equals("tcp")) {
            assertTrue(info.contains("tcp/"), info);
            assertFalse(info.contains("posix/") || info.contains("sysv/"), info);
        } else {
            assertTrue(info.contains("posix/") || info.contains("sysv/") || info.contains("cma/"), info);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "posix,sysv,cma,self"})
    void shouldEchoTagMessagesAcrossProcesses(String tls) throws Exception {
        try (Arena arena = Arena.ofConfined();
             ChildProcess peer = PeerProcess.start("tag-echo", tls);
             UcpContext context = context(tls);
             UcpWorker worker = context.newWorker()) {
            int port = Integer.parseInt(peer.expect("LISTENING", 30));
            UcpEndpoint ep = connect(worker, port, tls);
            for (int size : new int[] {1, 8, 4096, 65536, 1 << 20, 4 << 20}) {
                MemorySegment out = BytePattern.allocate(arena, size, size);
                MemorySegment in = arena.allocate(size);
                long tag = 100 + size;
                long recv = worker.receiveTag(in, 0, size, tag | PeerMain.REPLY, -1L);
                long send = ep.sendTag(out, 0, size, tag);
                worker.await(send, Duration.ofSeconds(30), UcpWorker.Idle.SPIN);
                worker.await(recv, Duration.ofSeconds(30), UcpWorker.Idle.SPIN);
                assertEquals(size, worker.receivedLength());
                assertArrayEquals(out.asSlice(0, size).toArray(JAVA_BYTE), in.toArray(JAVA_BYTE), "size " + size);
            }
            assertTransport(ep, tls);
            MemorySegment bye = arena.allocate(1);
            worker.await(ep.sendTag(bye, 0, 1, PeerMain.BYE), Duration.ofSeconds(10), UcpWorker.Idle.SPIN);
            peer.expect("DONE", 30);
            assertEquals(0, peer.waitFor(30), peer.output());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "posix,sysv,cma,self"})
    void shouldEchoStreamBytesAcrossProcesses(String tls) throws Exception {
        try (Arena arena = Arena.ofConfined();
             ChildProcess peer = PeerProcess.start("stream-echo", tls);
             UcpContext context = context(tls);
             UcpWorker worker = context.newWorker()) {
            int port = Integer.parseInt(peer.expect("LISTENING", 30));
            UcpEndpoint ep = connect(worker, port, tls);
            int size = 3 << 20;
            MemorySegment out = BytePattern.allocate(arena, size, 5);
            MemorySegment in = arena.allocate(size);
            long send = ep.sendStream(out, 0, size);
            long recv = ep.receiveStream(in, 0, size, true);
            worker.await(send, Duration.ofSeconds(30), UcpWorker.Idle.SPIN);
            worker.await(recv, Duration.ofSeconds(30), UcpWorker.Idle.SPIN);
            assertEquals(size, worker.receivedLength());
            assertArrayEquals(out.toArray(JAVA_BYTE), in.toArray(JAVA_BYTE));
            assertTransport(ep, tls);
        }
    }
}
