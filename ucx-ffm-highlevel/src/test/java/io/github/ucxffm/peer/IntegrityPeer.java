package io.github.ucxffm.peer;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcsThreadMode;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A peer process of the integrity harness: connects endpoints to an {@link IntegrityHub} and runs one channel on
 * each, sending or receiving, and prints what it saw in the lines {@link Integrity.Lines} parses, so that a test can
 * audit it even after killing it.
 * <p>
 * Arguments: {@code TLS PORT BASE DIRS REGION_DIR [reports=FILE] [key=value ...]}.
 * <ul>
 *   <li>{@code TLS}: {@code tcp} (peer error handling), or {@code default} (UCX's choice, shared memory here; no peer
 *   error handling, which UCX 1.13 requires for it);</li>
 *   <li>{@code PORT}: the hub's port on 127.0.0.1;</li>
 *   <li>{@code BASE}: channel number of the first endpoint; the next ones count up; also this worker's client id
 *   ({@code BASE << 1 | tcp});</li>
 *   <li>{@code DIRS}: one letter per endpoint, {@code S} (this peer sends) or {@code R} (it receives);</li>
 *   <li>{@code REGION_DIR}: where a receiving channel maps its region from a file {@code region-CHANNEL} (so that the
 *   test can read it after a kill), or {@code -} for memory of its own;</li>
 *   <li>then the {@link Integrity.Config} of the channels.</li>
 * </ul>
 * Prints {@code CONNECTED}, then as it goes {@code ACKED}, {@code GOT}, {@code PROBLEM} and {@code STATS} lines, and
 * at the end {@code CLOSING} (what UCX logs from then on comes from closing the endpoints), one {@code REPORT} line
 * per channel and {@code DONE}. Exits 0, or 2 if any channel saw a problem. Stops
 * by itself if it runs 60 s longer than its channels should.
 */
public final class IntegrityPeer {

    private IntegrityPeer() {
    }

    /**
     * Prints each report as one line and flushes it: a SIGKILL cuts at most the line being written. With a report
     * file, each line is first appended to it in one {@code write}: once that returns the line is in the page cache,
     * which outlives a SIGKILL of this process, so the test audits what the peer wrote before it acknowledged anything,
     * whatever became of its standard output (which it shares with UCX's log, and reads through a pipe).
     */
    private static final class Printer implements Integrity.Reporter {
        private final PrintStream out = System.out;
        private final FileChannel file;

        Printer(FileChannel file) {
            this.file = file;
        }

        void line(String s) {
            String line = s + " .\n";
            if (file != null) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(line.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                try {
                    while (b.hasRemaining()) {
                        file.write(b);
                    }
                } catch (IOException e) {
                    // without its record the audit would flag what follows: stop before acknowledging anything more
                    out.print("REPORT FILE FAILED " + e + "\n");
                    out.flush();
                    Runtime.getRuntime().halt(3);
                }
            }
            out.print(line);
            out.flush();
        }

        @Override
        public void acked(int channel, Integrity.SeqSet app, Integrity.SeqSet sync, Integrity.SeqSet flush) {
            line("ACKED ch=" + channel + " app=" + app.ranges() + " sync=" + sync.ranges() + " flush="
                    + flush.ranges());
        }

        @Override
        public void verified(int channel, Integrity.SeqSet seqs) {
            line("GOT ch=" + channel + " " + seqs.ranges());
        }

        @Override
        public void problem(int channel, String what) {
            line("PROBLEM ch=" + channel + " " + what.replace('\n', ' '));
        }
    }

