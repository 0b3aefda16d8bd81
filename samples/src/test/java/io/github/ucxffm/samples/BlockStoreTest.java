package io.github.ucxffm.samples;

import io.github.ucxffm.UcpAmSendFlags;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpMemory;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block-store sample as two processes, over tcp and shared memory; and its server against a small client written
 * here from the documented wire protocol, which sends the requests the sample's client never sends.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class BlockStoreTest {

    private static final Pattern RESULT = Pattern.compile(
            "RESULT sample=block-store transport=(\\S+) block_size=(\\d+) queue_depth=(\\d+) write_iops=(\\d+) "
                    + "read_iops=(\\d+) p50_us=([0-9.]+) p99_us=([0-9.]+) blocks=(\\d+)");
    private static final ValueLayout.OfLong LE_LONG =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int BLOCK = 4096;

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldWriteEveryBlockReadItBackAndReportIops(String transport) throws Exception {
        try (ChildProcess server = SampleRun.start("block-store", "--server", "--port", "0", "--blocks", "64",
                "--transport", transport)) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("block-store", "--client", "127.0.0.1:" + port, "--window", "8",
                    "--warmup", "32", "--transport", transport)) {
                assertEquals(0, client.waitFor(60), client.output());
                Matcher m = RESULT.matcher(client.output());
                assertTrue(m.find(), client.output());
                String tls = m.group(1);
                assertEquals(transport.equals("tcp"), tls.equals("tcp"), "transport " + tls);
                if (transport.equals("shm")) {
                    assertTrue(tls.matches(".*(posix|sysv|cma).*"), tls);
                }
                assertEquals("4096", m.group(2));
                assertEquals("8", m.group(3));
                assertTrue(Long.parseLong(m.group(4)) > 0 && Long.parseLong(m.group(5)) > 0, m.group());
                double p50 = Double.parseDouble(m.group(6));
                assertTrue(p50 > 0 && p50 <= Double.parseDouble(m.group(7)), m.group());
                assertEquals("64", m.group(8));
                assertTrue(client.output().contains("block-store: verified 64 blocks"), client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            // 32 warm-up reads, then each of the 64 blocks written and read once.
            assertTrue(server.output().contains("served 64 writes and 96 reads, refused 0 requests"),
                    server.output());
        }
    }

    /** Collects what the server sends to the test's client. */
    private static final class Replies {
        final Map<Long, Integer> done = new HashMap<>();
        long[] ready;
        boolean bye;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shouldRefuseBadRequestsWithAnErrorStatusAndKeepServing(String transport) throws Exception {
        try (ChildProcess server = SampleRun.start("block-store", "--server", "--port", "0", "--blocks", "16",
                "--transport", transport)) {
            int port = SampleRun.port(server, 30);
            boolean shm = transport.equals("shm");
            try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.AM, UcpContext.Feature.RMA)
                    .config("TLS", shm ? "shm,tcp" : "tcp").build();
                 Arena arena = Arena.ofConfined()) {
                UcpWorker w = context.newWorker();
                UcpEndpoint ep = w.connect(UcpEndpoint.Params.socket(new InetSocketAddress("127.0.0.1", port))
                        .peerErrorHandling(!shm));
                Replies replies = new Replies();
                w.setAmHandler(BlockStore.AM_READY, m -> {
                    MemorySegment h = m.header();
                    replies.ready = new long[] {h.get(LE_INT, 0), h.get(LE_LONG, 8), h.get(LE_LONG, 16)};
                });
                w.setAmHandler(BlockStore.AM_DONE, m -> {
                    assertEquals(BlockStore.DONE_HEADER, m.headerLength());
                    replies.done.put(m.header().get(LE_LONG, 0), m.header().get(LE_INT, 8));
                });
                w.setAmHandler(BlockStore.AM_BYE, m -> replies.bye = true);
                UcpMemory buffer = context.allocate(2 * BLOCK);
                long base = buffer.address();
                MemorySegment slots = buffer.segment();

                assertEquals(BlockStore.NOT_REGISTERED, request(w, ep, arena, replies, BlockStore.AM_READ, 1, 0, base),
                        "a request before REGISTER");

                MemorySegment register = arena.allocate(BlockStore.REGISTER_HEADER);
                register.set(LE_LONG, 0, BLOCK);
                register.set(LE_LONG, 8, 2);
                MemorySegment key = buffer.packRemoteKey(arena);
                w.await(ep.sendAm(BlockStore.AM_REGISTER, register, key, 0, key.byteSize(), UcpAmSendFlags.NONE));
                w.awaitCondition(() -> replies.ready != null, Duration.ofSeconds(20), UcpWorker.Idle.SPIN);
                assertEquals(BlockStore.OK, replies.ready[0]);
                assertEquals(BLOCK, replies.ready[1]);
                assertEquals(16, replies.ready[2]);

                slots.fill((byte) 0x5A);
                assertEquals(BlockStore.OUT_OF_RANGE, request(w, ep, arena, replies, BlockStore.AM_READ, 2, 16, base),
                        "READ of the block past the end");
                assertEquals(BlockStore.OUT_OF_RANGE, request(w, ep, arena, replies, BlockStore.AM_WRITE, 3, -1L,
                        base), "WRITE of block 2^64 - 1");
                assertEquals(BlockStore.BAD_ADDRESS, request(w, ep, arena, replies, BlockStore.AM_READ, 4, 0,
                        base + BLOCK + 8), "READ into a range that ends past the buffer");
                assertEquals(BlockStore.BAD_ADDRESS, request(w, ep, arena, replies, BlockStore.AM_READ, 5, 0,
                        base - BLOCK), "READ into a range before the buffer");
                MemorySegment shortHeader = arena.allocate(8);
                shortHeader.set(LE_LONG, 0, 6);
                w.await(ep.sendAm(BlockStore.AM_READ, shortHeader, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE));
                awaitDone(w, replies, 6);
                assertEquals(BlockStore.BAD_REQUEST, replies.done.get(6L), "an 8-byte request header");
                for (long i = 0; i < 2 * BLOCK; i++) {
                    assertEquals((byte) 0x5A, slots.get(ValueLayout.JAVA_BYTE, i), "refused requests move no data");
                }

                // Still serving: block 15 written from slot 0, read back into slot 1.
                for (long word = 0; word < BLOCK / 8; word++) {
                    slots.set(LE_LONG, 8 * word, BlockStore.pattern(15, word));
                }
                assertEquals(BlockStore.OK, request(w, ep, arena, replies, BlockStore.AM_WRITE, 7, 15, base));
                assertEquals(BlockStore.OK, request(w, ep, arena, replies, BlockStore.AM_READ, 8, 15, base + BLOCK));
                assertEquals(-1, MemorySegment.mismatch(slots, 0, BLOCK, slots, BLOCK, 2 * BLOCK));

                w.await(ep.sendAm(BlockStore.AM_BYE, null, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE));
                w.awaitCondition(() -> replies.bye, Duration.ofSeconds(20), UcpWorker.Idle.SPIN);
                assertEquals(0, server.waitFor(30), server.output());
                assertTrue(server.output().contains("served 1 writes and 1 reads, refused 6 requests"),
                        server.output());
            }
        }
    }

    private static int request(UcpWorker w, UcpEndpoint ep, Arena arena, Replies replies, int op, long id,
                               long block, long address) {
        MemorySegment h = arena.allocate(BlockStore.REQUEST_HEADER);
        h.set(LE_LONG, 0, id);
        h.set(LE_LONG, 8, block);
        h.set(LE_LONG, 16, address);
        w.await(ep.sendAm(op, h, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE));
        awaitDone(w, replies, id);
        return replies.done.get(id);
    }

    private static void awaitDone(UcpWorker w, Replies replies, long id) {
        w.awaitCondition(() -> replies.done.containsKey(id), Duration.ofSeconds(20), UcpWorker.Idle.SPIN);
    }

    @Test
    void shouldStopBothSidesCleanlyWhenTheBlockSizesDiffer() throws Exception {
        try (ChildProcess server = SampleRun.start("block-store", "--server", "--port", "0", "--blocks", "8",
                "--transport", "tcp")) {
            int port = SampleRun.port(server, 30);
            try (ChildProcess client = SampleRun.start("block-store", "--client", "127.0.0.1:" + port, "--size", "512",
                    "--transport", "tcp")) {
                assertEquals(1, client.waitFor(60), client.output());
                assertTrue(client.output().contains("the server's blocks are 4096 bytes, not 512: give the client "
                        + "--size 4096"), client.output());
                assertFalse(client.output().contains("\tat "), "no stack trace: " + client.output());
            }
            assertEquals(0, server.waitFor(30), server.output());
            assertTrue(server.output().contains("served 0 writes and 0 reads"), server.output());
        }
    }

    @Test
    void shouldRejectBadArgumentsWithOneLineAndStatusTwo() throws Exception {
        String[][] cases = {
            {"--server", "--blocks", "0"},
            {"--server", "--blocks", "many"},
            {"--server", "--blocks"},
            {"--server", "--size", "100"},
            {"--client", "127.0.0.1:1", "--blocks", "8"},
            {"--server", "--window", "0"},
        };
        for (String[] c : cases) {
            try (ChildProcess run = SampleRun.start("block-store", c)) {
                assertEquals(2, run.waitFor(30), String.join(" ", c) + "\n" + run.output());
                assertEquals(1, run.output().strip().lines().count(), "one line: " + run.output());
            }
        }
    }
}
