package io.github.ucxffm;

import io.github.ucxffm.testsupport.Await;
import io.github.ucxffm.testsupport.BytePattern;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Closing from inside UCX callbacks, and callbacks that throw (RELIABILITY.md b.1, scenarios 5, 6 and 7).
 * <p>
 * Every callback of this library (operation completions, active-message handlers, endpoint error handlers,
 * connection handlers) runs inside {@code ucp_worker_progress}, which must not be entered again from there: the UCX
 * 1.13.1 this project runs on has its assertions compiled in, and a nested {@code ucp_worker_progress} aborts the
 * process ({@code ucp_worker.c:2781 Assertion `worker->inprogress++ == 0' failed}). So the scenarios that may abort
 * run in a child JVM ({@link Child}), and a crash fails one test, not the suite. What is found:
 * <ul>
 *   <li>closing an endpoint from its own error handler works (the close is forced, no progress is needed); its
 *   operations in flight fail, the handler runs once, the worker keeps working;</li>
 *   <li>force-closing an endpoint from a send completion or an active-message handler works;</li>
 *   <li>a graceful {@code close()} from a send completion or an active-message handler starts the close there and
 *   leaves it to the worker's next progress calls (waiting for it would progress the worker inside its own
 *   progress);</li>
 *   <li>closing the worker or the context from one of its callbacks is refused with an
 *   {@link IllegalStateException}, which the {@code progress()} that ran the callback rethrows
 *   ({@code ucp_worker_destroy} inside {@code ucp_worker_progress} would crash the process);</li>
 *   <li>an exception or error thrown by a callback is rethrown, the same object, by the {@code progress()} that ran
 *   the callback (a second one is attached as suppressed), and the worker keeps working.</li>
 * </ul>
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CallbackCloseTest {

    private static final Duration BOUND = Duration.ofSeconds(10);
    /** Large enough for rendezvous on tcp: its completion comes from progress, not from the starting call. */
    private static final int BIG = 1 << 20;

    private int liveBefore;

    @BeforeEach
    void setUp() {
        liveBefore = UcxHandle.liveHandles();
    }

    @AfterEach
    void tearDown() {
        assertEquals(liveBefore, UcxHandle.liveHandles(), "handles left open");
    }

    /**
     * Two workers of one context on this thread, connected over tcp through a listener (peer error handling), with a
     * first message exchanged: {@code ab} is a's endpoint, {@code ba} the one b accepted.
     */
    static final class Pair implements AutoCloseable {
        final AtomicInteger abErrors = new AtomicInteger();
        final AtomicReference<UcxException> abError = new AtomicReference<>();
        final AtomicReference<java.util.function.Consumer<UcxException>> onAbError = new AtomicReference<>();
        final TwoWorkers workers = TwoWorkers.builder(UcpContext.Feature.TAG, UcpContext.Feature.AM,
                UcpContext.Feature.STREAM).tls("tcp").timeout(BOUND).throughListener(e -> {
                    abErrors.incrementAndGet();
                    abError.set(e);
                    java.util.function.Consumer<UcxException> then = onAbError.get();
                    if (then != null) {
                        then.accept(e);
                    }
                }).build();
        final Arena arena = workers.arena;
        final UcpContext context = workers.context;
        final UcpWorker a = workers.a;
        final UcpWorker b = workers.b;
        final UcpEndpoint ab = workers.ab;
        final UcpEndpoint ba = workers.ba;

        Pair() {
            exchange(ab, 1, 64);
        }

        UcpEndpoint connect(UcpWorker w, java.util.function.Consumer<UcxException> onError) {
            return workers.connectToListener(w, onError);
        }

        UcpEndpoint accept() {
            return workers.accept();
        }

        /** Progresses both workers until the condition holds; an exception from a's progress is rethrown. */
        void progressUntil(java.util.function.BooleanSupplier condition) {
            Await.until("the condition", BOUND, () -> {
                if (!a.isClosed()) {
                    a.progress();
                }
                if (!b.isClosed()) {
                    b.progress();
                }
            }, condition);
        }

        /** A message of {@code size} bytes from a to b over {@code ep}, checked. */
        void exchange(UcpEndpoint ep, long tag, int size) {
            MemorySegment src = BytePattern.allocate(arena, size, (int) tag);
            MemorySegment dst = arena.allocate(size);
            long recv = b.receiveTag(dst, 0, size, tag, -1L);
            long send = ep.sendTag(src, 0, size, tag);
            boolean[] done = new boolean[2];
            progressUntil(() -> (done[0] = done[0] || b.poll(recv)) & (done[1] = done[1] || a.poll(send)));
            assertArrayEquals(src.toArray(JAVA_BYTE), dst.toArray(JAVA_BYTE));
        }

        /** a's worker still connects and exchanges, on a new endpoint. */
        void assertWorkerStillWorks() {
            UcpEndpoint fresh = connect(a, null);
            UcpEndpoint accepted = accept();
            exchange(fresh, 77, 4096);
            exchange(fresh, 78, BIG);
            fresh.closeForce();
            accepted.closeForce();
        }

        @Override
        public void close() {
            workers.close();
        }
    }

    // ---- closing an endpoint from its own error handler ----------------------------------------------------------------

    /**
     * Scenario 7: the peer's endpoint is force-closed with four rendezvous sends in flight; a's error handler closes
     * its own endpoint, inside progress. The handler runs once; the close succeeds there (a failed endpoint's close is
     * forced and needs no progress); the sends in flight complete with a peer failure or a cancellation; the worker
     * goes on connecting and exchanging.
     */
    @Test
    void shouldCloseAnEndpointFromItsOwnErrorHandler() {
        try (Pair p = new Pair()) {
            AtomicReference<Throwable> closeOutcome = new AtomicReference<>();
            AtomicReference<Boolean> closedInHandler = new AtomicReference<>();
            p.onAbError.set(e -> {
                try {
                    p.ab.close();
                    closeOutcome.set(new Throwable("ok"));
                } catch (Throwable t) {
                    closeOutcome.set(t);
                }
                closedInHandler.set(p.ab.isClosed());
            });
            MemorySegment big = BytePattern.allocate(p.arena, BIG, 3);
            List<Long> sends = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                sends.add(p.ab.sendTag(big, 0, BIG, 100 + i)); // no receive is posted: they wait for one
            }
            p.ba.closeForce();
            p.progressUntil(() -> p.abErrors.get() > 0);
            assertEquals("ok", closeOutcome.get().getMessage(), "close() in the error handler: " + closeOutcome.get());
            assertTrue(closedInHandler.get(), "closed when close() returned, inside the handler");
            assertInstanceOf(UcxPeerFailureException.class, p.abError.get());
            for (long s : sends) {
                UcxException e = assertThrows(UcxException.class, () -> p.a.await(s, BOUND, UcpWorker.Idle.SPIN));
                assertTrue(e instanceof UcxPeerFailureException || e instanceof UcxCanceledException, e.toString());
            }
            TestSupport.progressFor(200, p.a, p.b);
            assertEquals(1, p.abErrors.get(), "the error handler runs once");
            assertThrows(IllegalStateException.class, () -> p.ab.sendTag(big, 0, 8, 1));
            assertEquals(0, p.a.inFlightCount());
            p.assertWorkerStillWorks();
        }
    }

    // ---- callbacks that throw --------------------------------------------------------------------------------------

    /**
     * Scenario 5, completion callback: the exception thrown by a send's callback, run inside progress, comes out of
     * that {@code progress()} call, the same object; the operation is not left in flight; the worker keeps working and
     * the next progress is clean.
     */
    @Test
    void shouldRethrowAnExceptionThrownByACompletionCallbackFromTheProgressThatRanIt() {
        try (Pair p = new Pair()) {
            RuntimeException boom = new IllegalStateException("thrown by the send callback");
            AtomicInteger calls = new AtomicInteger();
            MemorySegment big = BytePattern.allocate(p.arena, BIG, 5);
            MemorySegment dst = p.arena.allocate(BIG);
            long recv = p.b.receiveTag(dst, 0, BIG, 9, -1L);
            p.ab.sendTag(big, 0, BIG, 9, (status, length, tag) -> {
                calls.incrementAndGet();
                throw boom;
            });
            RuntimeException caught = progressUntilThrown(p);
            assertSame(boom, caught);
            assertEquals(1, calls.get());
            p.progressUntil(() -> p.b.poll(recv));
            assertArrayEquals(big.toArray(JAVA_BYTE), dst.toArray(JAVA_BYTE), "the data arrived all the same");
            p.a.progress(); // nothing left to rethrow
            assertEquals(0, p.a.inFlightCount());
            p.exchange(p.ab, 10, BIG);
            p.assertWorkerStillWorks();
        }
    }

    /** Progresses a (and b) until a's progress throws; returns what it threw. */
    private static RuntimeException progressUntilThrown(Pair p) {
        return progressUntilThrown(p.a, p.b);
    }

    /** Progresses both workers until the progress of {@code thrower} throws; returns what it threw. */
    private static RuntimeException progressUntilThrown(UcpWorker thrower, UcpWorker other) {
        RuntimeException[] thrown = new RuntimeException[1];
        Await.until("an exception out of " + thrower + "'s progress()", BOUND, () -> {
            try {
                thrower.progress();
            } catch (RuntimeException e) {
                thrown[0] = e;
                return;
            }
            other.progress();
        }, () -> thrown[0] != null);
        return thrown[0];
    }

    /**
     * Scenario 5, an {@link Error}: rethrown as itself; two callbacks throwing in one progress call give the first,
     * with the second attached as suppressed.
     */
    @Test
    void shouldRethrowAnErrorAndAttachASecondFailureAsSuppressed() {
        try (Pair p = new Pair()) {
            Error first = new StackOverflowError("thrown by the first callback");
            RuntimeException second = new IllegalArgumentException("thrown by the second callback");
            MemorySegment big = BytePattern.allocate(p.arena, BIG, 6);
            MemorySegment d1 = p.arena.allocate(BIG);
            MemorySegment d2 = p.arena.allocate(BIG);
            long r1 = p.b.receiveTag(d1, 0, BIG, 21, -1L);
            long r2 = p.b.receiveTag(d2, 0, BIG, 22, -1L);
            AtomicInteger order = new AtomicInteger();
            p.ab.sendTag(big, 0, BIG, 21, (s, l, t) -> {
                if (order.getAndIncrement() == 0) {
                    throw first;
                }
                throw second;
            });
            p.ab.sendTag(big, 0, BIG, 22, (s, l, t) -> {
                if (order.getAndIncrement() == 0) {
                    throw first;
                }
                throw second;
            });
            List<Throwable> thrown = new ArrayList<>();
            Await.until("both callbacks run", BOUND, () -> {
                try {
                    p.a.progress();
                } catch (Throwable t) {
                    thrown.add(t);
                }
                p.b.progress();
            }, () -> order.get() >= 2);
            try {
                p.a.progress();
            } catch (Throwable t) {
                thrown.add(t);
            }
            assertFalse(thrown.isEmpty());
            assertSame(first, thrown.getFirst(), "the Error itself, not wrapped");
            List<Throwable> all = new ArrayList<>(thrown);
            for (Throwable t : thrown) {
                all.addAll(List.of(t.getSuppressed()));
            }
            assertTrue(all.contains(second), "the second failure is reported too: " + all);
            assertEquals(2, all.size(), "each reported once: " + all);
            p.progressUntil(() -> p.b.poll(r1));
            p.progressUntil(() -> p.b.poll(r2));
            assertEquals(0, p.a.inFlightCount());
            p.assertWorkerStillWorks();
        }
    }

    /**
     * Scenario 5, active-message handler: an exception after the handler kept a rendezvous message's data comes out
     * of the receiver's progress; the kept data is given back, so the sender's operation completes with a
     * cancellation rather than hanging; the next message is handled normally.
     */
    @Test
    void shouldRethrowAnExceptionThrownByAnActiveMessageHandlerAndGiveBackWhatItKept() {
        try (Pair p = new Pair()) {
            RuntimeException boom = new IllegalStateException("thrown by the handler");
            AtomicInteger calls = new AtomicInteger();
            AtomicReference<UcpAmData> kept = new AtomicReference<>();
            MemorySegment got = p.arena.allocate(BIG);
            AtomicReference<Long> received = new AtomicReference<>();
            p.b.setAmHandler(4, m -> {
                if (calls.incrementAndGet() == 1) {
                    kept.set(m.keep());
                    throw boom;
                }
                received.set(m.keep().receive(got, 0));
            });
            MemorySegment big = BytePattern.allocate(p.arena, BIG, 7);
            long send = p.ab.sendAm(4, null, big, 0, BIG, UcpAmSendFlags.RNDV);
            assertSame(boom, progressUntilThrown(p.b, p.a));
            assertFalse(kept.get().isHeld(), "what the failed handler kept was given back");
            assertThrows(UcxCanceledException.class, () -> awaitOn(p, p.a, send));
            long second = p.ab.sendAm(4, null, big, 0, BIG, UcpAmSendFlags.RNDV);
            p.progressUntil(() -> received.get() != null);
            awaitOn(p, p.b, received.get());
            awaitOn(p, p.a, second);
            assertArrayEquals(big.toArray(JAVA_BYTE), got.toArray(JAVA_BYTE));
            assertEquals(2, calls.get());
            p.b.setAmHandler(4, null);
        }
    }

    /** Awaits a token of {@code w}, progressing both workers. */
    private static void awaitOn(Pair p, UcpWorker w, long token) {
        boolean[] done = {false};
        p.progressUntil(() -> done[0] = w.poll(token));
    }

    /**
     * Scenario 5, error handler: its exception comes out of the progress that reported the failure; the endpoint is
     * failed all the same and closes; the worker keeps working.
     */
    @Test
    void shouldRethrowAnExceptionThrownByAnErrorHandler() {
        try (Pair p = new Pair()) {
            RuntimeException boom = new IllegalStateException("thrown by the error handler");
            p.onAbError.set(e -> {
                throw boom;
            });
            p.ba.closeForce();
            RuntimeException caught = progressUntilThrown(p);
            assertSame(boom, caught);
            assertEquals(1, p.abErrors.get());
            assertTrue(p.ab.isFailed());
            TestSupport.progressFor(200, p.a, p.b);
            assertEquals(1, p.abErrors.get(), "still once");
            p.ab.close();
            p.assertWorkerStillWorks();
        }
    }

    /**
     * Scenario 5, a callback that runs inside the call that starts the operation: a receive whose message had
     * arrived already (UCX calls it from {@code ucp_tag_recv_nbx}). The exception is not thrown from the starting
     * call, which did post the receive; it comes out of the next {@code progress()}, once.
     */
    @Test
    void shouldRethrowAnExceptionOfACallbackRunInsideTheStartingCallFromTheNextProgress() {
        try (Pair p = new Pair()) {
            MemorySegment src = BytePattern.allocate(p.arena, 64, 8);
            MemorySegment dst = p.arena.allocate(64);
            long send = p.ab.sendTag(src, 0, 64, 31);
            boolean[] sent = {false};
            p.progressUntil(() -> sent[0] = sent[0] || p.a.poll(send));
            Await.until("the message in b's unexpected queue", BOUND, p.b::progress,
                    () -> p.b.probeTag(31, -1L, false) != 0);
            RuntimeException boom = new IllegalStateException("thrown by the receive callback");
            AtomicInteger calls = new AtomicInteger();
            p.b.receiveTag(dst, 0, 64, 31, -1L, (s, l, t) -> {
                calls.incrementAndGet();
                throw boom;
            });
            assertEquals(1, calls.get(), "ran inside receiveTag");
            assertSame(boom, assertThrows(RuntimeException.class, p.b::progress));
            p.b.progress(); // once only
            assertArrayEquals(src.toArray(JAVA_BYTE), dst.toArray(JAVA_BYTE));
            assertEquals(0, p.b.inFlightCount());
        }
    }

    /**
     * Scenario 5, connection handler: its exception comes out of the listener worker's progress; the request it
     * left unanswered is rejected at once, so the client's endpoint fails instead of waiting for the listener to
     * close; the worker keeps accepting on a new listener.
     */
    @Test
    void shouldRethrowAnExceptionThrownByAConnectionHandlerAndRejectTheRequest() {
        try (Arena arena = Arena.ofConfined();
             UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG).config("TLS", "tcp").build();
             UcpWorker server = context.newWorker();
             UcpWorker client = context.newWorker()) {
            RuntimeException boom = new IllegalStateException("thrown by the connection handler");
            UcpListener listener = server.listen(new InetSocketAddress("127.0.0.1", 0), null, r -> {
                throw boom;
            });
            AtomicReference<UcxException> clientError = new AtomicReference<>();
            UcpEndpoint ep = client.connect(UcpEndpoint.Params.socket(listener.address()).onError(clientError::set));
            assertSame(boom, progressUntilThrown(server, client));
            // the listener stays open: the request was rejected when the handler threw
            TestSupport.progressUntil(() -> clientError.get() != null, BOUND.toMillis(), client, server);
            assertTrue(ep.isFailed(), "the client learns it was refused: " + clientError.get());
            listener.close();
            ep.closeForce();
            UcpListener second = server.listen(new InetSocketAddress("127.0.0.1", 0));
            UcpEndpoint again = client.connect(second.address());
            UcpConnectionRequest[] r = new UcpConnectionRequest[1];
            TestSupport.progressUntil(() -> (r[0] = second.poll()) != null, BOUND.toMillis(), client, server);
            UcpEndpoint accepted = r[0].accept();
            MemorySegment src = BytePattern.allocate(arena, 32, 1);
            MemorySegment dst = arena.allocate(32);
            long recv = server.receiveTag(dst, 0, 32, 5, -1L);
            long send = again.sendTag(src, 0, 32, 5);
            TestSupport.awaitBoth(client, send, server, recv);
            assertNotNull(accepted);
        }
    }

    // ---- closing from callbacks, in a child JVM --------------------------------------------------------------------

    /** Runs a {@link Child} scenario; returns its {@code KEY value} lines, after checking it exited normally. */
    private static Map<String, String> child(String scenario) throws Exception {
        // a crash report goes to the temporary directory, not into the module, and does not hang for minutes
        String jvmOptions = "-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/ucxffm-child-hs_err_%p.log"
                + " -XX:ErrorLogTimeout=5 -XX:-CreateCoredumpOnCrash";
        try (ChildProcess child = ChildProcess.java(Child.class).name(scenario)
                .env("JAVA_TOOL_OPTIONS", jvmOptions).args(scenario).start()) {
            int exit = child.waitFor(40);
            String out = child.output();
            assertEquals(0, exit, "the child JVM running '" + scenario + "' died (134: abort, 139: SIGSEGV):\n" + out);
            Map<String, String> result = new LinkedHashMap<>();
            for (String line : out.split("\n")) {
                int space = line.indexOf(' ');
                if (line.startsWith("R.") && space > 0) {
                    result.put(line.substring(2, space), line.substring(space + 1));
                }
                assertFalse(line.contains("UCX  ERROR") || line.contains("UCX  FATAL") || line.contains("Assertion"),
                        "UCX complained: " + line + "\n" + out);
            }
            assertEquals("true", result.get("exit"), out);
            System.out.printf("[CallbackCloseTest] %s: %s%n", scenario, result);
            return result;
        }
    }

    /**
     * What closing an endpoint from a callback must give: the close either done at once or deferred until the
     * callback returned (the endpoint then closed after some progress), or refused with an
     * {@link IllegalStateException} (then closing it after the callback works). The operation that ran the callback
     * completed, its data arrived, the worker keeps working, no handle is left open.
     */
    private static void assertEndpointClosedSafely(Map<String, String> r) {
        String outcome = r.get("closeInCallback");
        assertTrue(outcome.equals("ok") || outcome.startsWith("IllegalStateException"),
                "close() inside the callback: " + outcome);
        assertEquals("true", r.get("closedAfter"), "the endpoint ends up closed: " + r);
        assertEquals("true", r.get("dataArrived"), r.toString());
        assertEquals("true", r.get("workerWorks"), r.toString());
        assertEquals("0", r.get("liveHandles"), r.toString());
    }

    /** Force-closing an endpoint from its own send completion callback (rendezvous, completed inside progress). */
    @Test
    void shouldForceCloseAnEndpointFromItsOwnSendCompletionCallback() throws Exception {
        assertEndpointClosedSafely(child("force-close-endpoint-in-send-callback"));
    }

    /** Force-closing the endpoint a message came on, from the active-message handler. */
    @Test
    void shouldForceCloseAnEndpointFromAnActiveMessageHandler() throws Exception {
        assertEndpointClosedSafely(child("force-close-endpoint-in-am-handler"));
    }

    /**
     * A graceful close from a send completion callback: the close request is started there and finished by later
     * progress calls (waiting for it there would progress the worker inside its own progress, which UCX aborts on).
     */
    @Test
    void shouldCloseAnEndpointFromItsOwnSendCompletionCallback() throws Exception {
        assertEndpointClosedSafely(child("close-endpoint-in-send-callback"));
    }

    /** A graceful close of the reply endpoint from an active-message handler: finished by later progress. */
    @Test
    void shouldCloseAnEndpointFromAnActiveMessageHandler() throws Exception {
        assertEndpointClosedSafely(child("close-endpoint-in-am-handler"));
    }

    /**
     * Closing the worker (or its context) from one of its callbacks: must be refused with an
     * {@link IllegalStateException} reported by the callback, or deferred until progress returns; no crash, and
     * afterwards the worker is either fully usable or fully closed (its progress throws IllegalStateException).
     * Destroying the worker inside {@code ucp_worker_progress} would crash the process (SIGSEGV in libuct); the
     * library refuses.
     */
    @ParameterizedTest
    @ValueSource(strings = {"close-worker-in-send-callback", "close-worker-in-am-handler",
        "close-worker-in-error-handler", "close-context-in-send-callback"})
    void shouldRefuseOrDeferClosingTheWorkerFromItsOwnCallback(String scenario) throws Exception {
        Map<String, String> r = child(scenario);
        String outcome = r.get("closeInCallback");
        if (outcome.equals("ok")) {
            assertEquals("true", r.get("workerClosedAfter"), "deferred: closed once progress returned: " + r);
            assertEquals("IllegalStateException", r.get("progressAfter"), r.toString());
        } else {
            assertTrue(outcome.startsWith("IllegalStateException"), "refused with an IllegalStateException: " + r);
            assertEquals("true", r.get("workerWorks"), r.toString());
        }
        assertEquals("0", r.get("liveHandles"), r.toString());
    }

    /**
     * The child JVM of the close-from-callback scenarios: prints {@code R.key value} lines and {@code R.exit true}
     * when it got to the end; a crash shows as its exit status.
     */
    static final class Child {

        private Child() {
        }

        private static void put(String key, Object value) {
            System.out.println("R." + key + " " + value);
            System.out.flush();
        }

        private static String outcome(Runnable r) {
            try {
                r.run();
                return "ok";
            } catch (Throwable t) {
                return t.getClass().getSimpleName() + ": " + t.getMessage();
            }
        }

        /**
         * Runs one scenario.
         *
         * @param args the scenario's name
         */
        public static void main(String[] args) {
            Thread watchdog = new Thread(() -> {
                try {
                    Thread.sleep(30_000);
                } catch (InterruptedException e) {
                    return;
                }
                put("timeout", true);
                System.exit(3);
            });
            watchdog.setDaemon(true);
            watchdog.start();
            String scenario = args[0];
            Pair p = new Pair();
            AtomicReference<String> inCallback = new AtomicReference<>();
            boolean force = scenario.startsWith("force-");
            switch (scenario) {
                case "close-endpoint-in-send-callback", "force-close-endpoint-in-send-callback" -> {
                    MemorySegment big = BytePattern.allocate(p.arena, BIG, 1);
                    MemorySegment dst = p.arena.allocate(BIG);
                    long recv = p.b.receiveTag(dst, 0, BIG, 2, -1L);
                    p.ab.sendTag(big, 0, BIG, 2, (s, l, t) -> inCallback.set(outcome(force ? p.ab::closeForce
                            : p.ab::close)));
                    progress(p, () -> inCallback.get() != null);
                    put("closeInCallback", inCallback.get());
                    endpointAftermath(p, p.ab);
                    boolean[] got = {false};
                    progress(p, () -> got[0] = got[0] || p.b.poll(recv));
                    put("dataArrived", java.util.Arrays.equals(big.toArray(JAVA_BYTE), dst.toArray(JAVA_BYTE)));
                    put("workerWorks", outcome(p::assertWorkerStillWorks).equals("ok"));
                }
                case "close-endpoint-in-am-handler", "force-close-endpoint-in-am-handler" -> {
                    MemorySegment data = BytePattern.allocate(p.arena, 256, 2);
                    AtomicReference<Boolean> same = new AtomicReference<>();
                    AtomicReference<Boolean> intact = new AtomicReference<>();
                    p.b.setAmHandler(6, m -> {
                        UcpEndpoint reply = m.replyEndpoint();
                        same.set(reply == p.ba);
                        intact.set(java.util.Arrays.equals(m.data().toArray(JAVA_BYTE), data.toArray(JAVA_BYTE)));
                        inCallback.set(outcome(force ? reply::closeForce : reply::close));
                    });
                    long send = p.ab.sendAm(6, null, data, 0, 256, UcpAmSendFlags.REPLY);
                    progress(p, () -> inCallback.get() != null);
                    put("closeInCallback", inCallback.get());
                    put("replyIsTheAcceptedEndpoint", same.get());
                    endpointAftermath(p, p.ba);
                    put("dataArrived", intact.get());
                    try {
                        boolean[] done = {false};
                        progress(p, () -> done[0] = p.a.poll(send));
                    } catch (RuntimeException e) {
                        put("sendOutcome", e.getClass().getSimpleName());
                    }
                    p.b.setAmHandler(6, null);
                    p.ab.closeForce();
                    put("workerWorks", outcome(p::assertWorkerStillWorks).equals("ok"));
                }
                case "close-worker-in-send-callback", "close-context-in-send-callback" -> {
                    MemorySegment big = BytePattern.allocate(p.arena, BIG, 3);
                    MemorySegment dst = p.arena.allocate(BIG);
                    long recv = p.b.receiveTag(dst, 0, BIG, 3, -1L);
                    boolean context = scenario.startsWith("close-context");
                    p.ab.sendTag(big, 0, BIG, 3, (s, l, t) -> inCallback.set(outcome(context ? p.context::close
                            : p.a::close)));
                    progress(p, () -> inCallback.get() != null);
                    workerAftermath(p, inCallback.get());
                    if (!p.b.isClosed()) {
                        p.b.cancel(recv);
                    }
                }
                case "close-worker-in-am-handler" -> {
                    MemorySegment data = BytePattern.allocate(p.arena, 256, 4);
                    // the handler runs on b, so b is the worker closed here
                    p.b.setAmHandler(7, m -> inCallback.set(outcome(p.b::close)));
                    p.ab.sendAm(7, null, data, 0, 256, UcpAmSendFlags.NONE);
                    progress(p, () -> inCallback.get() != null);
                    put("closeInCallback", inCallback.get());
                    put("workerClosedAfter", p.b.isClosed());
                    put("progressAfter", outcome(p.b::progress).startsWith("IllegalStateException")
                            ? "IllegalStateException" : "ok");
                    put("workerWorks", !p.b.isClosed());
                }
                case "close-worker-in-error-handler" -> {
                    p.onAbError.set(e -> inCallback.set(outcome(p.a::close)));
                    p.ba.closeForce();
                    progress(p, () -> inCallback.get() != null);
                    workerAftermath(p, inCallback.get());
                }
                default -> throw new IllegalArgumentException(scenario);
            }
            p.close();
            put("liveHandles", UcxHandle.liveHandles());
            put("exit", true);
            System.exit(0);
        }

        private static void progress(Pair p, java.util.function.BooleanSupplier until) {
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (!until.getAsBoolean()) {
                for (UcpWorker w : new UcpWorker[] {p.a, p.b}) {
                    if (!w.isClosed()) {
                        try {
                            w.progress();
                        } catch (RuntimeException e) {
                            put("progressThrew", e);
                        }
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    put("timeout", true);
                    System.exit(4);
                }
            }
        }

        private static void endpointAftermath(Pair p, UcpEndpoint ep) {
            put("closedInCallback", ep.isClosed());
            long until = System.nanoTime() + 300_000_000L;
            progress(p, () -> System.nanoTime() - until > 0 || ep.isClosed());
            if (!ep.isClosed()) {
                put("closeAfterCallback", outcome(ep::closeForce)); // refused in the callback: close it now
            }
            put("closedAfter", ep.isClosed());
        }

        private static void workerAftermath(Pair p, String outcome) {
            put("closeInCallback", outcome);
            put("workerClosedAfter", p.a.isClosed());
            put("progressAfter", outcome(p.a::progress).startsWith("IllegalStateException")
                    ? "IllegalStateException" : "ok");
            if (!p.a.isClosed()) {
                put("workerWorks", outcome(p::assertWorkerStillWorks).equals("ok"));
            }
        }
    }

    /** The future forms complete on the progressing thread; a failing continuation must not be lost either. */
    @Test
    void shouldCompleteAFutureWhoseContinuationThrowsWithoutLosingTheFailure() {
        try (Pair p = new Pair()) {
            MemorySegment big = BytePattern.allocate(p.arena, BIG, 9);
            MemorySegment dst = p.arena.allocate(BIG);
            long recv = p.b.receiveTag(dst, 0, BIG, 40, -1L);
            RuntimeException boom = new IllegalStateException("thrown by a continuation");
            CompletableFuture<Long> f = p.ab.sendTagAsync(big, 0, BIG, 40);
            CompletableFuture<Void> next = f.thenAccept(n -> {
                throw boom;
            });
            p.progressUntil(() -> f.isDone() && p.b.poll(recv));
            assertEquals(BIG, f.join());
            // CompletableFuture keeps a continuation's failure in the dependent future: progress() does not see it
            assertSame(boom, assertThrows(java.util.concurrent.CompletionException.class, next::join).getCause());
            p.a.progress(); // and nothing is rethrown here
            assertEquals(0, p.a.inFlightCount());
        }
    }
}
