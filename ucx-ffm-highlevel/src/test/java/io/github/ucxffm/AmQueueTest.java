package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_am_recv_callback_t;
import io.github.ucxffm.bindings.ucp_am_recv_param;
import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_DATA;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_RNDV;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The queue small active messages wait in instead of an upcall each ({@link AmQueue}): its native callback against
 * its assembly source, what it queues and what it hands to the upcall, and the order handlers see either way.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AmQueueTest {

    /** One message as a handler saw it: its number (the header's first 8 bytes), its header and data bytes. */
    private record Seen(int id, long number, byte[] header, byte[] data) {
    }

    private static UcpAmHandler recorder(List<Seen> into) {
        return m -> {
            byte[] header = m.header().toArray(JAVA_BYTE);
            long number = m.headerLength() >= 8 ? m.header().get(JAVA_LONG_UNALIGNED, 0) : -1;
            byte[] data = m.dataLength() == 0 ? new byte[0] : m.data().toArray(JAVA_BYTE);
            into.add(new Seen(m.id(), number, header, data));
        };
    }

    @Test
    void shouldRunTheInstructionsOfItsAssemblySource() throws Exception {
        assumeTrue(AmQueue.installed(), "the queue's callback exists for Linux on x86-64 only");
        Path dir = Files.createTempDirectory("am-queue");
        try {
            Path object = dir.resolve("q.o");
            Path bin = dir.resolve("q.bin");
            run("gcc", "-c", "-o", object.toString(), Path.of("src/main/asm/am-queue-x86_64.S").toString());
            run("objcopy", "-O", "binary", "-j", ".text", object.toString(), bin.toString());
            assertArrayEquals(Files.readAllBytes(bin), AmQueue.CODE,
                    "AmQueue.CODE is not src/main/asm/am-queue-x86_64.S assembled");
        } finally {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(dir);
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + out);
    }

    /**
     * Messages of every size around a slot's limit, several waiting at once, between two workers of this process over
     * shared memory (endpoints without peer error handling: UCX 1.13 keeps shared memory out of those with it) and
     * over tcp: each arrives whole and in order, those that fit a slot through the queue and the others by upcall.
     */
    @ParameterizedTest
    @ValueSource(strings = {"posix,sysv,self", "tcp"})
    void shouldQueueWhatFitsASlotAndHandOnTheRestInOrder(String tls) {
        assumeTrue(AmQueue.installed(), "the queue's callback exists for Linux on x86-64 only");
        TwoWorkers.Builder builder = TwoWorkers.builder(UcpContext.Feature.AM).tls(tls);
        try (TwoWorkers w = (tls.equals("tcp") ? builder : builder.peerErrorHandling(false)).build();
             Arena arena = Arena.ofConfined()) {
            assertTrue(w.b.am.queued(), "a SINGLE worker uses the queue");
            List<Seen> seen = new ArrayList<>();
            w.b.setAmHandler(7, recorder(seen));
            w.b.setAmHandler(8, recorder(seen));
            int limit = AmQueue.PAYLOAD_BYTES;
            List<byte[]> headers = new ArrayList<>();
            List<byte[]> datas = new ArrayList<>();
            List<Long> tokens = new ArrayList<>();
            int small = 0;
            int n = 0;
            // header of 8 to 24 bytes; data so that header + data runs from limit - 20 to limit + 20, and some tiny
            for (int round = 0; round < 3; round++) {
                for (int total = limit - 20; total <= limit + 20; total++) {
                    for (int extra : new int[] {0, 16}) {
                        int headerBytes = 8 + extra;
                        int dataBytes = (n % 5 == 0) ? 0 : total - headerBytes;
                        MemorySegment header = BytePattern.allocate(arena, headerBytes, n);
                        header.set(JAVA_LONG, 0, n);
                        MemorySegment data = dataBytes == 0 ? MemorySegment.NULL
                                : BytePattern.allocate(arena, dataBytes, 1000 + n);
                        headers.add(header.toArray(JAVA_BYTE));
                        datas.add(dataBytes == 0 ? new byte[0] : data.toArray(JAVA_BYTE));
                        if (headerBytes + dataBytes <= limit) {
                            small++;
                        }
                        tokens.add(w.ab.sendAm(7 + (n & 1), header, data, 0, dataBytes, UcpAmSendFlags.NONE));
                        n++;
                    }
                }
            }
            int total = n;
            TestSupport.progressUntil(() -> {
                tokens.removeIf(w.a::poll);
                return seen.size() == total && tokens.isEmpty();
            }, 20_000, w.a, w.b);
            for (int i = 0; i < total; i++) {
                Seen s = seen.get(i);
                assertEquals(i, s.number(), "message " + i + " in order");
                assertEquals(7 + (i & 1), s.id());
                assertArrayEquals(headers.get(i), s.header(), "header of message " + i);
                assertArrayEquals(datas.get(i), s.data(), "data of message " + i);
            }
            assertEquals(small, w.b.am.deliveredQueued, "every message that fits a slot came through the queue");
            assertEquals(total - small, w.b.am.deliveredByUpcall, "the others by upcall");
        }
    }

    /**
     * The callback called directly, as UCX calls it: a full queue, data UCX lets a handler of persistent data keep,
     * and rendezvous messages go to the upcall, which hands on what waits first, so handlers see every message in the
     * order of the calls; a full queue takes messages again once progress emptied it.
     */
    @Test
    void shouldHandOnAFullQueueAndKeepableDataThroughTheUpcallInOrder() {
        assumeTrue(AmQueue.installed(), "the queue's callback exists for Linux on x86-64 only");
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.AM).build();
             UcpWorker worker = context.newWorker();
             Arena arena = Arena.ofConfined()) {
            AmDispatcher am = worker.am;
            List<Seen> seen = new ArrayList<>();
            List<Boolean> persistent = new ArrayList<>();
            worker.setAmHandler(3, m -> {
                persistent.add(m.hasPersistentData());
                recorder(seen).onMessage(m);
            }, UcpAmHandler.WHOLE_MESSAGE | UcpAmHandler.PERSISTENT_DATA);
            MemorySegment callback = worker.am.queue().callback();
            MemorySegment arg = worker.am.queue().arg(3);
            MemorySegment plain = arena.allocate(ucp_am_recv_param.layout());
            MemorySegment keepable = arena.allocate(ucp_am_recv_param.layout());
            ucp_am_recv_param.recv_attr(keepable, UCP_AM_RECV_ATTR_FLAG_DATA());
            MemorySegment header = arena.allocate(8);
            MemorySegment data = BytePattern.allocate(arena, 100, 77);
            int calls = AmQueue.SLOTS * 2 + 10;
            List<Boolean> expectPersistent = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                header.set(JAVA_LONG, 0, i);
                boolean keep = i == 199;
                expectPersistent.add(keep);
                byte status = ucp_am_recv_callback_t.invoke(callback, arg, header, 8, data, 100,
                        keep ? keepable : plain);
                assertEquals(0, status, "UCS_OK for call " + i);
            }
            // 0 to 127 filled the queue; 128 found it full and went by upcall, after them; 129 to 198 were queued, 199
            // (keepable) went by upcall, after them; 200 to 265 wait for progress
            assertEquals(200, seen.size(), "handed on through the upcall at a full queue and at keepable data");
            worker.progress();
            assertEquals(calls, seen.size());
            for (int i = 0; i < calls; i++) {
                assertEquals(i, seen.get(i).number(), "message " + i + " in order");
                assertArrayEquals(data.toArray(JAVA_BYTE), seen.get(i).data(), "data of message " + i);
            }
            assertEquals(expectPersistent, persistent, "keepable data went to the handler as such");
            assertEquals(2, am.deliveredByUpcall, "the message that found the queue full, and the keepable one");
            assertEquals(calls - 2, am.deliveredQueued);
            long queuedBefore = am.deliveredQueued;
            header.set(JAVA_LONG, 0, calls);
            assertEquals(0, ucp_am_recv_callback_t.invoke(callback, arg, header, 8, data, 100, plain));
            assertTrue(am.hasQueued(), "the emptied queue takes a message again");
            worker.progress();
            assertEquals(queuedBefore + 1, am.deliveredQueued);
            assertEquals(calls, seen.getLast().number());
        }
    }

    /**
     * A rendezvous message goes to the upcall; eager data in a descriptor is copied into the queue for a handler that
     * did not ask for persistent data (which then sees none), and goes to the upcall for one that did.
     */
    @Test
    void shouldHandRendezvousMessagesAndPersistentDataToTheUpcall() {
        assumeTrue(AmQueue.installed(), "the queue's callback exists for Linux on x86-64 only");
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.AM).build();
             UcpWorker worker = context.newWorker();
             Arena arena = Arena.ofConfined()) {
            List<String> seen = new ArrayList<>();
            UcpAmHandler handler = m -> seen.add(m.id() + (m.isRendezvous() ? " rndv" : "")
                    + (m.hasPersistentData() ? " persistent" : ""));
            worker.setAmHandler(4, handler);
            worker.setAmHandler(5, handler, UcpAmHandler.PERSISTENT_DATA);
            MemorySegment rndv = arena.allocate(ucp_am_recv_param.layout());
            ucp_am_recv_param.recv_attr(rndv, UCP_AM_RECV_ATTR_FLAG_RNDV());
            MemorySegment keepable = arena.allocate(ucp_am_recv_param.layout());
            ucp_am_recv_param.recv_attr(keepable, UCP_AM_RECV_ATTR_FLAG_DATA());
            MemorySegment header = arena.allocate(8);
            MemorySegment data = arena.allocate(8);
            AmQueue q = worker.am.queue();
            // a rendezvous message not kept is dropped: its descriptor is not touched, so a dummy one is safe here
            assertEquals(0, ucp_am_recv_callback_t.invoke(q.callback(), q.arg(4), header, 8,
                    MemorySegment.ofAddress(0x1000), 1 << 20, rndv));
            assertEquals(List.of("4 rndv"), seen, "handled at once, by upcall");
            assertEquals(0, ucp_am_recv_callback_t.invoke(q.callback(), q.arg(4), header, 8, data, 8, keepable));
            assertEquals(0, ucp_am_recv_callback_t.invoke(q.callback(), q.arg(5), header, 8, data, 8, keepable));
            // 5's went by upcall, after 4's, which was queued
            assertEquals(List.of("4 rndv", "4", "5 persistent"), seen);
            assertEquals(2, worker.am.deliveredByUpcall);
            assertEquals(1, worker.am.deliveredQueued);
            assertFalse(worker.am.hasQueued());
        }
    }

    @Test
    void shouldDeliverByUpcallWhenTurnedOffAndForMultiThreadWorkers() {
        String before = System.getProperty(AmQueue.PROPERTY);
        System.setProperty(AmQueue.PROPERTY, "false");
        UcpContext context = UcpContext.builder().features(UcpContext.Feature.AM).build();
        UcpWorker off;
        try {
            off = context.newWorker();
        } finally {
            if (before == null) {
                System.clearProperty(AmQueue.PROPERTY);
            } else {
                System.setProperty(AmQueue.PROPERTY, before);
            }
        }
        try (context; off; UcpWorker multi = context.newWorker(UcsThreadMode.MULTI);
             UcpWorker sender = context.newWorker(); Arena arena = Arena.ofConfined()) {
            assertFalse(off.am.queued(), "-D" + AmQueue.PROPERTY + "=false");
            assertFalse(multi.am.queued(), "a MULTI worker's progress may run on several threads");
            for (UcpWorker receiver : List.of(off, multi)) {
                List<Seen> seen = new ArrayList<>();
                receiver.setAmHandler(5, recorder(seen));
                UcpEndpoint ep = sender.connect(receiver.address());
                MemorySegment header = arena.allocate(8);
                header.set(JAVA_LONG, 0, 42);
                long token = ep.sendAm(5, header, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE);
                boolean[] done = {false};
                TestSupport.progressUntil(() -> (done[0] || (done[0] = sender.poll(token))) && !seen.isEmpty(),
                        20_000, sender, receiver);
                assertEquals(42, seen.getFirst().number());
                assertEquals(1, receiver.am.deliveredByUpcall);
                assertEquals(0, receiver.am.deliveredQueued);
                ep.closeForce(); // a graceful close would wait for the receiver to progress
            }
        }
    }
}
