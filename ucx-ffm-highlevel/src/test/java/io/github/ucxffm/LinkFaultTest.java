package io.github.ucxffm;

import io.github.ucxffm.peer.NetnsScenario;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * Link faults between two UCX workers over {@code tcp}, injected in a private network namespace (RELIABILITY.md
 * b.4, scenarios 30, 31 and the reset half of 34). Each test starts a {@link NetnsScenario} JVM behind
 * {@code unshare -rn}: inside, it owns a namespace with nothing but its own {@code lo}, runs a server worker with a
 * listener on 127.0.0.1 and a client worker, and faults that {@code lo} with {@code ip}, {@code tc} and {@code ss};
 * no other process sees the faults, and the namespace vanishes with the process, which {@link ChildProcess#close()}
 * kills whatever happens. The scenario prints what it observed as {@code FACT} lines; this class asserts on them.
 * <p>
 * How the faults are made on this kernel, which has no {@code netem} and no {@code gact} action:
 * <ul>
 *   <li><b>Cut:</b> {@code ip link set lo down}; restored with {@code up}.</li>
 *   <li><b>Loss:</b> a classic-BPF program in direct-action mode on a {@code clsact} ingress hook, returning
 *   {@code TC_ACT_SHOT} for a random 2% of packets ({@code ld rand}): real loss after TCP sent the segment.</li>
 *   <li><b>Delay and reordering:</b> an {@code htb} root whose BPF classifier sends a random 5% of packets into a
 *   20 Mbit/s class with a 40-packet queue: those arrive late, overtaken by the rest (or are dropped when the
 *   queue is full).</li>
 *   <li><b>Reset:</b> {@code ss -K} destroys every established TCP socket of the namespace (RSTs go out).</li>
 * </ul>
 * Timing: UCX 1.13.1 has no {@code UCX_TCP_USER_TIMEOUT}, and TCP keepalive does not run while data is unsent or
 * unacknowledged, so the namespace's own {@code net.ipv4.tcp_retries2} is set to {@value #RETRIES2} (a cut socket
 * with data to send gives up after about 1.5 s) and {@code UCX_TCP_KEEPIDLE=1s UCX_TCP_KEEPINTVL=1s
 * UCX_TCP_KEEPCNT=1} bound an idle one (UCX rounds both times to whole seconds). An endpoint whose sockets have
 * nothing to send may never be told of a cut: the scenario gives UCX {@value NetnsScenario#SILENT_WAIT_MILLIS} ms,
 * then makes each silent side start a synchronous send, which can only fail.
 * <p>
 * Skipped, with the reason printed, where {@code unshare -rn} is not allowed (no user namespaces) or a tool the
 * scenario needs is missing; never faked.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LinkFaultTest {

    /** {@code net.ipv4.tcp_retries2} inside the namespace. */
    private static final int RETRIES2 = 1;
    private static final long BOUND = NetnsScenario.BOUND_MILLIS;
    /** Messages each way over the noisy link. */
    private static final int MESSAGES = 1000;
    private static final String PEER_FAILURE = "UcxPeerFailureException/";
    /** The reconnect exchange: 1 B, 4 KiB, 64 KiB and 1 MiB each way. */
    private static final long RECONNECT_BYTES = 2L * (1 + 4096 + 65536 + (1 << 20));

    private static final Map<String, String> ENV = Map.of(
            "UCX_TLS", "tcp",
            "UCX_KEEPALIVE_INTERVAL", "100ms",
            "UCX_TCP_KEEPIDLE", "1s",
            "UCX_TCP_KEEPINTVL", "1s",
            "UCX_TCP_KEEPCNT", "1");

    private String unavailable;

    private static void log(String format, Object... args) {
        System.out.printf("[LinkFaultTest] " + format + "%n", args);
    }

    @BeforeAll
    void checkNamespaces() throws Exception {
        try (ChildProcess p = ChildProcess.command("unshare", "-rn", "sh", "-c",
                "ip link set lo up && ip -o link show lo").start()) {
            if (!p.awaitExit(10)) {
                unavailable = "unshare -rn did not finish in 10 s";
            } else if (p.exitCode() != 0) {
                unavailable = "unshare -rn is not permitted here (user or network namespaces disabled?): "
                        + p.output().trim();
            }
        } catch (IOException e) {
            unavailable = "cannot run unshare: " + e.getMessage();
        }
        if (unavailable != null) {
            log("all tests skipped: %s", unavailable);
            return;
        }
        Run probe = run("probe");
        log("tools in a private namespace: %s%s%s", probe.fact("probe"),
                probe.facts.containsKey("probe-netem") ? "; netem: " + probe.fact("probe-netem") : "",
                probe.facts.containsKey("probe-gact") ? "; gact: " + probe.fact("probe-gact") : "");
    }

    private void requireNamespaces() {
        if (unavailable != null) {
            skip(unavailable);
        }
    }

    private static void skip(String reason) {
        log("SKIPPED: %s", reason);
        abort(reason);
    }

    /** What a scenario printed: its facts by name, and how it ended. */
    private static final class Run {
        final Map<String, Map<String, String>> facts = new LinkedHashMap<>();
        final String transcript;
        final long millis;
        String end;

        Run(String transcript, long millis) {
            this.transcript = transcript;
            this.millis = millis;
            for (String line : transcript.split("\n")) {
                if (line.startsWith("FACT ")) {
                    String[] words = line.substring(5).trim().split(" ");
                    Map<String, String> kv = new LinkedHashMap<>();
                    for (int i = 1; i < words.length; i++) {
                        int eq = words[i].indexOf('=');
                        kv.put(words[i].substring(0, eq), words[i].substring(eq + 1));
                    }
                    facts.put(words[0], kv);
                } else if (line.startsWith("DONE") || line.startsWith("SKIP") || line.startsWith("ERROR")) {
                    end = end == null ? line : end;
                }
            }
        }

        Map<String, String> fact(String name) {
            Map<String, String> f = facts.get(name);
            assertNotNull(f, "the scenario printed no FACT " + name + "; output:\n" + transcript);
            return f;
        }

        long number(String name, String key) {
            String v = fact(name).get(key);
            assertNotNull(v, "FACT " + name + " has no " + key + "; output:\n" + transcript);
            return Long.parseLong(v);
        }

        String text(String name, String key) {
            String v = fact(name).get(key);
            assertNotNull(v, "FACT " + name + " has no " + key + "; output:\n" + transcript);
            return v;
        }
    }

    private static Run run(String... args) throws Exception {
        long t = System.nanoTime();
        try (ChildProcess p = ChildProcess.java(NetnsScenario.class).name("netns")
                .wrapper(List.of("unshare", "-rn")).env(ENV).args(args).start()) {
            int code = p.waitFor(NetnsScenario.LIFETIME_SECONDS + 5);
            Run r = new Run(p.output(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t));
            if (r.end != null && r.end.startsWith("SKIP")) {
                skip(r.end.substring(5));
            }
            assertEquals(0, code, "scenario " + String.join(" ", args) + " failed; output:\n" + r.transcript);
            assertEquals("DONE", r.end, r.transcript);
            return r;
        }
    }

    /** Parses {@code {kind:Result=3,...}} into a map. */
    private static Map<String, Integer> outcomes(String text) {
        Map<String, Integer> m = new TreeMap<>();
        String body = text.substring(1, text.length() - 1);
        if (!body.isEmpty()) {
            for (String part : body.split(",")) {
                int eq = part.lastIndexOf('=');
                m.put(part.substring(0, eq), Integer.parseInt(part.substring(eq + 1)));
            }
        }
        return m;
    }

    /**
     * Both handlers ran exactly once with a typed peer failure, within the bound; each endpoint is marked failed
     * and a new operation on it is refused at once with a peer failure; then a new connection from the same workers
     * to the same listener carries data intact.
     */
    private static void assertReportedOnceThenReconnected(Run r, String name) {
        for (String side : List.of("client", "server")) {
            String status = r.text(name, side);
            assertTrue(status.startsWith(PEER_FAILURE), side + " handler saw " + status + "\n" + r.transcript);
            long ms = r.number(name, side + "Ms");
            assertTrue(ms >= 0 && ms <= BOUND, side + " reported after " + ms + " ms");
            assertEquals(1, r.number(name, side + "Reports"), side + " handler runs once");
            assertEquals("true", r.text(name, side + "Failed"));
            assertEquals(1, r.number("after", side + "Reports"), side + " handler ran again later");
        }
        String later = r.text("later-op", "outcome");
        assertTrue(later.startsWith(PEER_FAILURE), "a send on the failed endpoint: " + later);
        assertTrue(r.number("later-op", "micros") < 1_000_000, "refused at once");
        assertTrue(r.number("close-failed", "ms") < 3_000, "force close of the failed endpoints is bounded");
        assertEquals(RECONNECT_BYTES, r.number("reconnect", "bytesVerified"), "exchange over the new connection");
        assertEquals(0, r.number("reconnect", "reports"), "the new connection reports no failure");
    }

    /** Operations the scenario made the silent sides start: each a synchronous send, which must fail. */
    private static void assertProvokedFailed(Run r) {
        for (Map.Entry<String, Integer> e : outcomes(r.text("provoked", "outcomes")).entrySet()) {
            assertTrue(e.getKey().contains(":" + PEER_FAILURE), "a synchronous send on a cut link: " + e.getKey());
        }
    }

    /**
     * Scenario 30, idle: the link is cut with nothing in flight. UCX's keepalive tells at least one side within
     * {@value NetnsScenario#SILENT_WAIT_MILLIS} ms; a side it does not tell learns it from its first send. Then
     * each handler has run once with a peer failure, later operations are refused at once, and after
     * {@code ip link set lo up} the same workers connect anew and exchange data intact.
     */
    @Test
    void shouldReportAnIdleLinkCutOnceOnEachSideAndConnectAgainOnceRestored() throws Exception {
        requireNamespaces();
        Run r = run("cut-idle", Integer.toString(RETRIES2));
        assertTrue(r.number("connected", "bytesVerified") > 0);
        assertEquals("tcp", r.text("connected", "lanes"));
        Map<String, String> silent = r.fact("cut-idle-silent");
        boolean clientAlone = !silent.get("client").equals("none");
        boolean serverAlone = !silent.get("server").equals("none");
        assertTrue(clientAlone || serverAlone, "UCX's keepalive told neither side within "
                + NetnsScenario.SILENT_WAIT_MILLIS + " ms: " + silent);
        assertProvokedFailed(r);
        assertReportedOnceThenReconnected(r, "cut-idle");
        log("idle cut: client %s after %s ms%s, server %s after %s ms%s; later send %s; reconnect after restore "
                        + "%s ms, %s bytes verified; scenario took %d ms", r.text("cut-idle", "client"),
                r.text("cut-idle", "clientMs"), clientAlone ? "" : " (told by its own send)",
                r.text("cut-idle", "server"), r.text("cut-idle", "serverMs"),
                serverAlone ? "" : " (told by its own send)", r.text("later-op", "outcome"),
                r.text("reconnect", "ms"), r.text("reconnect", "bytesVerified"), r.millis);
    }

    /**
     * Scenario 30, data in flight: 256 eager 8 KiB and 8 rendezvous 4 MiB tag sends are started, the link is cut
     * as soon as the first message arrived, and a synchronous send, a rendezvous send and a flush are started on
     * the cut link. Within the bound every operation has completed: sends UCX had already finished locally OK,
     * everything that needs the server's answer with an error, never OK; nothing stays pending. The server's posted
     * receives belong to its worker: those that matched a message the cut interrupted fail, the unmatched ones stay
     * posted until canceled, and every one that completed OK holds the sender's bytes.
     */
    @Test
    void shouldCompleteEverySendInFlightWhenTheLinkIsCutAndConnectAgainOnceRestored() throws Exception {
        requireNamespaces();
        Run r = run("cut-inflight", Integer.toString(RETRIES2));
        long pendingAtCut = r.number("cut", "opsPending");
        assertTrue(pendingAtCut > 0, "sends were in flight at the cut");
        assertTrue(r.number("cut", "receivedAtCut") > 0, "the link carried data before the cut");
        assertEquals(0, r.number("ops", "pending"), "operations still pending " + BOUND + " ms after the cut");
        assertTrue(r.number("ops", "allDoneMs") <= BOUND);
        assertEquals(0, r.number("ops", "mustFailButOk"), "an operation that needs the server completed OK");
        Map<String, Integer> ops = outcomes(r.text("ops", "outcomes"));
        int failedInFlight = 0;
        for (Map.Entry<String, Integer> e : ops.entrySet()) {
            String kind = e.getKey().substring(0, e.getKey().indexOf(':'));
            String result = e.getKey().substring(kind.length() + 1);
            switch (kind) {
                case "eager" -> assertTrue(result.equals("OK") || result.startsWith(PEER_FAILURE), e.getKey());
                case "rndv" -> {
                    // a rendezvous send completes OK only if all its data went out before the cut
                    assertTrue(result.equals("OK") || result.startsWith(PEER_FAILURE), e.getKey());
                    failedInFlight += result.equals("OK") ? 0 : e.getValue();
                }
                case "late-sync", "late-rndv" -> assertTrue(result.startsWith(PEER_FAILURE), e.getKey());
                // UCX 1.13 ends a flush of the failed endpoint with UCS_ERR_TIMED_OUT; the library reports the
                // endpoint's failure instead, so that it does not read as the caller's own deadline
                case "late-flush" -> assertTrue(result.startsWith(PEER_FAILURE), e.getKey());
                default -> fail("unknown operation " + e.getKey());
            }
        }
        assertTrue(failedInFlight > 0, "no send in flight at the cut failed: " + ops);
        assertProvokedFailed(r);
        assertEquals(0, r.number("receives", "corrupt"), "a receive completed OK with bytes the sender did not send");
        Map<String, Integer> receives = outcomes(r.text("receives", "outcomes"));
        for (String result : receives.keySet()) {
            assertTrue(result.equals("OK") || result.startsWith(PEER_FAILURE)
                    || result.equals("UcxCanceledException/ERR_CANCELED"), "a server receive ended " + result);
        }
        assertEquals(r.number("receives", "stillPostedAfterFailure"),
                (long) receives.getOrDefault("UcxCanceledException/ERR_CANCELED", 0),
                "the receives still posted after the failure are those the cancel ended");
        assertReportedOnceThenReconnected(r, "cut-inflight");
        log("cut with %d sends in flight: client %s after %s ms, server %s after %s ms%s; every operation done "
                        + "%s ms after the cut: %s; server receives %s (%s bytes verified); scenario took %d ms",
                pendingAtCut, r.text("cut-inflight", "client"), r.text("cut-inflight", "clientMs"),
                r.text("cut-inflight", "server"), r.text("cut-inflight", "serverMs"),
                r.text("cut-inflight-silent", "server").equals("none") ? " (told by its own send)" : "",
                r.text("ops", "allDoneMs"), ops, receives, r.text("receives", "verifiedBytes"), r.millis);
    }

    /**
     * The reset half of scenario 34: with a synchronous and a rendezvous send waiting for a receive the server has
     * not posted, {@code ss -K} destroys every established TCP socket of the namespace. Both handlers run once with
     * a peer failure within a second, both sends fail, and a new connection works at once (the link is up).
     */
    @Test
    void shouldReportAResetConnectionOnBothSidesAndFailItsWaitingSends() throws Exception {
        requireNamespaces();
        Run r = run("reset", "-");
        assertTrue(r.number("reset-ops", "established") >= 2, "connections existed before the reset");
        assertTrue(r.number("reset-ops", "socketsKilled") >= 1, "ss -K destroyed sockets");
        assertEquals(2, r.number("reset-ops", "pendingBefore"), "both sends were waiting for the server");
        assertEquals(0, r.number("reset-ops", "pending"));
        for (Map.Entry<String, Integer> e : outcomes(r.text("reset-ops", "outcomes")).entrySet()) {
            assertTrue(e.getKey().contains(":" + PEER_FAILURE), "a send waiting on a reset connection: " + e.getKey());
        }
        assertTrue(r.number("reset", "clientMs") < 2_000 && r.number("reset", "serverMs") < 2_000,
                "a reset is reported at once, not after a timeout: " + r.fact("reset"));
        assertReportedOnceThenReconnected(r, "reset");
        log("ss -K on %s sockets: client %s after %s ms, server %s after %s ms; waiting sends %s; reconnect %s ms; "
                        + "scenario took %d ms", r.text("reset-ops", "established"), r.text("reset", "client"),
                r.text("reset", "clientMs"), r.text("reset", "server"), r.text("reset", "serverMs"),
                r.text("reset-ops", "outcomes"), r.text("reconnect", "ms"), r.millis);
    }

    /**
     * Scenario 31 with the tools this kernel has: 2% random loss on ingress and 5% of the packets delayed and
     * reordered through a slow lane, while {@value #MESSAGES} tag messages go each way (16 B to 1 MiB, some by
     * rendezvous). Every message arrives exactly once, with its length and CRC32C intact, no extra message is left,
     * no endpoint fails; the kernel's retransmission counter and the qdisc's drop counter prove the link was noisy.
     */
    @Test
    void shouldDeliverEveryMessageExactlyOnceAndIntactOverALossyReorderingLink() throws Exception {
        requireNamespaces();
        Run r = run("noisy", "-", Integer.toString(MESSAGES));
        Map<String, String> f = r.fact("noisy");
        assertEquals(2L * MESSAGES, r.number("noisy", "messages"), f.toString());
        assertEquals(0, r.number("noisy", "missing"), f.toString());
        assertEquals(0, r.number("noisy", "duplicates"), f.toString());
        assertEquals(0, r.number("noisy", "corrupt"), f.toString());
        assertEquals(0, r.number("noisy", "stray"), "a message beyond the count arrived: " + f);
        assertEquals(0, r.number("noisy", "clientReports") + r.number("noisy", "serverReports"),
                "an endpoint failed on a link that works");
        assertTrue(r.number("noisy", "ingressDrops") > 0, "the loss filter dropped nothing: " + f);
        assertTrue(r.number("noisy", "retransSegs") > 0, "TCP retransmitted nothing: the link was not noisy: " + f);
        log("noisy link (%s): %s messages, %s bytes verified in %s ms; %s segments retransmitted of %s, %s dropped "
                        + "on ingress, %s on egress; RTT p50/p99/max before %s us, noisy %s us; scenario took %d ms",
                r.fact("noise"), f.get("messages"), f.get("bytes"), f.get("ms"), f.get("retransSegs"),
                f.get("outSegs"), f.get("ingressDrops"), f.get("egressDrops"), f.get("rttBeforeUs"),
                f.get("rttNoisyUs"), r.millis);
    }
}
