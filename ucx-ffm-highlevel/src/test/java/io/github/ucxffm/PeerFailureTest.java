package io.github.ucxffm;

import io.github.ucxffm.peer.PeerMain;
import io.github.ucxffm.peer.PeerProcess;
import io.github.ucxffm.testsupport.Await;
import io.github.ucxffm.testsupport.BytePattern;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Peers that die or freeze, across processes: this JVM talks to {@link PeerMain} peers and SIGKILLs or SIGSTOPs
 * them (RELIABILITY.md b.4, scenarios 26 to 29). Every wait is bounded by {@link #BOUND}; every peer is resumed
 * and killed by {@link ChildProcess#close()} whatever happens, so no test leaves a process behind.
 * <p>
 * What UCX 1.13.1 does, as these tests check it:
 * <ul>
 *   <li><b>tcp with peer error handling</b>: a SIGKILLed peer's kernel closes its sockets, and UCX reports
 *   {@code UCS_ERR_CONNECTION_RESET} (or {@code ENDPOINT_TIMEOUT}) through the endpoint's error handler, once, within
 *   milliseconds; every operation started on that endpoint completes with a {@link UcxPeerFailureException} or a
 *   {@link UcxCanceledException}, except sends UCX had already finished locally, which may complete OK.</li>
 *   <li><b>Tag receives belong to the worker, not to an endpoint</b>: a posted receive that has not matched a
 *   message of the dead peer is not failed by UCX (it could match a message from any other peer). The application
 *   cancels it; {@link #shouldCompleteEveryPendingOperationWhenThePeerDiesWithOperationsInFlight} checks exactly
 *   that, and that nothing else stays pending.</li>
 *   <li><b>Shared memory</b> ({@code posix}, {@code sysv}, {@code cma}): UCX 1.13 offers these transports only to
 *   endpoints with {@code UCP_ERR_HANDLING_MODE_NONE}, so a dead peer is <em>not</em> reported at all (on an
 *   endpoint connected by worker address; a listener connection's TCP connection-manager lane may still report the
 *   reset, which is not promised). What ends the wait is ucx-ffm's deadline
 *   ({@link UcpWorker#await(long, Duration, UcpWorker.Idle)} throwing {@link UcxTimeoutException}), then a cancel
 *   and a bounded close. UCX 1.13's {@code ucp_request_cancel} does not end a stream receive; closing the endpoint
 *   does, with {@code ERR_CANCELED}.</li>
 *   <li><b>A stopped peer</b> (SIGSTOP) is alive to its kernel: TCP is acknowledged, the process exists, and UCX
 *   reports nothing on any transport, keepalive or not. Only the library's deadline fires; after SIGCONT everything
 *   completes and nothing is lost.</li>
 * </ul>
 * The observed detection times and statuses are printed to the test's output. Each test opens its arena first, so
 * that it is freed last: when a test fails with receives still posted, closing the worker may still progress and
 * deliver data into their buffers, which must outlive it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerFailureTest {

    /** The bound on every detection and completion after a peer's death. */
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final String TCP = "tcp";
    private static final String SHM = "posix,sysv,cma,self";
    /** Messages from this size on go by rendezvous (sender and receiver agree before the data moves). */
    private static final long RNDV_THRESH = 64 * 1024;

    private static UcpContext context(String tls) {
        return UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.STREAM,
                        UcpContext.Feature.RMA)
                .config("TLS", tls.contains("tcp") ? tls : tls + ",tcp")
                .config("RNDV_THRESH", Long.toString(RNDV_THRESH))
                // UCX's own liveness checks as fast as the RELIABILITY.md harness sets them (UCX tests use 0.3 s)
                .config("KEEPALIVE_INTERVAL", "200ms")
                .build();
    }

    private static void log(String format, Object... args) {
        System.out.printf("[PeerFailureTest] " + format + "%n", args);
    }

    /** An endpoint with its error handler's record. */
    private static final class Watched {
        final AtomicInteger reports = new AtomicInteger();
        volatile UcxException error;
        volatile long reportedAt;
        UcpEndpoint ep;

        Watched(UcpWorker worker, UcpEndpoint.Params params) {
            ep = worker.connect(params.onError(e -> {
                reports.incrementAndGet();
                error = e;
                reportedAt = System.nanoTime();
            }));
        }
    }

    private static Watched connect(UcpWorker worker, ChildProcess peer, String tls) throws InterruptedException {
        int port = Integer.parseInt(peer.expect("LISTENING", 30));
        // Shared memory needs error mode NONE on UCX 1.13 (peer error handling keeps its transports out)
        return new Watched(worker, UcpEndpoint.Params.socket(new InetSocketAddress("127.0.0.1", port))
                .peerErrorHandling(tls.equals(TCP)));
    }

    /** Sends {@code size} patterned bytes with {@code tag} and checks the echo, byte for byte. */
    private static void echo(UcpWorker worker, UcpEndpoint ep, Arena arena, long tag, int size) {
        MemorySegment out = BytePattern.allocate(arena, size, (int) tag);
        MemorySegment in = arena.allocate(Math.max(1, size));
        long recv = worker.receiveTag(in, 0, size, tag | PeerMain.REPLY, -1L);
        worker.await(ep.sendTag(out, 0, size, tag), BOUND, UcpWorker.Idle.SPIN);
        worker.await(recv, BOUND, UcpWorker.Idle.SPIN);
        assertEquals(size, worker.receivedLength(), "echo length, tag " + tag);
        assertArrayEquals(out.toArray(JAVA_BYTE), in.asSlice(0, size).toArray(JAVA_BYTE), "echo bytes, tag " + tag);
    }

    private static void bye(UcpWorker worker, UcpEndpoint ep, Arena arena, ChildProcess peer)
            throws InterruptedException {
        MemorySegment bye = arena.allocate(1);
        worker.await(ep.sendTag(bye, 0, 1, PeerMain.BYE), BOUND, UcpWorker.Idle.SPIN);
        ep.close(); // while the peer still answers the disconnect
        peer.expect("DONE", 30);
        assertEquals(0, peer.waitFor(30), peer.output());
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    /** Progresses until the watched endpoint's error handler has run; fails after {@link #BOUND}. */
    private static long awaitReport(UcpWorker worker, Watched w, long since) {
        worker.awaitCondition(() -> w.reports.get() > 0, BOUND, UcpWorker.Idle.SPIN);
        return TimeUnit.NANOSECONDS.toMillis(w.reportedAt - since);
    }

    // ---- (a) killed while idle -------------------------------------------------------------------------------------

    /**
     * Scenario 26: a peer SIGKILLed while its connection is idle is reported once, with a peer-failure status, within
     * the bound; its endpoint refuses further work at once and force-closes; the same worker keeps serving a second
     * peer, and connects to a new one by its (checked) worker address.
     */
    @Test
    void shouldReportAnIdlePeerKilledOnceAndKeepServingTheOthers() throws Exception {
        try (Arena arena = Arena.ofConfined();
             ChildProcess victim = PeerProcess.start("tag-echo", TCP);
             ChildProcess stable = PeerProcess.start("tag-echo", TCP);
             UcpContext context = context(TCP);
             UcpWorker worker = context.newWorker()) {
            Watched v = connect(worker, victim, TCP);
            Watched s = connect(worker, stable, TCP);
            echo(worker, v.ep, arena, 1, 4096);
            echo(worker, s.ep, arena, 2, 4096);

            long killedAt = System.nanoTime();
            victim.kill();
            long detectMillis = awaitReport(worker, v, killedAt);
            UcxException reported = v.error;
            log("idle tcp peer SIGKILLed: error handler after %d ms with %s", detectMillis, reported.status());
            assertInstanceOf(UcxPeerFailureException.class, reported, reported.getMessage());
            assertTrue(UcxException.isPeerFailure(reported.code()), reported.getMessage());
            assertTrue(v.ep.isFailed());
            assertEquals(reported.status(), v.ep.failureStatus());

            // the survivor keeps exchanging, large messages too, while the failed endpoint stays quiet
            for (int i = 0; i < 20; i++) {
                echo(worker, s.ep, arena, 100 + i, i % 5 == 4 ? 1 << 20 : 1024);
            }
            TestSupport.progressFor(300, worker);
            assertEquals(1, v.reports.get(), "the error handler runs exactly once");

            // later operations on the dead endpoint throw at once, with the same status
            MemorySegment buffer = arena.allocate(64);
            long before = System.nanoTime();
            UcxPeerFailureException send = assertThrows(UcxPeerFailureException.class,
                    () -> v.ep.sendTag(buffer, 0, 64, 7));
            assertThrows(UcxPeerFailureException.class, () -> v.ep.receiveStream(buffer, 0, 64, false));
            assertThrows(UcxPeerFailureException.class, v.ep::flush);
            assertThrows(UcxPeerFailureException.class, () -> v.ep.sendTagAsync(buffer, 0, 64, 7));
            assertTrue(millisSince(before) < 1000, "refused at once, not after a timeout");
            assertEquals(reported.status(), send.status());
            assertEquals(1, v.reports.get());

            long closing = System.nanoTime();
            v.ep.closeForce();
            log("closeForce of the failed endpoint took %d ms", millisSince(closing));
            assertTrue(millisSince(closing) < BOUND.toMillis());
            assertThrows(IllegalStateException.class, () -> v.ep.sendTag(buffer, 0, 64, 7));

            echo(worker, s.ep, arena, 200, 65536);

            // a new peer, connected both ways by checked worker addresses
            try (ChildProcess fresh = PeerProcess.start("address-echo", TCP, HexFormat.of().formatHex(
                    worker.address()))) {
                MemorySegment hello = arena.allocate(UcpWorkerAddress.MAX_UCX_ADDRESS);
                worker.await(worker.receiveTag(hello, 0, hello.byteSize(), PeerMain.HELLO, -1L),
                        Duration.ofSeconds(30), UcpWorker.Idle.SPIN);
                byte[] address = hello.asSlice(0, worker.receivedLength()).toArray(JAVA_BYTE);
                UcpEndpoint ep = worker.connect(address);
                for (int i = 0; i < 5; i++) {
                    echo(worker, ep, arena, 300 + i, 1 << (4 * i));
                }
                echo(worker, s.ep, arena, 400, 100);
                bye(worker, ep, arena, fresh);
            }
            bye(worker, s.ep, arena, stable);
            assertEquals(0, worker.inFlightCount());
            assertEquals(1, v.reports.get());
        }
    }

    /** Receives the {@code address-echo} peer's worker address and connects to it, checked. */
    private static Watched connectByAddress(UcpWorker worker, Arena arena, String tls) {
        MemorySegment hello = arena.allocate(UcpWorkerAddress.MAX_UCX_ADDRESS);
        worker.await(worker.receiveTag(hello, 0, hello.byteSize(), PeerMain.HELLO, -1L), Duration.ofSeconds(30),
                UcpWorker.Idle.SPIN);
        byte[] address = hello.asSlice(0, worker.receivedLength()).toArray(JAVA_BYTE);
        return new Watched(worker, UcpEndpoint.Params.worker(address).peerErrorHandling(tls.equals(TCP)));
    }

    /**
     * Scenario 26 on shared memory. UCX 1.13 gives shared-memory lanes only to endpoints without peer error
     * handling, and such an endpoint, connected by worker address, has no other lane: a killed peer is not reported
     * at all, even after many keepalive intervals. The library's deadline is what ends the wait; then a cancel and a
     * close bounded by the library (UCX's flush would wait forever).
     * <p>
     * An endpoint connected through a listener has one more lane, the connection manager's TCP socket; UCX reports
     * its reset (observed: {@code ERR_CONNECTION_RESET} within 50 ms) even in error mode NONE. That is not promised,
     * so it is not asserted; the endpoint here is connected by address.
     */
    @Test
    void shouldEndWaitsOnADeadSharedMemoryPeerByTheLibraryDeadline() throws Exception {
        try (Arena arena = Arena.ofConfined();
             UcpContext context = context(SHM);
             UcpWorker worker = context.newWorker();
             ChildProcess victim = PeerProcess.start("address-echo", SHM, HexFormat.of().formatHex(
                     worker.address()))) {
            Watched v = connectByAddress(worker, arena, SHM);
            echo(worker, v.ep, arena, 1, 4096);
            echo(worker, v.ep, arena, 2, 1 << 20);
            java.util.Set<String> lanes = v.ep.transports();
            assertTrue(java.util.Set.of("posix", "sysv", "cma", "self").containsAll(lanes) && !lanes.isEmpty(),
                    "shared memory only: " + v.ep.describe());

            victim.kill();
            assertEquals(128 + ChildProcess.SIGKILL, victim.waitFor(10));
            MemorySegment in = arena.allocate(64);
            MemorySegment out = BytePattern.allocate(arena, 64, 3);
            long recv = worker.receiveTag(in, 0, 64, 5 | PeerMain.REPLY, -1L);
            long send = v.ep.sendTag(out, 0, 64, 5);
            MemorySegment streamIn = arena.allocate(64);
            long stream = v.ep.receiveStream(streamIn, 0, 64, true); // the endpoint's own: still nothing ends it
            long waiting = System.nanoTime();
            assertThrows(UcxTimeoutException.class, () -> worker.await(stream, Duration.ofSeconds(2),
                    UcpWorker.Idle.YIELD));
            long waited = millisSince(waiting);
            TestSupport.progressFor(1000, worker); // 5 more keepalive intervals
            log("dead shm peer (%s): nothing reported after %d ms, library deadline fired after %d ms", lanes,
                    millisSince(waiting), waited);
            assertTrue(waited >= 2000 && waited < 2000 + BOUND.toMillis(), "waited " + waited + " ms");
            assertFalse(v.ep.isFailed(), "UCX 1.13 reports nothing for this endpoint");
            assertEquals(0, v.reports.get());
            assertFalse(worker.poll(recv));
            assertFalse(worker.poll(stream), "the token stays valid after the deadline");

            worker.cancel(recv);
            assertThrows(UcxCanceledException.class, () -> worker.await(recv, BOUND, UcpWorker.Idle.SPIN));
            // UCX 1.13's ucp_request_cancel ignores stream receives; closing the endpoint cancels them
            worker.cancel(stream);
            TestSupport.progressFor(100, worker);
            boolean streamPending = worker.inFlightCount() > 0;
            boolean sent = worker.poll(send); // an eager shared-memory send is done once copied to the peer's FIFO
            long closing = System.nanoTime();
            v.ep.closeForce();
            log("dead shm peer: 64-byte send %s; stream receive %s by cancel; close took %d ms",
                    sent ? "had completed OK" : "still pending", streamPending ? "not ended" : "ended",
                    millisSince(closing));
            assertThrows(UcxCanceledException.class, () -> worker.await(stream, BOUND, UcpWorker.Idle.SPIN),
                    "the stream receive ends canceled, by the cancel or by the close");
            assertTrue(millisSince(closing) < BOUND.toMillis());
            if (!sent) {
                assertThrows(IllegalStateException.class, () -> worker.poll(send), "released by the close");
            }
            assertEquals(0, worker.inFlightCount());
        }
    }

    // ---- (b) killed with operations in flight ----------------------------------------------------------------------

    /** How an operation ended: {@code null} for OK, else its exception. */
    private static final class Outcome {
        final String what;
        final long token;
        final CompletableFuture<Long> future;
        boolean done;
        RuntimeException failure;

        Outcome(String what, long token, CompletableFuture<Long> future) {
            this.what = what;
            this.token = token;
            this.future = future;
            this.done = token == UcpWorker.COMPLETED && future == null;
        }

        void check(UcpWorker worker) {
            if (done) {
                return;
            }
            if (future != null) {
                if (future.isDone()) {
                    done = true;
                    try {
                        future.get();
                    } catch (ExecutionException e) {
                        failure = (RuntimeException) e.getCause();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
                return;
            }
            try {
                done = worker.poll(token);
            } catch (RuntimeException e) {
                done = true;
                failure = e;
            }
        }

        String result() {
            return failure == null ? "OK" : failure instanceof UcxException u ? u.getClass().getSimpleName() + "/"
                    + u.status() : failure.toString();
        }
    }

    /**
     * Scenario 27: the peer stops progressing (so nothing it must answer completes), this side starts operations of
     * every kind, and the peer is SIGKILLed. Within the bound every operation of the endpoint completes: sends OK (UCX
     * had finished with them) or with a peer failure or cancellation; a flush, a get, a synchronous send, rendezvous
     * sends and a stream receive only with an error. The posted tag receives, which belong to the worker, stay
     * posted (UCX cannot know they were meant for the dead peer) until canceled. Then nothing is in flight.
     */
    @Test
    void shouldCompleteEveryPendingOperationWhenThePeerDiesWithOperationsInFlight() throws Exception {
        try (Arena arena = Arena.ofConfined();
             ChildProcess victim = PeerProcess.start("stall", TCP);
             UcpContext context = context(TCP);
             UcpWorker worker = context.newWorker()) {
            Watched v = connect(worker, victim, TCP);
            UcpEndpoint ep = v.ep;
            MemorySegment keyBytes = arena.allocate(4096);
            worker.await(worker.receiveTag(keyBytes, 0, keyBytes.byteSize(), PeerMain.KEY, -1L), BOUND,
                    UcpWorker.Idle.SPIN);
            UcpRemoteKey key = ep.unpackRemoteKey(keyBytes.asSlice(0, worker.receivedLength()).toArray(JAVA_BYTE));
            MemorySegment go = arena.allocate(8);
            long goReply = worker.receiveTag(go, 0, 8, PeerMain.GO | PeerMain.REPLY, -1L);
            worker.await(ep.sendTag(go, 0, 8, PeerMain.GO), BOUND, UcpWorker.Idle.SPIN);
            worker.await(goReply, BOUND, UcpWorker.Idle.SPIN);
            victim.expect("STALLED", 30);

            List<Outcome> ops = new ArrayList<>();
            List<Long> receives = new ArrayList<>();
            MemorySegment inbox = arena.allocate(64 * 1024);
            for (int i = 0; i < 64; i++) {
                receives.add(worker.receiveTag(inbox, i * 1024L, 1024, 0x5000 + i, -1L));
            }
            MemorySegment small = BytePattern.allocate(arena, 8192, 1);
            for (int i = 0; i < 1000; i++) {
                ops.add(new Outcome("eager send " + i, ep.sendTag(small, 0, small.byteSize(), 0x6000 + i), null));
            }
            MemorySegment big = BytePattern.allocate(arena, 1 << 20, 2);
            List<String> mustFail = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                mustFail.add("rendezvous send " + i);
                ops.add(new Outcome("rendezvous send " + i, UcpWorker.COMPLETED,
                        ep.sendTagAsync(big, 0, big.byteSize(), 0x7000 + i)));
            }
            mustFail.add("sync send");
            ops.add(new Outcome("sync send", ep.sendTagSync(small, 0, 64, 0x7100), null));
            MemorySegment streamIn = arena.allocate(4096);
            mustFail.add("stream receive");
            ops.add(new Outcome("stream receive", ep.receiveStream(streamIn, 0, streamIn.byteSize(), true), null));
            MemorySegment putSource = BytePattern.allocate(arena, 256 * 1024, 3);
            ops.add(new Outcome("put", ep.put(putSource, 0, putSource.byteSize(), key.base(), key), null));
            mustFail.add("flush");
            ops.add(new Outcome("flush", ep.flush(), null));
            MemorySegment getTarget = arena.allocate(4096);
            mustFail.add("get");
            ops.add(new Outcome("get", UcpWorker.COMPLETED, ep.getAsync(getTarget, 0, getTarget.byteSize(),
                    key.base(), key)));
            TestSupport.progressFor(200, worker);
            for (Outcome o : ops) {
                o.check(worker);
            }
            long pendingBefore = ops.stream().filter(o -> !o.done).count();
            log("stalled peer: %d of %d operations pending before the kill, %d in flight in the worker",
                    pendingBefore, ops.size(), worker.inFlightCount());
            for (Outcome o : ops) {
                if (mustFail.contains(o.what)) {
                    assertFalse(o.done, o.what + " cannot complete while the peer does not progress");
                }
            }

            long killedAt = System.nanoTime();
            victim.kill();
            long reportMillis = awaitReport(worker, v, killedAt);
            // BOUND from the kill, not from the report
            Await.until(() -> "every operation ended after the kill; still pending: " + ops.stream()
                    .filter(o -> !o.done).map(o -> o.what).toList(), BOUND.minusNanos(System.nanoTime() - killedAt),
                    () -> {
                        worker.progress();
                        for (Outcome o : ops) {
                            o.check(worker);
                        }
                    }, () -> ops.stream().allMatch(o -> o.done));
            long allDoneMillis = millisSince(killedAt);
            Map<String, Integer> results = new TreeMap<>();
            for (Outcome o : ops) {
                results.merge(o.what.replaceAll(" \\d+$", "") + " -> " + o.result(), 1, Integer::sum);
                if (o.failure != null) {
                    assertTrue(o.failure instanceof UcxPeerFailureException
                            || o.failure instanceof UcxCanceledException, o.what + " failed with " + o.failure);
                } else {
                    assertFalse(mustFail.contains(o.what), o.what + " completed OK although the peer never answered");
                }
            }
            log("killed with operations in flight: handler %s after %d ms, all done after %d ms: %s",
                    v.error.status(), reportMillis, allDoneMillis, results);
            assertEquals(1, v.reports.get());

            // the worker's tag receives are not the endpoint's: still posted, and cancelable
            TestSupport.progressFor(100, worker);
            for (long r : receives) {
                assertFalse(worker.poll(r), "a posted tag receive is not failed by an endpoint's failure");
            }
            for (long r : receives) {
                worker.cancel(r);
            }
            for (long r : receives) {
                assertThrows(UcxCanceledException.class, () -> worker.await(r, BOUND, UcpWorker.Idle.SPIN));
            }
            assertEquals(0, worker.inFlightCount(), "nothing left pending");
            ep.closeForce();
        }
    }

    // ---- (c) killed during a rendezvous ----------------------------------------------------------------------------

    private static final long RNDV_SIZE = 32L << 20;

    private static long patternCrc(long size) {
        CRC32C crc = new CRC32C();
        byte[] chunk = new byte[1 << 16];
        for (long at = 0; at < size; at += chunk.length) {
            BytePattern.fill(MemorySegment.ofArray(chunk), PeerMain.SEED, at);
            crc.update(chunk, 0, (int) Math.min(chunk.length, size - at));
        }
        return crc.getValue();
    }

    /**
     * Scenario 28, receiving side: the sender is SIGKILLed once an eighth of a 32 MiB rendezvous message has landed
     * here. The receive completes within the bound with a peer failure, never OK; were it OK, the CRC of the whole
     * buffer would have to match the sender's pattern.
     */
    @Test
    void shouldFailARendezvousReceiveWhoseSenderDiesMidTransfer() throws Exception {
        try (Arena arena = Arena.ofConfined();
             ChildProcess sender = PeerProcess.start("rndv-send", TCP, Long.toString(RNDV_SIZE));
             UcpContext context = context(TCP);
             UcpWorker worker = context.newWorker()) {
            Watched v = connect(worker, sender, TCP);
            MemorySegment data = arena.allocate(RNDV_SIZE, 4096);
            long watch = RNDV_SIZE / 8;
            long last = RNDV_SIZE - 1;
            data.set(JAVA_BYTE, watch, (byte) ~BytePattern.at(PeerMain.SEED, watch));
            data.set(JAVA_BYTE, last, (byte) ~BytePattern.at(PeerMain.SEED, last));
            long receive = worker.receiveTag(data, 0, RNDV_SIZE, PeerMain.DATA, -1L);
            MemorySegment go = arena.allocate(8);
            worker.await(v.ep.sendTag(go, 0, 8, PeerMain.GO), BOUND, UcpWorker.Idle.SPIN);
            long started = System.nanoTime();
            worker.awaitCondition(() -> data.get(JAVA_BYTE, watch) == BytePattern.at(PeerMain.SEED, watch),
                    Duration.ofSeconds(30), UcpWorker.Idle.SPIN);
            sender.kill();
            long killedAt = System.nanoTime();
            boolean lastLanded = data.get(JAVA_BYTE, last) == BytePattern.at(PeerMain.SEED, last);
            assertFalse(lastLanded, "killed mid-transfer: the last byte had not arrived");
            RuntimeException failure = null;
            try {
                worker.await(receive, BOUND, UcpWorker.Idle.SPIN);
            } catch (UcxTimeoutException e) {
                throw new AssertionError("the receive is still pending " + BOUND + " after its sender died", e);
            } catch (RuntimeException e) {
                failure = e;
            }
            log("rendezvous sender killed %d ms into a %d MiB transfer: receive ended after %d ms with %s, "
                            + "handler %s", TimeUnit.NANOSECONDS.toMillis(killedAt - started), RNDV_SIZE >> 20,
                    millisSince(killedAt), failure == null ? "OK" : failure, v.error == null ? "not run"
                            : v.error.status());
            if (failure == null) {
                // UCX may complete a receive only with all of the data: check every byte's worth
                CRC32C crc = new CRC32C();
                crc.update(data.asByteBuffer());
                assertEquals(patternCrc(RNDV_SIZE), crc.getValue(), "a receive that completes OK holds all the data");
            } else {
                assertInstanceOf(UcxPeerFailureException.class, failure, failure.toString());
            }
            assertNotNull(failure, "the sender died with most of the message unsent, so OK is impossible");
            awaitReport(worker, v, killedAt);
            assertEquals(1, v.reports.get());
            assertEquals(0, worker.inFlightCount());
            v.ep.closeForce();
        }
    }

    /**
     * Scenario 28, sending side: the receiver SIGKILLs itself once an eighth of a 32 MiB rendezvous message has
     * reached it. The send completes within the bound with a peer failure, never OK.
     */
    @Test
    void shouldFailARendezvousSendWhoseReceiverDiesMidTransfer() throws Exception {
        try (Arena arena = Arena.ofConfined();
             ChildProcess receiver = PeerProcess.start("rndv-recv", TCP, Long.toString(RNDV_SIZE));
             UcpContext context = context(TCP);
             UcpWorker worker = context.newWorker()) {
            Watched v = connect(worker, receiver, TCP);
            MemorySegment data = arena.allocate(RNDV_SIZE, 4096);
            BytePattern.fill(data.asSlice(0, RNDV_SIZE), PeerMain.SEED);
            MemorySegment go = arena.allocate(8);
            long goReply = worker.receiveTag(go, 0, 8, PeerMain.GO | PeerMain.REPLY, -1L);
            worker.await(v.ep.sendTag(go, 0, 8, PeerMain.GO), BOUND, UcpWorker.Idle.SPIN);
            worker.await(goReply, Duration.ofSeconds(30), UcpWorker.Idle.SPIN); // the receive is posted
            long started = System.nanoTime();
            long send = v.ep.sendTag(data, 0, RNDV_SIZE, PeerMain.DATA);
            assertTrue(send != UcpWorker.COMPLETED, "a rendezvous send cannot complete at once");
            UcxException failure = assertThrows(UcxException.class, () -> worker.await(send, BOUND,
                    UcpWorker.Idle.SPIN), "the send must not complete OK: the receiver died with most of it unsent");
            assertFalse(failure instanceof UcxTimeoutException, "still pending " + BOUND + " after the death");
            assertInstanceOf(UcxPeerFailureException.class, failure, failure.toString());
            log("rendezvous receiver killed itself mid-transfer: send failed %d ms after it started with %s, "
                    + "handler %s", millisSince(started), failure.status(), v.error == null ? "not run"
                    : v.error.status());
            assertEquals(128 + ChildProcess.SIGKILL, receiver.waitFor(10), "the receiver died of its SIGKILL");
            assertFalse(receiver.output().contains("RECEIVED"), receiver.output());
            awaitReport(worker, v, started);
            assertEquals(1, v.reports.get());
            assertEquals(0, worker.inFlightCount());
            v.ep.closeForce();
        }
    }

    // ---- (d) stopped, then resumed ---------------------------------------------------------------------------------

    /**
     * Scenario 29: a peer frozen with SIGSTOP is not dead to UCX, on tcp (its kernel still acknowledges) nor on shared
     * memory (its process exists): nothing is reported, for several keepalive intervals. The library's deadline turns
     * the wait into a {@link UcxTimeoutException} and leaves the operation valid; after SIGCONT every message sent
     * while the peer was stopped, eager and rendezvous, is echoed intact.
     */
    @ParameterizedTest
    @ValueSource(strings = {TCP, SHM})
    void shouldTimeOutOnAStoppedPeerAndLoseNothingOnceItResumes(String tls) throws Exception {
        try (Arena arena = Arena.ofConfined();
             ChildProcess peer = PeerProcess.start("tag-echo", tls);
             UcpContext context = context(tls);
             UcpWorker worker = context.newWorker()) {
            Watched v = connect(worker, peer, tls);
            echo(worker, v.ep, arena, 1, 4096);

            peer.stop();
            try {
                int[] sizes = {1, 100, 4096, 60000, 1 << 20, 3 << 20, 8};
                Map<Long, MemorySegment[]> exchanges = new LinkedHashMap<>();
                List<Long> receives = new ArrayList<>();
                List<Long> sends = new ArrayList<>();
                for (int i = 0; i < sizes.length; i++) {
                    long tag = 10 + i;
                    MemorySegment out = BytePattern.allocate(arena, sizes[i], i);
                    MemorySegment in = arena.allocate(sizes[i]);
                    exchanges.put(tag, new MemorySegment[] {out, in});
                    receives.add(worker.receiveTag(in, 0, sizes[i], tag | PeerMain.REPLY, -1L));
                    sends.add(v.ep.sendTag(out, 0, sizes[i], tag));
                }
                long waiting = System.nanoTime();
                assertThrows(UcxTimeoutException.class, () -> worker.await(receives.getFirst(),
                        Duration.ofMillis(1500), UcpWorker.Idle.YIELD));
                assertTrue(millisSince(waiting) >= 1500);
                TestSupport.progressFor(1500, worker); // 15 keepalive intervals in all
                assertFalse(v.ep.isFailed(), "UCX does not report a stopped peer");
                assertEquals(0, v.reports.get());
                log("%s peer stopped for %d ms: nothing reported by UCX, library deadline fired", tls,
                        millisSince(waiting));

                peer.resume();
                long resumed = System.nanoTime();
                for (long s : sends) {
                    worker.await(s, BOUND, UcpWorker.Idle.SPIN);
                }
                int i = 0;
                for (Map.Entry<Long, MemorySegment[]> e : exchanges.entrySet()) {
                    worker.await(receives.get(i), BOUND, UcpWorker.Idle.SPIN);
                    MemorySegment[] pair = e.getValue();
                    assertEquals(pair[0].byteSize(), worker.receivedLength(), "length of echo " + e.getKey());
                    assertArrayEquals(pair[0].toArray(JAVA_BYTE), pair[1].toArray(JAVA_BYTE), "echo " + e.getKey());
                    i++;
                }
                log("%s peer resumed: all %d exchanges complete after %d ms", tls, sizes.length,
                        millisSince(resumed));
            } finally {
                peer.resume();
            }
            assertEquals(0, v.reports.get());
            bye(worker, v.ep, arena, peer);
            assertEquals(0, worker.inFlightCount());
        }
    }
}
