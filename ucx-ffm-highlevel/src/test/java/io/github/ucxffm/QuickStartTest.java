package io.github.ucxffm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The README's quick start, run: a server thread and a client thread, each with its own worker. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuickStartTest {

    @Test
    void shouldRunTheReadmeQuickStart() throws Exception {
        CompletableFuture<Integer> port = new CompletableFuture<>();
        AtomicBoolean clientDone = new AtomicBoolean();
        CompletableFuture<Long> seenByServer = CompletableFuture.supplyAsync(() -> {
            try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.RMA)
                    .build();
                 UcpWorker worker = context.newWorker();
                 UcpListener listener = worker.listen(new InetSocketAddress("127.0.0.1", 0))) {
                port.complete(listener.address().getPort());
                UcpConnectionRequest request;
                while ((request = listener.poll()) == null) {
                    worker.progress();
                }
                UcpEndpoint client = request.accept();
                UcpMemory region = context.allocate(1 << 20);
                byte[] key = region.packRemoteKey();
                MemorySegment keyBuffer = Arena.ofAuto().allocateFrom(JAVA_BYTE, key);
                worker.await(client.sendTag(keyBuffer, 0, key.length, 1));
                while (!clientDone.get()) {
                    worker.progress();
                }
                return region.segment().get(JAVA_LONG, 0);
            }
        });
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.RMA)
                .build();
             UcpWorker worker = context.newWorker();
             Arena arena = Arena.ofConfined()) {
            UcpEndpoint server = worker.connect(new InetSocketAddress("127.0.0.1", port.get(30, TimeUnit.SECONDS)));
            MemorySegment keyBuffer = arena.allocate(4096);
            long recv = worker.receiveTag(keyBuffer, 0, 4096, 1, -1L);
            worker.await(recv);
            byte[] key = keyBuffer.asSlice(0, worker.receivedLength()).toArray(JAVA_BYTE);
            try (UcpRemoteKey rkey = server.unpackRemoteKey(key)) {
                MemorySegment data = arena.allocate(JAVA_LONG);
                data.set(JAVA_LONG, 0, 42);
                worker.await(server.put(data, 0, 8, rkey.base(), rkey));
                worker.await(server.flush());
            }
            server.closeForce();
        } finally {
            clientDone.set(true);
        }
        assertEquals(42L, seenByServer.get(30, TimeUnit.SECONDS));
    }
}