    /**
     * Runs the peer.
     *
     * @param args see the class description
     * @throws Exception if it cannot set up
     */
    public static void main(String[] args) throws Exception {
        String tls = args[0];
        int port = Integer.parseInt(args[1]);
        int base = Integer.parseInt(args[2]);
        String dirs = args[3];
        String regionDir = args[4];
        List<String> rest = new ArrayList<>(Arrays.asList(args).subList(5, args.length));
        FileChannel reports = null;
        if (!rest.isEmpty() && rest.get(0).startsWith(REPORTS)) {
            reports = FileChannel.open(Path.of(rest.remove(0).substring(REPORTS.length())), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        }
        Integrity.Config cfg = Integrity.Config.parse(rest);
        boolean tcp = tls.equals("tcp");
        long clientId = ((long) base << 1) | (tcp ? 1 : 0);
        long deadline = System.nanoTime() + Duration.ofMillis(cfg.runMillis).plusSeconds(60).toNanos();
        Printer printer = new Printer(reports);
        UcpContext.Builder builder = UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.STREAM,
                UcpContext.Feature.AM, UcpContext.Feature.RMA, UcpContext.Feature.AMO64);
        if (!tls.equals("default")) {
            builder.config("TLS", tls);
        }
        boolean problems = false;
        // Freed after the worker and context closed: UCX may use this memory until then (registered regions, buffers
        // of operations still in flight), and a region must be unmapped by UCX before its file mapping goes.
        Arena files = Arena.ofConfined();
        Arena hellos = Arena.ofConfined();
        List<IntegrityChannel> channels = new ArrayList<>();
        try (UcpContext context = builder.build();
             UcpWorker worker = context.newWorker(UcsThreadMode.SINGLE, clientId)) {
            IntegrityHub.AmRouter router = new IntegrityHub.AmRouter();
            worker.setAmHandler(Integrity.AM_ID, router);
            List<Long> helloTokens = new ArrayList<>();
            for (int i = 0; i < dirs.length(); i++) {
                int channel = base + i;
                boolean sends = dirs.charAt(i) == 'S';
                UcpEndpoint ep = worker.connect(UcpEndpoint.Params.socket(new InetSocketAddress("127.0.0.1", port))
                        .sendClientId(true).peerErrorHandling(tcp));
                ep.closeTimeout(Duration.ofSeconds(2));
                helloTokens.add(IntegrityHub.sendHello(ep, hellos.allocate(Integrity.HELLO_BYTES, 8), channel, sends));
                if (sends) {
                    channels.add(new IntegritySender(worker, ep, channel, cfg, printer));
                } else {
                    MemorySegment region = null;
                    if (!regionDir.equals("-")) {
                        region = mapRegion(Path.of(regionDir, "region-" + channel), Integrity.regionBytes(cfg), files);
                    }
                    IntegrityReceiver r = new IntegrityReceiver(worker, ep, channel, cfg, printer, region);
                    router.add(r);
                    channels.add(r);
                }
            }
            printer.line("CONNECTED ch=" + base + " channels=" + dirs.length() + " pid=" + ProcessHandle.current().pid());
            long nextStats = System.nanoTime();
            while (true) {
                boolean work = worker.progress() != 0;
                for (int i = 0; i < helloTokens.size(); i++) {
                    long t = helloTokens.get(i);
                    if (t != IntegrityChannel.NONE && channels.get(i).resolved(t)) {
                        helloTokens.set(i, IntegrityChannel.NONE);
                    }
                }
                boolean finished = true;
                for (IntegrityChannel c : channels) {
                    work |= c.step();
                    finished &= c.isFinished();
                }
                if (finished) {
                    break;
                }
                long now = System.nanoTime();
                if (now - nextStats >= 0) {
                    nextStats = now + 1_000_000_000L;
                    for (IntegrityChannel c : channels) {
                        printer.line("STATS ch=" + c.channel() + " state=" + c.state() + " ops="
                                + c.counts.totalOps() + " bytes=" + c.counts.bytesVerified);
                    }
                }
                if (now - deadline > 0) {
                    printer.line("TIMEOUT ch=" + base + " " + channels);
                    break;
                }
                if (!work) {
                    Thread.yield();
                }
            }
            printer.line("CLOSING ch=" + base);
            long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            for (IntegrityChannel c : channels) {
                int left = c.state() == IntegrityChannel.State.DONE ? c.finish(end) : c.abandon(end);
                problems |= !c.problems.isEmpty();
                printer.line(report(c, left));
            }
        }
        for (IntegrityChannel c : channels) {
            c.freeMemory(true);
        }
        hellos.close();
        files.close();
        printer.line("DONE ch=" + base);
        System.exit(problems ? 2 : 0);
    }

    private static final String REPORTS = "reports=";

    /**
     * The argument that makes a peer also append its report lines to {@code file} (placed after {@code REGION_DIR}).
     * Read it with {@link Integrity.Lines#parse} once the peer has exited or been killed: unlike the peer's standard
     * output, read through a pipe by another thread, the file then holds every line the peer wrote.
     *
     * @param file where the lines go, a new file (the peer appends to it)
     * @return the argument
     */
    public static String reportFile(Path file) {
        return REPORTS + file;
    }

    private static String report(IntegrityChannel c, int unresolved) {
        StringBuilder b = new StringBuilder("REPORT ch=" + c.channel() + " state=" + c.state());
        if (c instanceof IntegritySender s) {
            b.append(" dir=S sent=").append(s.sent()).append(" app=").append(s.appAcked.size()).append(" sync=")
                    .append(s.syncAcked.size()).append(" flush=").append(s.flushAcked.size()).append(" failedOps=")
                    .append(s.failedOps);
        } else if (c instanceof IntegrityReceiver r) {
            b.append(" dir=R received=").append(r.received.size()).append(" end=").append(r.endCount)
                    .append(" duplicates=").append(r.duplicates).append(" failedReceives=").append(r.failedReceives);
        }
        b.append(" ops=").append(c.counts.totalOps()).append(" bytes=").append(c.counts.bytesVerified)
                .append(" problems=").append(c.problems.size()).append(" unresolved=").append(unresolved);
        if (c.failure() != null) {
            b.append(" failure=").append(c.failure().replace(' ', '_'));
        }
        return b.toString();
    }

    /** A file of {@code size} zero bytes, mapped shared: what the process writes outlives it. */
    static MemorySegment mapRegion(Path file, long size, Arena arena) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.truncate(0);
            ch.position(size - 1);
            ch.write(java.nio.ByteBuffer.wrap(new byte[1]));
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        }
    }
}
