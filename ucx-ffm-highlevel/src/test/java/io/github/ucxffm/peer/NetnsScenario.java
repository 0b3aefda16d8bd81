package io.github.ucxffm.peer;

import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpListener;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxCanceledException;
import io.github.ucxffm.UcxException;

import io.github.ucxffm.testsupport.Await;
import io.github.ucxffm.testsupport.BytePattern;
import io.github.ucxffm.testsupport.ChildProcess;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A link-fault scenario run inside a private network namespace ({@code unshare -rn}), started by
 * {@code LinkFaultTest}. The namespace holds nothing but its own {@code lo}, so the faults this process injects with
 * {@code ip}, {@code tc} and {@code ss} touch no other process and vanish with it. One JVM runs both sides: a server
 * worker with a {@link UcpListener} on 127.0.0.1 and a client worker, each of its own context, over UCX's {@code tcp}
 * transport (the test sets {@code UCX_TLS=tcp} and the keepalive options in the environment), progressed in turn by
 * the main thread.
 * <p>
 * Arguments: the role; for every role but {@code probe}, the namespace's {@code net.ipv4.tcp_retries2} or
 * {@code -} to leave it; for {@code noisy}, the number of messages each way. Roles:
 * <ul>
 *   <li>{@code probe}: reports which fault tools work here, as {@code FACT probe key=yes|no ...}.</li>
 *   <li>{@code cut-idle}: connects, exchanges, then {@code ip link set lo down} with nothing in flight.</li>
 *   <li>{@code cut-inflight}: the same, cut while tag sends (eager and rendezvous) are in flight, and more started
 *   after the cut.</li>
 *   <li>{@code reset}: connects, leaves a synchronous and a rendezvous send waiting for an unposted receive, then
 *   destroys every established TCP socket of the namespace with {@code ss -K} (the kernel sends RSTs).</li>
 *   <li>{@code noisy}: random loss on ingress, a slow lane that delays and reorders a share of the packets on egress,
 *   then that many tag messages each way, each carrying its sequence number, length and CRC32C.</li>
 * </ul>
 * The fault roles end by restoring the link and connecting anew from the same workers to the same listener. Every
 * observation is printed as a line {@code FACT name key=value ...} for the test to assert on; the last line is
 * {@code DONE}, or {@code SKIP reason} when a tool is missing, or {@code ERROR ...} with a stack trace. Every wait is
 * bounded, and the process exits by itself after {@value #LIFETIME_SECONDS} s.
 */
public final class NetnsScenario {

    /** How long the process may live. */
    public static final int LIFETIME_SECONDS = 50;
    /** How long an idle cut is left to UCX's keepalive before each silent side is made to send. */
    public static final long SILENT_WAIT_MILLIS = 3_000;
    /** Bound on each wait for a fault to be reported or for operations to complete. */
    public static final long BOUND_MILLIS = 15_000;

    private static final long TAG_C2S = 0x10_0000L;
    private static final long TAG_S2C = 0x20_0000L;
    private static final long TAG_MASK = 0xFFFF_FFFF_FFF0_0000L;

    private NetnsScenario() {
    }

    /**
     * Runs one role.
     *
     * @param args the role, then its arguments
     */
    public static void main(String[] args) {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(LIFETIME_SECONDS));
                System.out.println("ERROR lifetime of " + LIFETIME_SECONDS + " s exceeded");
                System.out.flush();
                Runtime.getRuntime().halt(3);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "netns-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            int code = run(args);
            System.out.flush();
            System.exit(code);
        } catch (Throwable t) {
            System.out.println("ERROR " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    private static int run(String[] args) throws Exception {
        String role = args[0];
        Sh.require(Sh.run("ip", "link", "set", "lo", "up"), "ip link set lo up");
        if (role.equals("probe")) {
            probe();
            System.out.println("DONE");
            return 0;
        }
        if (args.length > 1 && !args[1].equals("-")) {
            // Per-namespace sysctl: how many retransmissions of unacknowledged data before the kernel gives up on
            // a connection (default 15, about 15 minutes). TCP keepalive does not run while data is unacknowledged,
            // and UCX 1.13 has no UCX_TCP_USER_TIMEOUT, so this is what bounds a cut with data in flight.
            Path retries2 = Path.of("/proc/sys/net/ipv4/tcp_retries2");
            Files.writeString(retries2, args[1]);
            fact("sysctl", "tcp_retries2", Sh.require(Sh.run("cat", retries2.toString()), "cat " + retries2));
        }
        try (Arena arena = Arena.ofConfined();
             UcpContext serverContext = context();
             UcpContext clientContext = context();
             UcpWorker server = serverContext.newWorker();
             UcpWorker client = clientContext.newWorker()) {
            Pair pair = new Pair(server, client, arena);
            switch (role) {
                case "cut-idle" -> cutIdle(pair);
                case "cut-inflight" -> cutInFlight(pair);
                case "reset" -> {
                    if (!reset(pair)) {
                        return 0;
                    }
                }
                case "noisy" -> {
                    if (!noisy(pair, Integer.parseInt(args[2]))) {
                        return 0;
                    }
                }
                default -> throw new IllegalArgumentException("unknown role " + role);
            }
            pair.close();
        }
        System.out.println("DONE");
        return 0;
    }

    private static UcpContext context() {
        // UCX_TLS and the keepalive options come from the environment the test set
        return UcpContext.builder().features(UcpContext.Feature.TAG).build();
    }

    private static void fact(String name, Object... keyValues) {
        StringBuilder sb = new StringBuilder("FACT ").append(name);
        for (int i = 0; i < keyValues.length; i += 2) {
            sb.append(' ').append(keyValues[i]).append('=').append(String.valueOf(keyValues[i + 1]).replace(' ', '_'));
        }
        System.out.println(sb);
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    // ---- shell ----------------------------------------------------------------------------------------------------

    /** The result of a command. */
    private record Result(int code, String output) {
    }

    /** Runs the namespace's tools ({@code ip}, {@code tc}, {@code ss}) with a bound. */
    private static final class Sh {
        private static final List<String> DIRS = List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin");

        static String which(String tool) {
            for (String d : DIRS) {
                Path p = Path.of(d, tool);
                if (Files.isExecutable(p)) {
                    return p.toString();
                }
            }
            return null;
        }

        static Result run(String... command) throws IOException, InterruptedException {
            String tool = which(command[0]);
            if (tool == null) {
                return new Result(127, command[0] + ": not found");
            }
            List<String> cmd = new ArrayList<>(List.of(command));
            cmd.set(0, tool);
            // not echoed: this program's own output is the FACT lines the test reads
            try (ChildProcess p = ChildProcess.command(cmd).echo(false).start()) {
                if (!p.awaitExit(10)) {
                    return new Result(124, String.join(" ", command) + ": timed out");
                }
                return new Result(p.exitCode(), p.output().trim());
            }
        }

        static String require(Result r, String what) {
            if (r.code != 0) {
                throw new IllegalStateException(what + " failed (" + r.code + "): " + r.output);
            }
            return r.output;
        }
    }

    private static void linkDown() throws Exception {
        Sh.require(Sh.run("ip", "link", "set", "lo", "down"), "ip link set lo down");
    }

    private static void linkUp() throws Exception {
        Sh.require(Sh.run("ip", "link", "set", "lo", "up"), "ip link set lo up");
    }

    // ---- probe ----------------------------------------------------------------------------------------------------

    private static String yes(Result r) {
        return r.code == 0 ? "yes" : "no";
    }

    private static void probe() throws Exception {
        Result netem = Sh.run("tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms");
        Sh.run("tc", "qdisc", "del", "dev", "lo", "root");
        Result htb = Sh.run("tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "1");
        Sh.run("tc", "qdisc", "del", "dev", "lo", "root");
        Result clsact = Sh.run("tc", "qdisc", "add", "dev", "lo", "clsact");
        Result bpf = Sh.run("tc", "filter", "add", "dev", "lo", "ingress", "bpf", "da", "bytecode",
                dropProgram(0));
        Sh.run("tc", "qdisc", "del", "dev", "lo", "clsact");
        Result gact = Sh.run("tc", "qdisc", "add", "dev", "lo", "clsact");
        Result gactFilter = Sh.run("tc", "filter", "add", "dev", "lo", "ingress", "matchall", "action", "gact",
                "drop", "random", "determ", "ok", "10");
        Sh.run("tc", "qdisc", "del", "dev", "lo", "clsact");
        Result ss = Sh.run("ss", "-K", "-t", "state", "established");
        Result sysctl = Sh.run("sh", "-c", "echo 15 > /proc/sys/net/ipv4/tcp_retries2");
        fact("probe", "netem", yes(netem), "htb", yes(htb), "clsact", yes(clsact), "bpf", yes(bpf),
                "gact", gact.code == 0 ? yes(gactFilter) : "no", "ssKill", yes(ss), "sysctl", yes(sysctl));
        if (netem.code != 0) {
            fact("probe-netem", "error", netem.output.lines().findFirst().orElse(""));
        }
        if (gactFilter.code != 0) {
            fact("probe-gact", "error", gactFilter.output.lines().findFirst().orElse(""));
        }
    }

    // ---- the pair of workers --------------------------------------------------------------------------------------

    /** An endpoint with its error handler's record. */
    private static final class Watched {
        UcpEndpoint ep;
        int reports;
        UcxException error;
        long reportedAt;

        void report(UcxException e) {
            reports++;
            if (error == null) {
                error = e;
                reportedAt = System.nanoTime();
            }
        }

        String status() {
            return error == null ? "none" : error.getClass().getSimpleName() + "/" + error.status();
        }
    }

    /** A server and a client worker, connected through a listener on 127.0.0.1. */
    private static final class Pair {
        final UcpWorker server;
        final UcpWorker client;
        final Arena arena;
        final UcpListener listener;
        Watched c;
        Watched s;

        Pair(UcpWorker server, UcpWorker client, Arena arena) {
            this.server = server;
            this.client = client;
            this.arena = arena;
            this.listener = server.listen(new InetSocketAddress("127.0.0.1", 0));
        }

        void connect() {
            Watched cw = new Watched();
            Watched sw = new Watched();
            cw.ep = client.connect(UcpEndpoint.Params.socket(listener.address()).onError(cw::report));
            UcpConnectionRequest[] request = new UcpConnectionRequest[1];
            until(() -> (request[0] = listener.poll()) != null, 10_000, "connection request");
            sw.ep = request[0].accept(sw::report);
            c = cw;
            s = sw;
        }

        void progress() {
            server.progress();
            client.progress();
        }

        void until(BooleanSupplier condition, long millis, String what) {
            Await.until(what, Duration.ofMillis(millis), this::progress, condition);
        }

        void progressFor(long millis) {
            Await.during(Duration.ofMillis(millis), this::progress);
        }

        /**
         * One message each way of each size, content checked byte for byte; returns the bytes verified.
         */
        long exchange(int seed, int... sizes) {
            long verified = 0;
            for (int size : sizes) {
                MemorySegment up = BytePattern.allocate(arena, size, seed);
                MemorySegment atServer = arena.allocate(Math.max(1, size));
                long recv = server.receiveTag(atServer, 0, size, 0xC1, -1L);
                long send = c.ep.sendTag(up, 0, size, 0xC1);
                awaitBoth(client, send, server, recv);
                check(server.receivedLength() == size, "length at server " + server.receivedLength() + " != " + size);
                check(up.asSlice(0, size).mismatch(atServer.asSlice(0, size)) == -1, "bytes at server, size " + size);
                MemorySegment down = BytePattern.allocate(arena, size, seed + 1);
                MemorySegment atClient = arena.allocate(Math.max(1, size));
                long recv2 = client.receiveTag(atClient, 0, size, 0x5E, -1L);
                long send2 = s.ep.sendTag(down, 0, size, 0x5E);
                awaitBoth(server, send2, client, recv2);
                check(client.receivedLength() == size, "length at client");
                check(down.asSlice(0, size).mismatch(atClient.asSlice(0, size)) == -1, "bytes at client, size " + size);
                verified += 2L * size;
            }
            return verified;
        }

        void awaitBoth(UcpWorker w1, long t1, UcpWorker w2, long t2) {
            boolean[] d = new boolean[2];
            until(() -> {
                d[0] = d[0] || w1.poll(t1);
                d[1] = d[1] || w2.poll(t2);
                return d[0] && d[1];
            }, 10_000, "exchange");
        }

        /** Waits until both error handlers ran; returns {@code true} if they did within {@code millis}. */
        boolean awaitReports(long since, long millis) {
            long deadline = since + TimeUnit.MILLISECONDS.toNanos(millis);
            while (c.reports == 0 || s.reports == 0) {
                progress();
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Starts a small synchronous tag send on each endpoint whose failure is not reported yet (a socket with
         * nothing to send may never be timed out: only data it must send makes the kernel give up on it), then
         * waits for the reports and for those sends to end; a synchronous send needs the peer's answer, so it can
         * only end with an error. Returns the sends.
         */
        List<Op> provoke() {
            List<Op> ops = new ArrayList<>();
            MemorySegment b = BytePattern.allocate(arena, 64, 5);
            Op clientOp = null;
            Op serverOp = null;
            if (c.reports == 0) {
                clientOp = new Op("client-sync-send", c.ep.sendTagSync(b, 0, 64, 0x99), null, true);
                ops.add(clientOp);
            }
            if (s.reports == 0) {
                serverOp = new Op("server-sync-send", s.ep.sendTagSync(b, 0, 64, 0x98), null, true);
                ops.add(serverOp);
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOUND_MILLIS);
            while (System.nanoTime() - deadline < 0
                    && (c.reports == 0 || s.reports == 0 || ops.stream().anyMatch(o -> !o.done))) {
                progress();
                if (clientOp != null) {
                    clientOp.check(client);
                }
                if (serverOp != null) {
                    serverOp.check(server);
                }
            }
            return ops;
        }

        /** Reports what both handlers saw, as a fact. */
        void reportFailures(String name, long since) {
            fact(name, "client", c.status(), "clientMs", c.reports == 0 ? -1
                    : TimeUnit.NANOSECONDS.toMillis(c.reportedAt - since), "clientReports", c.reports,
                    "clientFailed", c.ep.isFailed(), "server", s.status(), "serverMs", s.reports == 0 ? -1
                    : TimeUnit.NANOSECONDS.toMillis(s.reportedAt - since), "serverReports", s.reports,
                    "serverFailed", s.ep.isFailed());
        }

        /** A new operation on a failed endpoint: how it is refused, and how fast. */
        void reportLaterOperation() {
            MemorySegment b = arena.allocate(64);
            long t = System.nanoTime();
            String outcome;
            try {
                long token = c.ep.sendTag(b, 0, 64, 0x77);
                outcome = "started:" + token;
            } catch (UcxException e) {
                outcome = e.getClass().getSimpleName() + "/" + e.status();
            }
            fact("later-op", "outcome", outcome, "micros", TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - t));
        }

        /**
         * After a failure both sides were told of: nothing more is reported, a new operation is refused, the link
         * comes back if {@code restoreLink}, the failed endpoints close and a new connection works.
         */
        void recover(boolean restoreLink) throws Exception {
            progressFor(300); // nothing more must be reported
            fact("after", "clientReports", c.reports, "serverReports", s.reports);
            reportLaterOperation();
            if (restoreLink) {
                linkUp();
            }
            closeFailed();
            reconnect();
        }

        /** Force-closes the failed endpoints; restores nothing else. */
        void closeFailed() {
            long t = System.nanoTime();
            c.ep.closeForce();
            s.ep.closeForce();
            fact("close-failed", "ms", millisSince(t));
        }

        /** A new connection from the same workers to the same listener, with an exchange checked. */
        void reconnect() {
            long t = System.nanoTime();
            int reportsBefore = c.reports + s.reports;
            connect();
            long bytes = exchange(7, 1, 4096, 65536, 1 << 20);
            fact("reconnect", "ms", millisSince(t), "bytesVerified", bytes, "reports", c.reports + s.reports,
                    "oldReports", reportsBefore);
        }

        void close() {
            // messages of the failed connection that no receive matched: take them, so UCX has none left
            MemorySegment sink = arena.allocate(8 << 20);
            for (UcpWorker w : List.of(server, client)) {
                long message;
                while ((message = w.probeTag(0, 0, true)) != 0) {
                    try {
                        long token = w.receiveMessage(message, sink, 0, sink.byteSize());
                        until(() -> w.poll(token), 5_000, "unexpected message");
                    } catch (UcxException e) {
                        // a message of the failed endpoint whose data can no longer come: UCX cancels it, when it
                        // completes (1.13) or at once (1.18)
                    }
                }
            }
            if (c != null) {
                c.ep.closeForce();
                s.ep.closeForce();
            }
            listener.close();
        }
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException("check failed: " + what);
        }
    }

    // ---- (a) cut while idle ---------------------------------------------------------------------------------------

    private static void cutIdle(Pair pair) throws Exception {
        pair.connect();
        long bytes = pair.exchange(1, 1024, 65536, 1 << 20);
        fact("connected", "bytesVerified", bytes, "lanes", String.join("+", pair.c.ep.transports()));
        long cut = System.nanoTime();
        linkDown();
        pair.awaitReports(cut, SILENT_WAIT_MILLIS);
        pair.reportFailures("cut-idle-silent", cut);
        List<Op> provoked = pair.provoke();
        pair.reportFailures("cut-idle", cut);
        fact("provoked", "ops", provoked.size(), "outcomes", outcomes(provoked));
        if (pair.c.reports == 0 || pair.s.reports == 0) {
            linkUp();
            return;
        }
        pair.recover(true);
    }

    private static String outcomes(List<Op> ops) {
        Map<String, Integer> outcomes = new TreeMap<>();
        for (Op o : ops) {
            outcomes.merge(o.kind + ":" + (o.done ? o.result : "PENDING"), 1, Integer::sum);
        }
        return outcomes.toString().replace(", ", ",");
    }

    // ---- (a) cut with sends in flight -----------------------------------------------------------------------------

    /** An operation and how it ended. */
    private static final class Op {
        final String kind;
        final long token;
        final CompletableFuture<Long> future;
        final boolean mustFail;
        boolean done;
        String result;
        long doneAt;

        Op(String kind, long token, CompletableFuture<Long> future, boolean mustFail) {
            this.kind = kind;
            this.token = token;
            this.future = future;
            this.mustFail = mustFail;
            if (token == UcpWorker.COMPLETED && future == null) {
                finish("OK");
            }
        }

        void finish(String r) {
            done = true;
            result = r;
            doneAt = System.nanoTime();
        }

        void check(UcpWorker worker) {
            if (done) {
                return;
            }
            if (future != null) {
                if (future.isDone()) {
                    try {
                        future.get();
                        finish("OK");
                    } catch (ExecutionException e) {
                        finish(describe(e.getCause()));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
                return;
            }
            try {
                if (worker.poll(token)) {
                    finish("OK");
                }
            } catch (RuntimeException e) {
                finish(describe(e));
            }
        }
    }

    private static String describe(Throwable t) {
        return t instanceof UcxException u ? u.getClass().getSimpleName() + "/" + u.status()
                : t.getClass().getSimpleName();
    }

    private static void cutInFlight(Pair pair) throws Exception {
        pair.connect();
        long bytes = pair.exchange(1, 1024, 65536, 1 << 20);
        fact("connected", "bytesVerified", bytes, "lanes", String.join("+", pair.c.ep.transports()));
        Arena arena = pair.arena;
        int eager = 256;
        int eagerSize = 8192;
        int rndv = 8;
        int rndvSize = 4 << 20;
        // the server expects every message; what arrives before the cut is checked byte for byte
        MemorySegment inbox = arena.allocate((long) eager * eagerSize + (long) rndv * rndvSize);
        List<Long> receives = new ArrayList<>();
        List<long[]> where = new ArrayList<>();
        for (int i = 0; i < eager; i++) {
            receives.add(pair.server.receiveTag(inbox, (long) i * eagerSize, eagerSize, TAG_C2S + i, -1L));
            where.add(new long[] {(long) i * eagerSize, eagerSize, i});
        }
        long rndvBase = (long) eager * eagerSize;
        for (int i = 0; i < rndv; i++) {
            receives.add(pair.server.receiveTag(inbox, rndvBase + (long) i * rndvSize, rndvSize, TAG_C2S + eager + i,
                    -1L));
            where.add(new long[] {rndvBase + (long) i * rndvSize, rndvSize, eager + i});
        }
        List<MemorySegment> sources = new ArrayList<>();
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < eager; i++) {
            MemorySegment src = BytePattern.allocate(arena, eagerSize, i);
            sources.add(src);
            ops.add(new Op("eager", pair.c.ep.sendTag(src, 0, eagerSize, TAG_C2S + i), null, false));
        }
        for (int i = 0; i < rndv; i++) {
            MemorySegment src = BytePattern.allocate(arena, rndvSize, eager + i);
            sources.add(src);
            ops.add(new Op("rndv", UcpWorker.COMPLETED, pair.c.ep.sendTagAsync(src, 0, rndvSize, TAG_C2S + eager + i),
                    false));
        }
        // let some of it through, then cut in the middle
        int[] received = new int[1];
        boolean[] recvDone = new boolean[receives.size()];
        String[] recvResult = new String[receives.size()];
        Runnable pollReceives = () -> {
            for (int i = 0; i < receives.size(); i++) {
                if (!recvDone[i]) {
                    try {
                        if (pair.server.poll(receives.get(i))) {
                            recvDone[i] = true;
                            recvResult[i] = "OK";
                            received[0]++;
                        }
                    } catch (RuntimeException e) {
                        recvDone[i] = true;
                        recvResult[i] = describe(e);
                    }
                }
            }
        };
        pair.until(() -> {
            pollReceives.run();
            return received[0] > 0;
        }, 10_000, "first message before the cut");
        linkDown();
        long cut = System.nanoTime();
        for (Op o : ops) {
            o.check(pair.client);
        }
        int pendingAtCut = (int) ops.stream().filter(o -> !o.done).count();
        int receivedAtCut = received[0];
        // started after the cut: these need an answer from the server, which can no longer come
        MemorySegment late = BytePattern.allocate(arena, rndvSize, 99);
        ops.add(new Op("late-sync", pair.c.ep.sendTagSync(sources.getFirst(), 0, 64, TAG_C2S + 0xF0000), null,
                true));
        ops.add(new Op("late-rndv", UcpWorker.COMPLETED, pair.c.ep.sendTagAsync(late, 0, rndvSize,
                TAG_C2S + 0xF0001), true));
        ops.add(new Op("late-flush", pair.c.ep.flush(), null, false));
        fact("cut", "opsPending", pendingAtCut, "opsTotal", ops.size(), "receivedAtCut", receivedAtCut, "receives",
                receives.size());
        boolean reported = false;
        long deadline = cut + TimeUnit.MILLISECONDS.toNanos(BOUND_MILLIS);
        long silentUntil = cut + TimeUnit.MILLISECONDS.toNanos(SILENT_WAIT_MILLIS);
        while (System.nanoTime() - deadline < 0) {
            pair.progress();
            for (Op o : ops) {
                o.check(pair.client);
            }
            pollReceives.run();
            reported = pair.c.reports > 0 && pair.s.reports > 0;
            boolean opsDone = ops.stream().allMatch(o -> o.done);
            if (opsDone && (reported || System.nanoTime() - silentUntil > 0)) {
                break;
            }
        }
        pair.reportFailures("cut-inflight-silent", cut);
        List<Op> provoked = pair.provoke();
        reported = pair.c.reports > 0 && pair.s.reports > 0;
        pair.reportFailures("cut-inflight", cut);
        fact("provoked", "ops", provoked.size(), "outcomes", outcomes(provoked));
        long lastDone = ops.stream().filter(o -> o.done).mapToLong(o -> o.doneAt).max().orElse(cut);
        int mustFailOk = 0;
        for (Op o : ops) {
            if (o.mustFail && "OK".equals(o.result)) {
                mustFailOk++;
            }
        }
        fact("ops", "pending", ops.stream().filter(o -> !o.done).count(), "allDoneMs",
                TimeUnit.NANOSECONDS.toMillis(lastDone - cut), "mustFailButOk", mustFailOk, "outcomes",
                outcomes(ops));
        // the server's receives belong to its worker, not to the endpoint: the unmatched ones stay posted
        int stillPosted = 0;
        for (int i = 0; i < receives.size(); i++) {
            if (!recvDone[i]) {
                stillPosted++;
                pair.server.cancel(receives.get(i));
            }
        }
        pair.until(() -> {
            pollReceives.run();
            for (boolean d : recvDone) {
                if (!d) {
                    return false;
                }
            }
            return true;
        }, 5_000, "canceled receives");
        Map<String, Integer> recvOutcomes = new TreeMap<>();
        long verifiedBytes = 0;
        int corrupt = 0;
        for (int i = 0; i < receives.size(); i++) {
            recvOutcomes.merge(recvResult[i], 1, Integer::sum);
            if ("OK".equals(recvResult[i])) {
                long[] w = where.get(i);
                MemorySegment expected = sources.get((int) w[2]);
                if (inbox.asSlice(w[0], w[1]).mismatch(expected) != -1) {
                    corrupt++;
                } else {
                    verifiedBytes += w[1];
                }
            }
        }
        fact("receives", "stillPostedAfterFailure", stillPosted, "outcomes", recvOutcomes.toString().replace(", ", ","),
                "verifiedBytes", verifiedBytes, "corrupt", corrupt);
        if (!reported) {
            linkUp();
            return;
        }
        pair.recover(true);
    }

    // ---- (c) connection reset -------------------------------------------------------------------------------------

    private static boolean reset(Pair pair) throws Exception {
        pair.connect();
        long bytes = pair.exchange(1, 1024, 65536);
        fact("connected", "bytesVerified", bytes);
        // operations that wait on the server: it posts no receive for them
        MemorySegment small = BytePattern.allocate(pair.arena, 64, 3);
        MemorySegment big = BytePattern.allocate(pair.arena, 4 << 20, 4);
        List<Op> ops = new ArrayList<>();
        ops.add(new Op("sync", pair.c.ep.sendTagSync(small, 0, 64, TAG_C2S + 1), null, true));
        ops.add(new Op("rndv", UcpWorker.COMPLETED, pair.c.ep.sendTagAsync(big, 0, big.byteSize(), TAG_C2S + 2),
                true));
        pair.progressFor(100);
        for (Op o : ops) {
            o.check(pair.client);
        }
        long pendingBefore = ops.stream().filter(o -> !o.done).count();
        long established = Sh.require(Sh.run("ss", "-H", "-t", "-n", "state", "established"), "ss").lines()
                .filter(l -> !l.isBlank()).count();
        long t = System.nanoTime();
        Result killed = Sh.run("ss", "-K", "-t", "state", "established");
        if (killed.code != 0) {
            System.out.println("SKIP ss -K does not work here (needs CONFIG_INET_DIAG_DESTROY and CAP_NET_ADMIN): "
                    + killed.output.lines().findFirst().orElse(""));
            pair.close();
            return false;
        }
        long sockets = killed.output.lines().filter(l -> l.contains("127.0.0.1")).count();
        boolean reported = pair.awaitReports(t, BOUND_MILLIS);
        long deadline = t + TimeUnit.MILLISECONDS.toNanos(BOUND_MILLIS);
        while (ops.stream().anyMatch(o -> !o.done) && System.nanoTime() - deadline < 0) {
            pair.progress();
            for (Op o : ops) {
                o.check(pair.client);
            }
        }
        pair.reportFailures("reset", t);
        fact("reset-ops", "established", established, "socketsKilled", sockets, "pendingBefore", pendingBefore,
                "pending", ops.stream().filter(o -> !o.done).count(), "allDoneMs", millisSince(t), "outcomes",
                outcomes(ops));
        if (reported) {
            pair.recover(false);
        }
        return true;
    }

    // ---- (b) a noisy link -----------------------------------------------------------------------------------------

    /** Drop probability in parts per million, as a cBPF program: {@code ld rand; jgt T; ret SHOT; ret OK}. */
    private static String dropProgram(long ppm) {
        long threshold = (long) ((1.0 - ppm / 1e6) * 4294967295.0);
        // ld [SKF_AD_OFF + SKF_AD_RANDOM]; jgt #threshold jt 0 jf 1; ret #TC_ACT_SHOT (2); ret #TC_ACT_OK (0)
        return "4,32 0 0 4294963256,37 0 1 " + threshold + ",6 0 0 2,6 0 0 0";
    }

    /** Classifies a share of packets (ppm) into htb class 1:2, the rest into 1:1. */
    private static String slowLaneProgram(long ppm) {
        long threshold = (long) ((1.0 - ppm / 1e6) * 4294967295.0);
        return "4,32 0 0 4294963256,37 0 1 " + threshold + ",6 0 0 65538,6 0 0 65537";
    }

    private static final long LOSS_PPM = 20_000;
    private static final long SLOW_PPM = 50_000;

    private static long snmp(String table, String field) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/net/snmp"));
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).startsWith(table + ":") && lines.get(i + 1).startsWith(table + ":")) {
                String[] names = lines.get(i).split("\\s+");
                String[] values = lines.get(i + 1).split("\\s+");
                for (int k = 1; k < names.length; k++) {
                    if (names[k].equals(field)) {
                        return Long.parseLong(values[k]);
                    }
                }
            }
        }
        return -1;
    }

    /** Sum of the "dropped N" counters of {@code tc -s qdisc show dev lo}. */
    private static long qdiscDrops(String... select) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("tc", "-s", "qdisc", "show", "dev", "lo"));
        cmd.addAll(List.of(select));
        String out = Sh.require(Sh.run(cmd.toArray(String[]::new)), "tc -s qdisc show");
        long sum = 0;
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("dropped (\\d+)").matcher(out);
        while (m.find()) {
            sum += Long.parseLong(m.group(1));
        }
        return sum;
    }

    private static boolean noisy(Pair pair, int messages) throws Exception {
        // packets of a real link's size, one segment each: a drop loses 1.5 KB, not a 64 KB GSO burst
        Sh.require(Sh.run("ip", "link", "set", "lo", "mtu", "1500"), "ip link set lo mtu 1500");
        Result gso = Sh.run("ip", "link", "set", "lo", "gso_max_segs", "1");
        pair.connect();
        long warm = pair.exchange(1, 1024, 65536, 1 << 20);
        String rttBefore = rttMicros(pair, 200);
        // egress: htb, 5% of the packets into a 20 Mbit/s lane with a short queue: delayed, reordered, some dropped
        // locally when the lane is full; ingress: 2% dropped at random after TCP sent them (real loss).
        List<String[]> setup = List.of(
                new String[] {"tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "1"},
                new String[] {"tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:1", "htb", "rate",
                    "2gbit"},
                new String[] {"tc", "class", "add", "dev", "lo", "parent", "1:", "classid", "1:2", "htb", "rate",
                    "20mbit"},
                new String[] {"tc", "qdisc", "add", "dev", "lo", "parent", "1:2", "handle", "20:", "pfifo", "limit",
                    "40"},
                new String[] {"tc", "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "bpf",
                    "bytecode", slowLaneProgram(SLOW_PPM), "classid", "1:1"},
                new String[] {"tc", "qdisc", "add", "dev", "lo", "clsact"},
                new String[] {"tc", "filter", "add", "dev", "lo", "ingress", "protocol", "ip", "bpf", "da",
                    "bytecode", dropProgram(LOSS_PPM)});
        for (String[] cmd : setup) {
            Result r = Sh.run(cmd);
            if (r.code != 0) {
                System.out.println("SKIP no loss/delay qdisc available (netem is not built into this kernel, and "
                        + String.join(" ", cmd) + " failed: " + r.output.lines().findFirst().orElse("") + ")");
                pair.close();
                return false;
            }
        }
        fact("noise", "lossPpm", LOSS_PPM, "slowLanePpm", SLOW_PPM, "slowLane", "20mbit/pfifo40", "mtu", 1500,
                "gsoMaxSegs1", gso.code == 0);
        long retransBefore = snmp("Tcp", "RetransSegs");
        long outBefore = snmp("Tcp", "OutSegs");
        String rttNoisy = rttMicros(pair, 200);

        Traffic up = new Traffic(pair.client, pair.c.ep, pair.server, TAG_C2S, messages, 11, pair.arena);
        Traffic down = new Traffic(pair.server, pair.s.ep, pair.client, TAG_S2C, messages, 12, pair.arena);
        long t = System.nanoTime();
        Await.until(() -> "noisy traffic done: " + up + " / " + down, Duration.ofSeconds(30), () -> {
            pair.progress();
            up.step();
            down.step();
            check(pair.c.reports == 0 && pair.s.reports == 0, "endpoint failed on a working link: "
                    + pair.c.status() + " / " + pair.s.status());
        }, () -> up.finished() && down.finished());
        long ms = millisSince(t);
        up.drain();
        down.drain();
        long retrans = snmp("Tcp", "RetransSegs") - retransBefore;
        long out = snmp("Tcp", "OutSegs") - outBefore;
        long ingressDrops = qdiscDrops("ingress");
        long egressDrops = qdiscDrops("root");
        fact("noisy", "messages", up.received + down.received, "bytes", up.bytes + down.bytes, "ms", ms,
                "missing", up.missing() + down.missing(), "duplicates", up.duplicates + down.duplicates, "corrupt",
                up.corrupt + down.corrupt, "stray", up.stray + down.stray, "retransSegs", retrans, "outSegs", out,
                "ingressDrops", ingressDrops, "egressDrops", egressDrops, "rttBeforeUs", rttBefore,
                "rttNoisyUs", rttNoisy, "warmBytes", warm, "clientReports", pair.c.reports,
                "serverReports", pair.s.reports);
        Sh.run("tc", "qdisc", "del", "dev", "lo", "root");
        Sh.run("tc", "qdisc", "del", "dev", "lo", "clsact");
        return true;
    }

    /** Round-trip times of 8-byte tag messages, client to server and back: median, 99th percentile, maximum. */
    private static String rttMicros(Pair pair, int rounds) {
        MemorySegment b = pair.arena.allocate(8);
        MemorySegment r = pair.arena.allocate(8);
        long[] times = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            long t = System.nanoTime();
            long recv = pair.server.receiveTag(r, 0, 8, 0xAA, -1L);
            pair.awaitBoth(pair.client, pair.c.ep.sendTag(b, 0, 8, 0xAA), pair.server, recv);
            long back = pair.client.receiveTag(r, 0, 8, 0xAB, -1L);
            pair.awaitBoth(pair.server, pair.s.ep.sendTag(b, 0, 8, 0xAB), pair.client, back);
            times[i] = System.nanoTime() - t;
        }
        java.util.Arrays.sort(times);
        return times[rounds / 2] / 1000 + "/" + times[rounds * 99 / 100] / 1000 + "/" + times[rounds - 1] / 1000;
    }

    /**
     * One direction of the noisy-link traffic: {@code count} messages, each {@code [seq, length, crc32c]} and a
     * seeded payload, sizes from 16 bytes to 1 MiB (about one in 40 large enough for rendezvous). A window of sends
     * and of wildcard receives is kept in flight; every received message is checked and its sequence number
     * recorded, once.
     */
    private static final class Traffic {
        private static final int HEADER = 16;
        private static final int WINDOW = 32;
        private static final int MAX = 1 << 20;

        final UcpWorker sender;
        final UcpEndpoint ep;
        final UcpWorker receiver;
        final long tagBase;
        final int count;
        final SplittableRandom sizes;
        final BitSet seen = new BitSet();
        final MemorySegment[] outBuf = new MemorySegment[WINDOW];
        final long[] outToken = new long[WINDOW];
        final MemorySegment[] inBuf = new MemorySegment[WINDOW];
        final long[] inToken = new long[WINDOW];
        int sent;
        int sendsDone;
        int receivesPosted;
        int received;
        int duplicates;
        int corrupt;
        int stray;
        long bytes;

        Traffic(UcpWorker sender, UcpEndpoint ep, UcpWorker receiver, long tagBase, int count, int seed,
                Arena arena) {
            this.sender = sender;
            this.ep = ep;
            this.receiver = receiver;
            this.tagBase = tagBase;
            this.count = count;
            this.sizes = new SplittableRandom(seed);
            for (int i = 0; i < WINDOW; i++) {
                outBuf[i] = arena.allocate(MAX);
                inBuf[i] = arena.allocate(MAX);
                outToken[i] = -1;
                inToken[i] = -1;
            }
        }

        boolean finished() {
            return sendsDone == count && received == count;
        }

        int size() {
            int kind = sizes.nextInt(40);
            if (kind == 0) {
                return 256 * 1024 + sizes.nextInt(MAX - 256 * 1024 + 1);
            }
            if (kind < 10) {
                return 4096 + sizes.nextInt(60_000);
            }
            return HEADER + sizes.nextInt(2048);
        }

        void step() {
            for (int slot = 0; slot < WINDOW; slot++) {
                if (outToken[slot] != -1 && sender.poll(outToken[slot])) {
                    outToken[slot] = -1;
                    sendsDone++;
                }
                if (outToken[slot] == -1 && sent < count) {
                    int seq = sent++;
                    int size = size();
                    MemorySegment m = outBuf[slot];
                    fillPayload(m, seq, size);
                    long token = ep.sendTag(m, 0, size, tagBase + seq);
                    if (token == UcpWorker.COMPLETED) {
                        sendsDone++;
                    } else {
                        outToken[slot] = token;
                    }
                }
                if (inToken[slot] != -1 && receiver.poll(inToken[slot])) {
                    inToken[slot] = -1;
                    verify(inBuf[slot], receiver.receivedTag(), receiver.receivedLength());
                }
                if (inToken[slot] == -1 && receivesPosted < count) {
                    receivesPosted++;
                    long token = receiver.receiveTag(inBuf[slot], 0, MAX, tagBase, TAG_MASK);
                    if (token == UcpWorker.COMPLETED) {
                        verify(inBuf[slot], receiver.receivedTag(), receiver.receivedLength());
                    } else {
                        inToken[slot] = token;
                    }
                }
            }
        }

        static void fillPayload(MemorySegment m, int seq, int size) {
            BytePattern.fill(m.asSlice(HEADER, size - HEADER), seq);
            CRC32C crc = new CRC32C();
            crc.update(m.asSlice(HEADER, size - HEADER).asByteBuffer());
            m.set(JAVA_LONG_UNALIGNED, 0, seq);
            m.set(JAVA_INT_UNALIGNED, 8, size);
            m.set(JAVA_INT_UNALIGNED, 12, (int) crc.getValue());
        }

        void verify(MemorySegment m, long tag, long length) {
            received++;
            long seq = m.get(JAVA_LONG_UNALIGNED, 0);
            int size = m.get(JAVA_INT_UNALIGNED, 8);
            int crcSent = m.get(JAVA_INT_UNALIGNED, 12);
            boolean ok = length >= HEADER && size == length && seq == tag - tagBase && seq >= 0 && seq < count;
            if (ok) {
                CRC32C crc = new CRC32C();
                crc.update(m.asSlice(HEADER, size - HEADER).asByteBuffer());
                ok = (int) crc.getValue() == crcSent;
            }
            if (!ok) {
                corrupt++;
                return;
            }
            if (seen.get((int) seq)) {
                duplicates++;
                return;
            }
            seen.set((int) seq);
            bytes += length;
        }

        int missing() {
            return count - seen.cardinality();
        }

        /** Checks that nothing more arrives: a probe for any message of this direction finds none. */
        void drain() {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            while (System.nanoTime() - deadline < 0 && stray == 0) {
                receiver.progress();
                sender.progress();
                if (receiver.probeTag(tagBase, TAG_MASK, false) != 0) {
                    stray++; // a message beyond the count: a duplicate the receives did not see
                }
            }
            for (int slot = 0; slot < WINDOW; slot++) {
                if (inToken[slot] != -1) {
                    receiver.cancel(inToken[slot]);
                    try {
                        while (!receiver.poll(inToken[slot])) {
                            receiver.progress();
                        }
                        stray++; // a posted receive beyond count that matched something
                    } catch (UcxCanceledException e) {
                        // expected: nothing was left to match it
                    }
                    inToken[slot] = -1;
                }
            }
        }

        @Override
        public String toString() {
            return "sent " + sent + ", sends done " + sendsDone + ", received " + received;
        }
    }
}
