package io.github.ucxffm;

import io.github.ucxffm.peer.Integrity;
import io.github.ucxffm.peer.IntegrityChannel;
import io.github.ucxffm.peer.IntegrityHub;
import io.github.ucxffm.peer.IntegrityPeer;
import io.github.ucxffm.peer.IntegrityReceiver;
import io.github.ucxffm.peer.IntegritySender;
import io.github.ucxffm.testsupport.ChildProcess;
import io.github.ucxffm.testsupport.UcxLogCapture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The soak (tag {@code soak}; not part of {@code mvn test}, run by {@code ./ucx-ffm test --soak}): for
 * {@code -Ducxffm.soak.seconds} (default 180) this JVM runs two {@link IntegrityHub}s, one worker for tcp peers (peer
 * error handling) and one for shared-memory peers (none: UCX 1.13 offers shared memory only without it), while up to
 * {@code -Ducxffm.soak.peers} (default 8) {@link IntegrityPeer} JVMs come and go, each with 3 endpoints that send to
 * the hub or receive from it every kind of operation (tag, synchronous tag, stream, active message, put + flush, get,
 * fetching atomic add), over tcp or over shared memory, chosen at random (seed {@code -Ducxffm.soak.seed}). A share
 * of the peers is SIGKILLed at a random moment; the others end cleanly; a new peer takes each free place until the
 * time is up. {@code -Ducxffm.soak.threadMode=MULTI} runs the hubs' workers in that mode.
 * <p>
 * <b>Which faults.</b> By default 70% of the tcp peers are killed, and no puts, gets or atomics cross a connection to
 * a peer that will be killed: UCX 1.13.1, built with assertions, aborts the surviving process in those cases (the
 * target of software RMA, {@code ucp_request.inl:346 Fatal: unexpected error}; the tcp put protocol,
 * {@code tcp_ep.c:939 Assertion 'ep->flags & UCT_TCP_EP_FLAG_PUT_TX_WAITING_ACK'}). {@code -Ducxffm.soak.allFaults=true}
 * kills 40% of all peers, shared-memory ones too, with every operation: that also meets
 * {@code ucp_worker.h:418 Assertion 'worker->flush_ops_count > 0'} in {@code ucp_worker_destroy} and
 * {@code cma_md.c:169} in {@code ucp_ep_req_purge}, both while UCX cleans up after a dead shared-memory peer. See
 * docs/RELIABILITY.md.
 * <p>
 * Every channel is audited as {@link DataIntegrityTest} does (everything acknowledged before a kill received intact
 * exactly once; for clean ends, everything). At the end, with every peer gone and the hubs' workers and the context
 * closed:
 * <ul>
 *   <li>the library's handle registry is back where it started ({@code UcxHandle.liveHandles()}), and no leak was
 *   reported ({@code UcxHandle.leaksReported()}) after a garbage collection;</li>
 *   <li>this process has as many open file descriptors ({@code /proc/self/fd}) as before, give or take
 *   {@value #FD_TOLERANCE};</li>
 *   <li>UCX logged nothing about unreleased resources ({@link #RESOURCE_WARNINGS}), in this process (a
 *   {@link UcxLogCapture} handler inside UCX's logger) nor in any peer's output (UCX prints there, and
 *   {@link ChildProcess} keeps the transcript); any other UCX warning or error must be one of the few
 *   {@link #EXPLAINED} ones, each for a stated reason. The one exception, counted rather than failed: when the
 *   shared-memory worker closes, UCX reports the requests still in flight to SIGKILLed shared-memory peers, which it
 *   can neither complete nor cancel without peer error handling;</li>
 *   <li>the tcp worker has nothing in flight when it closes.</li>
 * </ul>
 * The figures (scenarios, faults, operations, bytes, leaks) are printed and written to
 * {@code target/soak/soak-summary.txt}.
 */
@Tag("soak")
class SoakTest {

    private static final long SECONDS = Long.getLong("ucxffm.soak.seconds", 180);
    private static final int PEERS = Integer.getInteger("ucxffm.soak.peers", 8);
    private static final long SEED = Long.getLong("ucxffm.soak.seed", 20261130L);
    /**
     * Whether to inject the faults UCX 1.13.1 does not survive ({@code -Ducxffm.soak.allFaults=true}): SIGKILLs of
     * shared-memory peers, and RMA on tcp connections to peers that will be killed. See the class description.
     */
    private static final boolean ALL_FAULTS = Boolean.getBoolean("ucxffm.soak.allFaults");
    /** The hubs' workers' thread mode ({@code -Ducxffm.soak.threadMode=MULTI}); the peers' are SINGLE. */
    private static final UcsThreadMode MODE = UcsThreadMode.valueOf(System.getProperty("ucxffm.soak.threadMode",
            "SINGLE"));
    private static final int ENDPOINTS = 3;
    private static final int FD_TOLERANCE = 4;
    private static final String RNDV_THRESH = "16384";

    /** UCX messages that mean something was not released. */
    static final List<String> RESOURCE_WARNINGS = List.of("not returned to mpool", "unprocessed connection request",
            "will not be handled since no error callback", "has already been closed", "was not matched",
            "was not released", "leak");

    /**
     * UCX warnings and errors that the faults make expected, with the reason; anything else fails the soak.
     * <ul>
     *   <li>{@code error during flush} ({@code rma/flush.c}): an endpoint without peer error handling (shared memory)
     *   whose peer is gone, or already disconnected when it closes, fails its close's flush with
     *   {@code Endpoint timeout}; UCX logs it because no error handler can take it in that mode.</li>
     *   <li>{@code failed to prepare AM data} ({@code tcp/tcp_ep.c}): a send to a tcp peer that was just killed, whose
     *   connection UCX finds closed while it packs the message; the send fails (the endpoint's error handler runs)
     *   and UCX also logs it.</li>
     * </ul>
     */
    static final List<String> EXPLAINED = List.of("error during flush", "failed to prepare AM data");

    private static void log(String format, Object... args) {
        System.out.printf("[SoakTest] " + format + "%n", args);
    }

    private static UcpContext context() {
        return UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.STREAM, UcpContext.Feature.AM,
                UcpContext.Feature.RMA, UcpContext.Feature.AMO64).config("RNDV_THRESH", RNDV_THRESH).build();
    }

    /** Leaves out puts, gets and atomics. */
    private static Integrity.Config noRma(Integrity.Config c) {
        c.kinds = List.of(Integrity.Kind.TAG, Integrity.Kind.TAG_SYNC, Integrity.Kind.STREAM, Integrity.Kind.AM);
        c.gets = false;
        c.atomics = false;
        return c;
    }

    private static Integrity.Config config() {
        Integrity.Config c = new Integrity.Config();
        c.window = 16;
        c.maxUnacked = 128;
        c.tagReceives = 16;
        c.slots = 8;
        c.runMillis = TimeUnit.HOURS.toMillis(1); // the hub's senders run until the soak stops them
        return c;
    }

    static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    /** What the soak counted. */
    private static final class Figures {
        int started;
        int graceful;
        int killed;
        int tcp;
        int shm;
        int channelsAudited;
        long hubOps;
        long peerOps;
        long hubBytes;
        long peerBytes;
        long acknowledgedAudited;
        long recoveredPuts;
        long tornSlots;
        long unresolvedAtEnd;
        /** Channels of clean peers whose connection failed during the closing exchange, after all was acknowledged. */
        int resetWhileEnding;
        int swept;
        long lateFlushLost;
        long syncCutOff;
        final Map<Integrity.Kind, Long> verified = new EnumMap<>(Integrity.Kind.class);
        final Map<String, Long> ops = new TreeMap<>();
        final Map<String, Integer> ucxHere = new TreeMap<>();
        final Map<String, Integer> ucxPeers = new TreeMap<>();

        void add(Integrity.Counts c) {
            hubOps += c.totalOps();
            hubBytes += c.bytesVerified;
            c.verified.forEach((k, v) -> verified.merge(k, v, Long::sum));
            c.ops.forEach((k, v) -> ops.merge(k, v, Long::sum));
        }
    }

    private enum Phase { RUNNING, KILLED, EXITED }

    /** One peer JVM's life. */
    private final class Run {
        final int number;
        final int base;
        final long clientId;
        final String tls;
        final String dirs;
        final long lifeMillis;
        final boolean fatal;
        final long startedAt = System.nanoTime();
        final long killAt;
        final Path regions;
        final ChildProcess process;
        Phase phase = Phase.RUNNING;
        long phaseSince;
        /** What each hub sender of this peer had seen acknowledged just before the kill, by channel. */
        final Map<Integer, IntegritySender.Acked> atKill = new TreeMap<>();

        Run(int number, Random rnd, Path dir) throws IOException {
            this.number = number;
            this.base = 1000 + number * 8;
            this.tls = rnd.nextBoolean() ? "tcp" : "default";
            this.clientId = ((long) base << 1) | (tls.equals("tcp") ? 1 : 0);
            StringBuilder d = new StringBuilder();
            for (int i = 0; i < ENDPOINTS; i++) {
                d.append(rnd.nextBoolean() ? 'S' : 'R');
            }
            this.dirs = d.toString();
            this.lifeMillis = 4000 + rnd.nextInt(14_000);
            int chance = rnd.nextInt(10);
            this.fatal = ALL_FAULTS ? chance < 4 : tls.equals("tcp") && chance < 7;
            this.killAt = startedAt + TimeUnit.MILLISECONDS.toNanos(2500 + rnd.nextLong(lifeMillis));
            this.regions = Files.createDirectories(dir.resolve("peer-" + number));
            Integrity.Config c = config();
            c.runMillis = lifeMillis;
            if (fatal && tls.equals("tcp")) {
                // UCX 1.13.1 aborts the target of software RMA (puts, gets, atomics over tcp) when a request of a
                // peer that just died arrives after its endpoint failed (ucp_request.inl:346 "Fatal: unexpected
                // error"): a peer that will be killed over tcp does no RMA into this process
                noRma(c);
            }
            List<String> args = new ArrayList<>(List.of(tls, Integer.toString(hub().port()),
                    Integer.toString(base), dirs, regions.toString()));
            args.addAll(c.toArgs());
            Map<String, String> env = new java.util.HashMap<>(Map.of("UCX_RNDV_THRESH", RNDV_THRESH,
                    // a crashed peer's report goes next to its regions, where the soak looks for it
                    "JAVA_TOOL_OPTIONS", "-XX:ErrorFile=" + regions + "/hs_err_%p.log -XX:ErrorLogTimeout=5 "
                            + "-XX:-CreateCoredumpOnCrash"));
            if (tls.equals("tcp")) {
                env.put("UCX_TLS", "tcp");
            }
            if (fatal) {
                fatalClients.add(clientId);
            }
            this.process = ChildProcess.java(IntegrityPeer.class).name("soak client " + clientId).env(env).args(args)
                    .echo(false).start();
            all.add(process);
        }

        /** The hub this peer connects to: one worker for tcp peers, one for shared-memory peers. */
        IntegrityHub hub() {
            return tls.equals("tcp") ? tcpHub : shmHub;
        }

        List<IntegrityHub.Connection> connections() {
            return hub().of(clientId);
        }

        /** Kills the peer, after noting what the hub's senders had seen acknowledged. */
        void kill() {
            for (IntegrityHub.Connection c : connections()) {
                if (c.sender() != null) {
                    atKill.put(c.channel(), c.sender().acknowledged());
                }
            }
            process.kill();
        }

        @Override
        public String toString() {
            return "peer #" + number + " (" + tls + ", " + dirs + ", " + lifeMillis + " ms" + (fatal ? ", killed" : "")
                    + ", pid " + process.pid() + ")";
        }
    }

    private IntegrityHub tcpHub;
    private IntegrityHub shmHub;
    /** Client ids of the peers that will be killed. */
    private final java.util.Set<Long> fatalClients = new java.util.HashSet<>();
    private final List<ChildProcess> all = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private final Figures f = new Figures();

    /**
     * Runs the soak and checks the end state; see the class description.
     *
     * @throws Exception on a setup failure
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.HOURS)
    void shouldRunPeersThroughKillsAndRestartsWithoutCorruptionOrLeaks() throws Exception {
        Path dir = Files.createTempDirectory("ucxffm-soak");
        try (UcpContext c = context(); UcpWorker w = c.newWorker()) {
            w.progress(); // UCX's process-wide state (async thread, its fds) exists before the baseline
        }
        System.gc();
        long fdsBefore = openFds();
        int liveBefore = UcxHandle.liveHandles();
        int leaksBefore = UcxHandle.leaksReported();
        long began = System.nanoTime();
        int inFlightTcp;
        int inFlightShm;
        int deferred;
        List<UcxLogCapture.Entry> run;
        List<UcxLogCapture.Entry> tcpClose;
        List<UcxLogCapture.Entry> shmClose;
        List<UcxLogCapture.Entry> contextClose;
        UcxVersion.runtime(); // UCX loaded through the bindings before the capture binds its logger
        UcxLogCapture ucx = UcxLogCapture.start();
        try (ucx) {
            UcpContext context = context();
            try {
                // one worker per error-handling mode, so that what UCX says when each is destroyed can be told apart
                UcpWorker tcpWorker = context.newWorker(MODE);
                UcpWorker shmWorker = context.newWorker(MODE);
                tcpHub = new IntegrityHub(tcpWorker, config());
                shmHub = new IntegrityHub(shmWorker, config());
                if (!ALL_FAULTS) {
                    // tcp's own put protocol asserts (tcp_ep.c:939 "ep->flags & UCT_TCP_EP_FLAG_PUT_TX_WAITING_ACK")
                    // when a put's peer is killed under it: the hub does no RMA to a peer that will be killed
                    tcpHub.senderConfig(id -> fatalClients.contains(id) ? noRma(config()) : config());
                }
                try {
                    soak(dir);
                } finally {
                    for (ChildProcess p : all) {
                        p.close();
                    }
                    tcpHub.close();
                    shmHub.close();
                    f.swept = tcpHub.swept + shmHub.swept;
                }
                inFlightTcp = tcpWorker.inFlightCount();
                inFlightShm = shmWorker.inFlightCount();
                deferred = tcpHub.deferredCount() + shmHub.deferredCount();
                // the figures so far, in case closing the workers takes the process down (see docs/RELIABILITY.md)
                writeSummary("(written before the workers closed; the end-state checks follow)\n" + summary(
                        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - began), fdsBefore, -1, 0, 0, 0, 0,
                        inFlightTcp, inFlightShm, 0, deferred));
                int mark = ucx.entries().size();
                run = ucx.entries().subList(0, mark);
                tcpWorker.close();
                tcpClose = ucx.entries().subList(mark, mark = ucx.entries().size());
                shmWorker.close();
                shmClose = ucx.entries().subList(mark, mark = ucx.entries().size());
                context.close();
                contextClose = ucx.entries().subList(mark, ucx.entries().size());
            } finally {
                context.close(); // idempotent: after a failure above, closes what is left
                if (tcpHub != null) {
                    tcpHub.freeDeferred();
                }
                if (shmHub != null) {
                    shmHub.freeDeferred();
                }
            }
        } finally {
            for (ChildProcess p : all) {
                p.close();
            }
            deleteTree(dir);
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - began);
        // the end state
        int leaks = 0;
        for (int i = 0; i < 20 && leaks == 0; i++) {
            System.gc();
            Thread.sleep(50);
            leaks = UcxHandle.leaksReported() - leaksBefore;
        }
        int live = UcxHandle.liveHandles() - liveBefore;
        long fdsAfter = openFds();
        for (int i = 0; i < 50 && fdsAfter - fdsBefore > FD_TOLERANCE; i++) {
            Thread.sleep(100); // a peer's output pipe closes when its reader reaches the end
            fdsAfter = openFds();
        }
        int resourceHere = 0;
        resourceHere += judge("during the run", run, false);
        resourceHere += judge("when the tcp worker closed", tcpClose, false);
        int shmLeaked = judge("when the shared-memory worker closed", shmClose, inFlightShm > 0);
        resourceHere += judge("when the context closed", contextClose, false);
        if (inFlightTcp != 0) {
            problems.add(inFlightTcp + " operations still in flight on the tcp worker at its close");
        }
        int resourcePeers = f.ucxPeers.entrySet().stream().filter(e -> RESOURCE_WARNINGS.stream()
                .anyMatch(e.getKey()::contains)).mapToInt(Map.Entry::getValue).sum();
        if (live != 0) {
            problems.add(live + " handles still registered as live");
        }
        if (leaks != 0) {
            problems.add(leaks + " leaks reported");
        }
        if (fdsAfter - fdsBefore > FD_TOLERANCE) {
            problems.add("open file descriptors grew from " + fdsBefore + " to " + fdsAfter);
        }
        String summary = summary(seconds, fdsBefore, fdsAfter, live, leaks, resourceHere, resourcePeers, inFlightTcp,
                inFlightShm, shmLeaked, deferred);
        log("%s", summary);
        writeSummary(summary);
        assertEquals(List.of(), problems, "soak problems");
        assertTrue(f.killed > 0 && f.graceful > 0, "both fates happened: " + f.killed + " killed, " + f.graceful
                + " clean");
    }

    /**
     * Records UCX's messages of one phase and counts the resource warnings among them. Outside the closing of the
     * shared-memory worker every resource warning is a problem; there, "not returned to mpool ucp_requests" is what
     * UCX says about the requests still in flight to SIGKILLed shared-memory peers, which UCX 1.13 can neither
     * complete nor cancel (no peer error handling on those endpoints), so it is counted, not failed, when such
     * requests were left ({@code requestsLeft}).
     */
    private int judge(String phase, List<UcxLogCapture.Entry> entries, boolean requestsLeft) {
        int resource = 0;
        for (UcxLogCapture.Entry e : entries) {
            String s = e.file() + ":" + e.line() + " " + e.text().replaceAll("0x[0-9a-f]+", "0x?")
                    .replaceAll("\\{[^}]*\\}", "{..}");
            f.ucxHere.merge(phase + ": " + s, 1, Integer::sum);
            if (RESOURCE_WARNINGS.stream().anyMatch(s::contains)) {
                resource++;
                if (!(requestsLeft && s.contains("was not returned to mpool ucp_requests"))) {
                    problems.add("UCX " + phase + ": " + s);
                }
            } else if (EXPLAINED.stream().noneMatch(s::contains)) {
                problems.add("unexplained UCX message " + phase + ": " + s);
            }
        }
        return resource;
    }

    private void soak(Path dir) throws Exception {
        Random rnd = new Random(SEED);
        long endOfStarts = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
        long hardDeadline = endOfStarts + TimeUnit.SECONDS.toNanos(180);
        Run[] slots = new Run[PEERS];
        long nextStart = System.nanoTime();
        while (true) {
            boolean work = tcpHub.step() | shmHub.step();
            long now = System.nanoTime();
            boolean any = false;
            for (int i = 0; i < slots.length; i++) {
                Run r = slots[i];
                if (r == null) {
                    if (now - endOfStarts < 0 && now - nextStart >= 0) {
                        slots[i] = new Run(f.started++, rnd, dir);
                        nextStart = now + 300_000_000L; // staggered: JVM starts are heavy on a small machine
                        any = true;
                    }
                    continue;
                }
                any = true;
                if (advance(r, now)) {
                    slots[i] = null;
                    work = true;
                }
            }
            if (!any && now - endOfStarts >= 0) {
                return;
            }
            if (now - hardDeadline > 0) {
                for (Run r : slots) {
                    if (r != null) {
                        problems.add(r + " still running 180 s after the soak time; phase " + r.phase + "; output:\n"
                                + tail(r.process.output()));
                        r.process.kill();
                    }
                }
                return;
            }
            if (!work) {
                Thread.yield();
            }
        }
    }

    /** Moves a peer's life on; {@code true} when it is over and audited. */
    private boolean advance(Run r, long now) throws Exception {
        long age = now - r.startedAt;
        for (IntegrityHub.Connection c : r.connections()) {
            // the hub's senders run as long as the peer's: from when their channel was set up
            IntegritySender s = c.sender();
            if (s != null && now - s.createdNanos() > TimeUnit.MILLISECONDS.toNanos(r.lifeMillis)) {
                s.stop();
            }
        }
        switch (r.phase) {
            case RUNNING -> {
                if (r.fatal && now - r.killAt >= 0 && r.process.isAlive()) {
                    r.kill();
                    r.phase = Phase.KILLED;
                    r.phaseSince = now;
                } else if (!r.process.isAlive()) {
                    r.phase = Phase.EXITED;
                    r.phaseSince = now;
                } else if (age > TimeUnit.MILLISECONDS.toNanos(r.lifeMillis + 90_000)) {
                    problems.add(r + " did not end 90 s after its time; output:\n" + tail(r.process.output()));
                    r.kill();
                    r.phase = Phase.KILLED;
                    r.phaseSince = now;
                }
                return false;
            }
            case KILLED -> {
                // drain: what was in flight from or to it arrives or fails; over shared memory nothing is reported
                boolean failed = r.connections().stream().allMatch(c -> c.engine() == null
                        || c.engine().isFinished());
                if (now - r.phaseSince > 3_000_000_000L || (failed && now - r.phaseSince > 1_000_000_000L)) {
                    int exit = r.process.waitFor(10);
                    if (exit == 0) {
                        return endCleanly(r); // it had ended by itself before the kill came
                    }
                    if (exit != 128 + ChildProcess.SIGKILL) {
                        problems.add(r + " died of something else than the kill, exit " + exit + crashReport(r));
                    }
                    return endKilled(r);
                }
                return false;
            }
            case EXITED -> {
                boolean done = r.connections().stream().allMatch(c -> c.engine() != null
                        && c.engine().isFinished());
                if (done || now - r.phaseSince > 15_000_000_000L) {
                    return endCleanly(r);
                }
                return false;
            }
            default -> throw new IllegalStateException();
        }
    }

    /** The first lines of a crashed peer's hs_err file, if it wrote one. */
    private static String crashReport(Run r) {
        try (Stream<Path> s = Files.list(r.regions)) {
            for (Path p : s.filter(x -> x.getFileName().toString().startsWith("hs_err")).toList()) {
                List<String> lines = Files.readAllLines(p);
                Path keep = Path.of("target", "soak", p.getFileName().toString());
                Files.createDirectories(keep.getParent());
                Files.copy(p, keep, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                return "; crash report " + keep + ":\n" + String.join("\n", lines.subList(0, Math.min(12,
                        lines.size())));
            }
        } catch (IOException e) {
            return "; (no crash report: " + e + ")";
        }
        return "";
    }

    private static String tail(String s) {
        return s.length() < 3000 ? s : "..." + s.substring(s.length() - 3000);
    }

    /** The peer's report lines, its output read to the end (the peer has exited or been killed). */
    private static Integrity.Lines settled(ChildProcess p) throws InterruptedException {
        return Integrity.Lines.parse(p.outputToEnd(10));
    }

    private void peerLog(Run r, Integrity.Lines lines, boolean cleanEnd) {
        for (String w : lines.ucxWarnings) {
            note(r, w, true);
        }
        for (String w : lines.ucxWarningsAtClose) {
            note(r, w, cleanEnd);
        }
    }

    private void note(Run r, String line, boolean strict) {
        String key = line.replaceAll("^\\[[^]]*\\] \\[[^]]*\\]\\s*", "").replaceAll("0x[0-9a-f]+", "0x?");
        f.ucxPeers.merge(key, 1, Integer::sum);
        if (RESOURCE_WARNINGS.stream().anyMatch(line::contains)) {
            problems.add(r + ": UCX " + key);
        } else if (strict && EXPLAINED.stream().noneMatch(line::contains)) {
            problems.add(r + ": unexplained UCX message " + key);
        }
    }

    private boolean endCleanly(Run r) throws Exception {
        int exit = r.process.waitFor(20);
        Integrity.Lines lines = settled(r.process);
        f.graceful++;
        count(r);
        if (exit != 0) {
            problems.add(r + " exited with " + exit + crashReport(r) + "\n" + tail(r.process.output()));
        }
        List<IntegrityHub.Connection> conns = r.connections();
        if (conns.size() != ENDPOINTS) {
            problems.add(r + ": " + conns.size() + " endpoints reached the hub");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (IntegrityHub.Connection c : conns) {
            IntegrityChannel e = c.engine();
            int left = c.end(deadline);
            f.unresolvedAtEnd += left;
            if (e == null) {
                problems.add(r + ": a connection never said hello");
                c.free();
                continue;
            }
            if (e.state() != IntegrityChannel.State.DONE) {
                if (e.failedWhileEnding()) {
                    f.resetWhileEnding++; // everything acknowledged: the audit below checks the data all the same
                } else {
                    problems.add(r + ": hub side of channel " + c.channel() + " ended " + e);
                }
            }
            Integrity.Lines.Channel peer = lines.channel(c.channel());
            List<String> found = c.receiver() != null ? IntegrityAudit.cleanPeerSender(c.receiver(), peer)
                    : IntegrityAudit.cleanPeerReceiver(c.sender(), peer);
            found.forEach(p -> problems.add(r + " channel " + c.channel() + ": " + p));
            f.channelsAudited++;
            f.acknowledgedAudited += c.receiver() != null ? peer.acked().size() : c.sender().appAcked.size();
            f.add(e.counts);
            c.free();
        }
        retire(r, lines, true);
        return true;
    }

    /** A peer's run is over and audited: logs and counts what it printed, then frees its process and files. */
    private void retire(Run r, Integrity.Lines lines, boolean cleanEnd) throws Exception {
        peerLog(r, lines, cleanEnd);
        peerCounts(lines);
        r.process.close();
        deleteTree(r.regions);
    }

    private boolean endKilled(Run r) throws Exception {
        f.killed++;
        count(r);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<IntegrityHub.Connection> conns = r.connections();
        List<Integrity.SlotScan> receiverScans = new ArrayList<>();
        for (IntegrityHub.Connection c : conns) {
            f.unresolvedAtEnd += c.end(deadline);
            if (c.receiver() != null) {
                receiverScans.add(c.receiver().recoverPuts());
            }
        }
        Integrity.Lines lines = settled(r.process);
        for (IntegrityHub.Connection c : conns) {
            IntegrityChannel e = c.engine();
            if (e == null) {
                c.free();
                continue; // killed before its hello: nothing was sent on it
            }
            Integrity.Lines.Channel peer = lines.channel(c.channel());
            List<String> found;
            if (c.receiver() != null) {
                IntegrityReceiver hr = c.receiver();
                found = IntegrityAudit.killedPeerSender(hr, peer);
                f.acknowledgedAudited += peer.acked().size();
                f.recoveredPuts += hr.recovered.size();
                f.tornSlots += hr.torn;
                f.syncCutOff += hr.failedAfterMatch.minus(hr.received).size();
            } else {
                IntegritySender hs = c.sender();
                Integrity.SlotScan scan = scan(r.regions.resolve("region-" + c.channel()), c.channel());
                // a channel whose hello came after the kill saw nothing acknowledged by a live peer
                IntegritySender.Acked atKill = r.atKill.getOrDefault(c.channel(), new IntegritySender.Acked(
                        new Integrity.SeqSet(), new Integrity.SeqSet(), new Integrity.SeqSet()));
                found = IntegrityAudit.killedPeerReceiver(hs, atKill, peer, scan, config().tagReceives);
                f.acknowledgedAudited += atKill.all().size();
                f.lateFlushLost += IntegrityAudit.flushedAfterKillButLost(hs, atKill, peer, scan).size();
                f.tornSlots += scan.torn();
            }
            found.forEach(p -> problems.add(r + " channel " + c.channel() + ": " + p));
            f.channelsAudited++;
            f.add(e.counts);
            c.free();
        }
        retire(r, lines, false);
        return true;
    }

    private void count(Run r) {
        if (r.tls.equals("tcp")) {
            f.tcp++;
        } else {
            f.shm++;
        }
    }

    private void peerCounts(Integrity.Lines lines) {
        for (Integrity.Lines.Channel c : lines.channels.values()) {
            Map<String, String> m = !c.report.isEmpty() ? c.report : c.stats;
            f.peerOps += Long.parseLong(m.getOrDefault("ops", "0"));
            f.peerBytes += Long.parseLong(m.getOrDefault("bytes", "0"));
        }
    }

    private static Integrity.SlotScan scan(Path file, int channel) throws IOException {
        Integrity.Config cfg = config();
        if (!Files.exists(file) || Files.size(file) < Integrity.regionBytes(cfg)) {
            return new Integrity.SlotScan(new Integrity.SeqSet(), 0, List.of()); // died before it mapped its region
        }
        try (Arena arena = Arena.ofConfined();
             FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment region = ch.map(FileChannel.MapMode.READ_ONLY, 0, Integrity.regionBytes(cfg), arena);
            return Integrity.scanSlots(region, cfg, channel);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static void writeSummary(String text) throws IOException {
        Path out = Path.of("target", "soak");
        Files.createDirectories(out);
        Files.writeString(out.resolve("soak-summary.txt"), text);
    }

    private String summary(long seconds, long fdsBefore, long fdsAfter, int live, int leaks, int resourceHere,
                           int resourcePeers, int inFlightTcp, int inFlightShm, int shmLeaked, int deferred) {
        StringBuilder b = new StringBuilder();
        b.append("ucx-ffm soak, ").append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME))
                .append(", UCX ").append(UcxVersion.runtime()).append(", JDK ").append(Runtime.version())
                .append('\n');
        b.append(String.format("duration: %d s (peers started for %d s), up to %d peer JVMs at once, %d endpoints "
                + "each, seed %d, hub workers %s, %s%n", seconds, SECONDS, PEERS, ENDPOINTS, SEED, MODE,
                ALL_FAULTS ? "all faults" : "faults UCX 1.13.1 survives (tcp peers killed, without RMA)"));
        b.append(String.format("scenarios run: %d peer lifetimes (%d over tcp, %d over shared memory), %d channels "
                + "audited%n", f.started, f.tcp, f.shm, f.channelsAudited));
        b.append(String.format("faults injected: %d SIGKILLs of peers mid-stream (%d peers ended cleanly; channels "
                + "of those whose connection failed in the closing exchange, after everything was acknowledged: %d)%n",
                f.killed, f.graceful, f.resetWhileEnding));
        b.append(String.format("endpoints accepted by the hub: %d (tcp worker %d, shared-memory worker %d)%n",
                tcpHub.accepted + shmHub.accepted, tcpHub.accepted, shmHub.accepted));
        b.append(String.format("operations completed: %d (hub %d, peers %d); hub ops %s%n", f.hubOps + f.peerOps,
                f.hubOps, f.peerOps, f.ops));
        b.append(String.format("messages verified at the hub: %s%n", f.verified));
        b.append(String.format("bytes verified: %d (hub %d, peers %d)%n", f.hubBytes + f.peerBytes, f.hubBytes,
                f.peerBytes));
        b.append(String.format("acknowledgements audited: %d; puts recovered from slots after kills: %d; torn slots: "
                + "%d; messages swept from the unexpected queue: %d; operations still in flight when their "
                + "connection ended: %d%n", f.acknowledgedAudited, f.recoveredPuts, f.tornSlots, f.swept,
                f.unresolvedAtEnd));
        b.append(String.format("leaks found: live handles %+d, leak reports %+d, open fds %d -> %d, UCX resource "
                + "warnings %d here and %d in peers; operations in flight at worker close: tcp %d, shared memory %d "
                + "(to SIGKILLed peers, which UCX 1.13 cannot end without peer error handling: %d unreturned UCX "
                + "requests reported at that worker's close; connections freed after it: %d)%n", live, leaks,
                fdsBefore, fdsAfter, resourceHere, resourcePeers, inFlightTcp, inFlightShm, shmLeaked, deferred));
        b.append(String.format("flush acknowledgements seen only after a kill, for puts that never arrived: %d; "
                + "messages matched (a sync send may complete) whose data a killed sender never delivered, the "
                + "receive failing: %d%n", f.lateFlushLost, f.syncCutOff));
        b.append("UCX messages in this process: ").append(f.ucxHere.isEmpty() ? "none" : f.ucxHere).append('\n');
        b.append("UCX messages in peers: ").append(f.ucxPeers.isEmpty() ? "none" : f.ucxPeers).append('\n');
        b.append("problems: ").append(problems.size()).append('\n');
        for (String p : problems.subList(0, Math.min(20, problems.size()))) {
            b.append("  ").append(p.replace("\n", "\n    ")).append('\n');
        }
        return b.toString();
    }
}
