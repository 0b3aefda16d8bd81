package io.github.ucxffm.bench.jucx;

import io.github.ucxffm.bench.perftest.Handshake;
import io.github.ucxffm.bench.perftest.PerfParams;
import io.github.ucxffm.bench.perftest.PerfReport;
import io.github.ucxffm.bench.perftest.PerfRunner;
import io.github.ucxffm.bench.perftest.PerfTestType;
import io.github.ucxffm.bench.perftest.PerfThreads;
import io.github.ucxffm.bench.perftest.SideChannel;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The same {@code ucx_perftest}-compatible runner as {@code io.github.ucxffm.bench.perftest.PerfTest}, on JUCX (the
 * JNI binding published by the UCX project, {@code org.openucx:jucx}): same options, same protocol between client
 * and server, same output, same test definitions, so that the three implementations can be compared test for test.
 * <p>
 * JUCX 1.15 has no atomic operations and no synchronous tag send in its API: {@code ucp_add}, {@code ucp_fadd},
 * {@code ucp_swap}, {@code ucp_cswap}, {@code tag_sync_lat} and {@code tag_sync_bw} are refused with a message.
 * Every other test runs. Operations are polled ({@code UcpRequest.isCompleted()} after
 * {@code UcpWorker.progress()}), without callbacks; JUCX allocates a {@code UcpRequest} per operation and a
 * {@code UcpAmData} per active message, which is part of what is measured. JDK memory access
 * ({@code MemorySegment}) is used only to read and fill the UCX-allocated buffers, never to call UCX.
 * <p>
 * {@code -T N} runs as in the ucx-ffm runner ({@link PerfThreads}): one context with workers shared between threads
 * ({@code UcpParams.setMtWorkersShared}, {@code ucx_perftest}'s {@code mt_workers_shared}), and on each platform
 * thread a worker, endpoint and buffers of its own, connected to the peer's thread of the same number; the client
 * prints {@code ucx_perftest}'s aggregate final row. A server must be given {@code -T N} itself.
 */
public final class JucxPerfTest extends PerfRunner {

    static final String RUNNER = "jucx perftest";
    /** The tests JUCX's API can run. */
    public static final Set<PerfTestType> SUPPORTED;

    static {
        Set<PerfTestType> s = EnumSet.allOf(PerfTestType.class);
        s.removeIf(t -> t.isUct() || t.operation().isAtomic() || t.operation() == PerfTestType.Operation.TAG_SYNC);
        SUPPORTED = Collections.unmodifiableSet(s);
    }

    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
    private static final long HANDSHAKE_TIMEOUT_NANOS = HANDSHAKE_TIMEOUT.toNanos();
    private static final VarHandle BYTE = JAVA_BYTE.varHandle();

    private final UcpContext context;
    /** Whether this runner closes the context: the first thread's does, the others share it. */
    private final boolean ownsContext;
    private final UcpWorker worker;
    private final UcpMemory controlMemory;
    private final long controlIn;
    private final long controlOut;
    private final byte[] controlBytes = new byte[Handshake.MAX_MESSAGE];
    private volatile String failure;

    private UcpEndpoint endpoint;
    private UcpMemory sendMemory;
    private UcpMemory recvMemory;
    private long send;
    private long recv;
    private MemorySegment sendView;
    private MemorySegment recvView;
    private UcpRemoteKey rkey;
    private long remote;
    private long size;
    private int window;
    private PerfTestType.Operation operation;

    private UcpRequest[] ring;
    private int ringMask;
    private int head;
    private int outstanding;

    private long amArrived;
    /** Active messages the loops have waited for; the handler's count may run ahead (see the ucx-ffm runner's pong). */
    private long amAwaited;
    private UcpRequest[] amReceives = new UcpRequest[64];
    private int amReceiveCount;
    private UcpAmData[] amKept = new UcpAmData[64];
    private int amKeptCount;
    private long sequence;
    /** Whether the context has the wakeup feature ({@code -E sleep} on this side's command line). */
    private final boolean sleepable;
    /** {@code -E sleep}: block in {@code ucp_worker_wait} when a progress call found nothing to do. */
    private boolean sleep;

    private JucxPerfTest(PrintStream out, PrintStream err, String transports, PerfParams command) {
        super(RUNNER, out, err);
        // The same features as the ucx-ffm runner, atomics included, so that UCX configures both alike.
        UcpParams p = new UcpParams().requestTagFeature().requestStreamFeature().requestAmFeature()
                .requestRmaFeature().requestAtomic32BitFeature().requestAtomic64BitFeature();
        if (command.sleep()) {
            p.requestWakeupFeature(); // -E sleep: ucp_worker_wait needs it, and the server's context is made first
        }
        if (command.threads() > 1) {
            p.setMtWorkersShared(true); // a worker per thread on one context, as ucx_perftest's mt_workers_shared
        }
        if (transports != null) {
            p.setConfig("TLS", transports);
        }
        this.context = new UcpContext(p);
        this.ownsContext = true;
        this.sleepable = command.sleep();
        this.worker = context.newWorker(new UcpWorkerParams());
        this.controlMemory = context.memoryMap(new UcpMemMapParams().allocate()
                .setLength(2L * Handshake.MAX_MESSAGE));
        this.controlIn = controlMemory.getAddress();
        this.controlOut = controlIn + Handshake.MAX_MESSAGE;
    }

    /** The runner of thread {@code thread} (from 1), made on that thread: a worker of its own on the shared context. */
    private JucxPerfTest(JucxPerfTest first, int thread) {
        super(first, thread);
        this.context = first.context;
        this.ownsContext = false;
        this.sleepable = first.sleepable;
        this.worker = context.newWorker(new UcpWorkerParams());
        this.controlMemory = context.memoryMap(new UcpMemMapParams().allocate()
                .setLength(2L * Handshake.MAX_MESSAGE));
        this.controlIn = controlMemory.getAddress();
        this.controlOut = controlIn + Handshake.MAX_MESSAGE;
    }

    /**
     * Runs the command line and exits with its status.
     *
     * @param args {@code ucx_perftest}-style options and an optional server host
     */
    public static void main(String[] args) {
        System.exit(run(System.out, System.err, args));
    }

    /**
     * Runs the command line.
     *
     * @param out  where the table goes
     * @param err  where messages go
     * @param args the arguments
     * @return the exit status: 0 on success, 1 on failure or bad usage
     */
    public static int run(PrintStream out, PrintStream err, String... args) {
        return PerfRunner.run(RUNNER, out, err, args, JucxPerfTest::checkSupported,
                "  JUCX 1.15 has no atomic operations and no synchronous tag send: ucp_add, ucp_fadd,\n"
                + "  ucp_swap, ucp_cswap, tag_sync_lat and tag_sync_bw do not run here.\n", JucxPerfTest::new);
    }

    private static void checkSupported(PerfParams p) {
        if (p.paired() > 0) {
            throw new UnsupportedOperationException("--paired is not supported by " + RUNNER + ": its C half runs on "
                    + "the worker and endpoint handles, which JUCX does not hand out");
        }
        PerfTestType test = p.test();
        if (test == null) {
            return;
        }
        if (test.isUct()) {
            throw new UnsupportedOperationException(test.testName() + " is a UCT test: JUCX binds UCP only (run it "
                    + "with ./ucx-ffm perftest)");
        }
        if (p.sleep() && test.operation().isOneSided()) {
            throw new UnsupportedOperationException("-E sleep is for tag, stream and active-message tests: a "
                    + "one-sided operation raises no event at its target, whose side would sleep for ever");
        }
        if (test.operation().isAtomic()) {
            throw new UnsupportedOperationException(test.testName() + " needs remote atomic operations, which JUCX "
                    + "1.15 does not offer (its UcpEndpoint has put, get, tag, stream and active messages only)");
        }
        if (!SUPPORTED.contains(test)) {
            throw new UnsupportedOperationException(test.testName() + " needs synchronous tag sends "
                    + "(ucp_tag_send_sync_nbx), which JUCX 1.15 does not offer");
        }
    }

    // ---- session ------------------------------------------------------------------------------------------------

    @Override
    protected void serve(PerfParams p) throws Exception {
        try (SideChannel side = SideChannel.awaitClient(p.port(), out)) {
            connectByAddress(side);
        }
        int n = receiveControl(true);
        Handshake.Request r = Handshake.parseRequest(controlBytes, n);
        if (r.sleep() && !sleepable) {
            throw new PerfParams.UsageException("the client asks for -E sleep: start the server with -E sleep too "
                    + "(its context needs UCP's wakeup feature, and it is made before the client connects)");
        }
        if (r.threads() > p.threads()) {
            throw new PerfParams.UsageException("the client asks for -T " + r.threads() + ": start the server with "
                    + "-T " + r.threads() + " too (its context must allow a worker per thread)");
        }
        params = p.withRequest(r);
        checkSupported(params);
        prepare();
        unpackPeerKey(r);
        int[] ports = new int[0];
        if (params.threads() > 1) {
            PerfParams all = params;
            ports = newThreads(params.threads()).startServers(t -> new JucxPerfTest(this, t),
                    (other, t) -> other.serveThread(all));
        }
        sendControl(Handshake.reply(packedKeyForClient(), recv, ports), true);
        PerfReport.printServerInfo(out, "JUCX 1.15 (JNI)", params.test(), params.size());
        runServer();
        if (threads != null) {
            threads.join();
        }
    }

    /** The session of a server thread after the first: as the first thread's, on the port it told the client. */
    private void serveThread(PerfParams p) throws Exception {
        try (SideChannel side = threads.awaitClient(thread)) {
            connectByAddress(side);
        }
        params = p;
        prepare();
        int n = receiveControl(true);
        unpackPeerKey(Handshake.parseRequest(controlBytes, n));
        sendControl(Handshake.reply(packedKeyForClient(), recv), true);
        runServer();
    }

    private void unpackPeerKey(Handshake.Request r) {
        if (r.rkey().length > 0) {
            rkey = endpoint.unpackRemoteKey(direct(r.rkey()));
            remote = r.address();
        }
    }

    private byte[] packedKeyForClient() {
        return params.test().operation().isOneSided() ? bytes(recvMemory.getRemoteKeyBuffer()) : new byte[0];
    }

    private PerfThreads<JucxPerfTest> newThreads(int count) {
        return startThreads(this, count, HANDSHAKE_TIMEOUT, JucxPerfTest::close);
    }

    @Override
    protected void client(PerfParams p) throws Exception {
        int[] ports = beginClient(connect(p, p.port()));
        if (p.threads() > 1) {
            newThreads(p.threads()).startClients(t -> new JucxPerfTest(this, t), (other, t) -> {
                other.connect(p, ports[t - 1]);
                other.runClientThread();
            });
        }
        runClient(report);
        printFinal();
        printRunNotes();
    }

    /**
     * Connects this thread's endpoint to the worker of the server's thread that listens on {@code port}, prepares the
     * test and exchanges the request and reply (with the remote key a one-sided test needs).
     */
    private Handshake.Reply connect(PerfParams p, int port) throws Exception {
        params = p;
        try (SideChannel side = SideChannel.connect(p.host(), port, HANDSHAKE_TIMEOUT, RUNNER + " server")) {
            connectByAddress(side);
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        prepare();
        byte[] packed = p.test() == PerfTestType.UCP_PUT_LAT ? bytes(recvMemory.getRemoteKeyBuffer()) : new byte[0];
        sendControl(Handshake.request(p, packed, recv), true);
        int n = receiveControl(true);
        Handshake.Reply reply = Handshake.parseReply(controlBytes, n);
        if (reply.rkey().length > 0) {
            rkey = endpoint.unpackRemoteKey(direct(reply.rkey()));
            remote = reply.address();
        }
        return reply;
    }

    /**
     * Swaps worker addresses with the peer over the side channel and connects the endpoint to the peer's worker, as
     * {@code ucx_perftest} and the ucx-ffm runner connect (see {@link SideChannel}).
     */
    private void connectByAddress(SideChannel side) throws IOException {
        byte[] peer = side.swap(bytes(worker.getAddress()), RUNNER);
        endpoint = worker.newEndpoint(new UcpEndpointParams().setUcpAddress(direct(peer))
                .setErrorHandler((ep, status, message) -> failure = message + " (status " + status + ")"));
    }

    private static ByteBuffer direct(byte[] bytes) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes.length);
        b.put(bytes).flip();
        return b;
    }

    private static byte[] bytes(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    private void prepare() {
        size = params.size();
        window = params.effectiveWindow();
        operation = params.test().operation();
        sleep = params.sleep();
        long length = Math.max(size, 64);
        sendMemory = context.memoryMap(new UcpMemMapParams().allocate().setLength(length));
        recvMemory = context.memoryMap(new UcpMemMapParams().allocate().setLength(length));
        send = sendMemory.getAddress();
        recv = recvMemory.getAddress();
        sendView = MemorySegment.ofAddress(send).reinterpret(length);
        recvView = MemorySegment.ofAddress(recv).reinterpret(length);
        sendView.fill((byte) 0x5A);
        recvView.fill((byte) 0xFF); // the put ping-pong's sequence starts at 0
        int capacity = Integer.highestOneBit(Math.max(window, 2) * 2 - 1);
        ring = new UcpRequest[capacity];
        ringMask = capacity - 1;
        if (operation == PerfTestType.Operation.AM) {
            worker.setAmRecvHandler(Handshake.AM_ID, this::onActiveMessage,
                    UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
        }
    }

    // ---- control messages -----------------------------------------------------------------------------------------

    private void sendControl(byte[] message, boolean bounded) throws Exception {
        MemorySegment.copy(message, 0, MemorySegment.ofAddress(controlOut).reinterpret(Handshake.MAX_MESSAGE),
                JAVA_BYTE, 0, message.length);
        awaitControl(endpoint.sendTaggedNonBlocking(controlOut, message.length, Handshake.CONTROL_TAG, null),
                bounded, "sending a control message");
    }

    private int receiveControl(boolean bounded) throws Exception {
        UcpRequest r = worker.recvTaggedNonBlocking(controlIn, Handshake.MAX_MESSAGE, Handshake.CONTROL_TAG, -1L,
                null);
        awaitControl(r, bounded, "waiting for the peer's control message");
        return copyControl(r);
    }

    private int copyControl(UcpRequest r) {
        int n = (int) r.getRecvSize();
        if (n == 0) {
            // JUCX 1.15 on UCX 1.13 reports 0 bytes for a receive that matched a message which had already arrived:
            // it reads the length from recv_info, which UCX 1.13 leaves unwritten when a receive completes at once.
            // Control messages are self-delimiting, so the whole buffer is handed to the parser then.
            n = Handshake.MAX_MESSAGE;
        }
        MemorySegment.copy(MemorySegment.ofAddress(controlIn).reinterpret(Handshake.MAX_MESSAGE), JAVA_BYTE, 0,
                controlBytes, 0, n);
        return n;
    }

    private void awaitControl(UcpRequest r, boolean bounded, String what) throws Exception {
        long deadline = System.nanoTime() + HANDSHAKE_TIMEOUT_NANOS;
        boolean quiet = waitsQuietly();
        while (!r.isCompleted()) {
            if (worker.progress() == 0) {
                if (sleep && !bounded) {
                    worker.waitForEvents();
                } else if (quiet) {
                    LockSupport.parkNanos(QUIET_PARK_NANOS);
                }
                String f = failure;
                if (f != null) {
                    throw new IllegalStateException("the connection failed while " + what + ": " + f);
                }
                if (bounded && System.nanoTime() - deadline > 0) {
                    worker.cancelRequest(r);
                    throw new IllegalStateException("no answer within " + HANDSHAKE_TIMEOUT_NANOS / 1_000_000_000L
                            + " s while " + what + (params == null || params.isServer() ? ""
                            : " (is a " + RUNNER + " server listening on " + params.host() + ":" + params.port()
                            + "?)"));
                }
            }
        }
        check(r);
    }

    private static void check(UcpRequest r) {
        int status = r.getStatus();
        if (status != UcsConstants.STATUS.UCS_OK) {
            throw new IllegalStateException("a UCX operation failed with status " + status);
        }
    }

    @Override
    protected int barrier(int sequenceNumber, int value, boolean server) throws Exception {
        byte[] message = Handshake.barrier(sequenceNumber, value);
        if (server) {
            int n = receiveControl(false);
            int peer = Handshake.checkBarrier(controlBytes, n, sequenceNumber);
            sendControl(message, false);
            return peer;
        }
        UcpRequest in = worker.recvTaggedNonBlocking(controlIn, Handshake.MAX_MESSAGE, Handshake.CONTROL_TAG,
                -1L, null);
        sendControl(message, false);
        awaitControl(in, false, "waiting for the server at a barrier");
        return Handshake.checkBarrier(controlBytes, copyControl(in), sequenceNumber);
    }

    // ---- runs -----------------------------------------------------------------------------------------------------

    @Override
    protected void ping() throws Exception {
        switch (operation) {
            // the answer's receive is posted once the send completed, as in ucx_perftest and the ucx-ffm runner
            case TAG -> {
                await(sendTag());
                await(worker.recvTaggedNonBlocking(recv, size, Handshake.DATA_TAG, -1L, null));
            }
            case STREAM -> {
                await(endpoint.sendStreamNonBlocking(send, size, null));
                await(endpoint.recvStreamNonBlocking(recv, size, UcpConstants.UCP_STREAM_RECV_FLAG_WAITALL, null));
            }
            case AM -> {
                await(endpoint.sendAmNonBlocking(Handshake.AM_ID, 0, 0, send, size, 0, null));
                awaitActiveMessages(++amAwaited);
            }
            case PUT -> {
                byte sn = (byte) sequence++;
                putSequence(sn);
                awaitByte(sn);
            }
            default -> throw new IllegalStateException(operation + " is not a ping-pong");
        }
    }

    @Override
    protected void pong() throws Exception {
        switch (operation) {
            case TAG -> {
                await(worker.recvTaggedNonBlocking(recv, size, Handshake.DATA_TAG, -1L, null));
                await(sendTag());
            }
            case STREAM -> {
                await(endpoint.recvStreamNonBlocking(recv, size, UcpConstants.UCP_STREAM_RECV_FLAG_WAITALL, null));
                await(endpoint.sendStreamNonBlocking(send, size, null));
            }
            case AM -> {
                // the client's next message may arrive while this answer is being sent (UCX 1.23 over tcp)
                awaitActiveMessages(++amAwaited);
                await(endpoint.sendAmNonBlocking(Handshake.AM_ID, 0, 0, send, size, 0, null));
            }
            case PUT -> {
                byte sn = (byte) sequence++;
                awaitByte(sn);
                putSequence(sn);
            }
            default -> throw new IllegalStateException(operation + " is not a ping-pong");
        }
    }

    private UcpRequest sendTag() {
        return endpoint.sendTaggedNonBlocking(send, size, Handshake.DATA_TAG, null);
    }

    private void putSequence(byte sn) throws Exception {
        waitBelow(1);
        sendView.set(JAVA_BYTE, size - 1, sn);
        push(endpoint.putNonBlocking(send, size, remote, rkey, null));
    }

    private void awaitByte(byte sn) throws Exception {
        long last = size - 1;
        while ((byte) BYTE.getVolatile(recvView, last) != sn) {
            worker.progress();
        }
    }

    @Override
    protected void issue(long i) throws Exception {
        waitBelow(window);
        push(start());
    }

    @Override
    protected void flush() throws Exception {
        await(endpoint.flushNonBlocking(null));
    }

    private UcpRequest start() {
        return switch (operation) {
            case TAG -> sendTag();
            case STREAM -> endpoint.sendStreamNonBlocking(send, size, null);
            case AM -> endpoint.sendAmNonBlocking(Handshake.AM_ID, 0, 0, send, size, 0, null);
            case PUT -> endpoint.putNonBlocking(send, size, remote, rkey, null);
            case GET -> endpoint.getNonBlocking(remote, rkey, recv, size, null);
            default -> throw new IllegalStateException(operation + " is not supported by JUCX");
        };
    }

    @Override
    protected void sink(long iterations) throws Exception {
        switch (operation) {
            case TAG -> {
                for (long i = 0; i < iterations; i++) {
                    waitBelow(window);
                    push(worker.recvTaggedNonBlocking(recv, size, Handshake.DATA_TAG, -1L, null));
                }
                drain();
            }
            case STREAM -> {
                for (long i = 0; i < iterations; i++) {
                    waitBelow(window);
                    push(endpoint.recvStreamNonBlocking(recv, size, UcpConstants.UCP_STREAM_RECV_FLAG_WAITALL, null));
                }
                drain();
            }
            case AM -> {
                amAwaited += iterations;
                awaitActiveMessages(amAwaited);
            }
            default -> {
                // one-sided: the barrier that follows progresses the worker until the client is done
            }
        }
    }

    private void await(UcpRequest r) throws Exception {
        while (!r.isCompleted()) {
            progressOrSleep();
        }
        check(r);
    }

    /** One progress call; with {@code -E sleep}, followed by {@code ucp_worker_wait} when it found nothing to do. */
    private void progressOrSleep() throws Exception {
        if (worker.progress() == 0 && sleep) {
            worker.waitForEvents();
        }
    }

    private void push(UcpRequest r) {
        ring[(head + outstanding) & ringMask] = r;
        outstanding++;
    }

    private void waitBelow(int limit) throws Exception {
        while (outstanding >= limit) {
            UcpRequest r = ring[head];
            if (r.isCompleted()) {
                check(r);
                ring[head] = null;
                head = (head + 1) & ringMask;
                outstanding--;
            } else {
                progressOrSleep();
            }
        }
    }

    @Override
    protected void drain() throws Exception {
        waitBelow(1);
    }

    private int onActiveMessage(long headerAddress, long headerSize, UcpAmData data, UcpEndpoint replyEp) {
        amArrived++;
        if (!data.isDataValid()) {
            // Rendezvous: kept, and fetched into the receive buffer from the waiting loop, as the ucx-ffm runner
            // does. Fetches started inside this callback stalled for seconds during development (4 of 5 runs of
            // ucp_am_lat -s 65536 -n 2000 timed out on a loaded machine; from the loop, none did).
            if (amKeptCount == amKept.length) {
                amKept = Arrays.copyOf(amKept, amKept.length * 2);
            }
            amKept[amKeptCount++] = data;
            return UcsConstants.STATUS.UCS_INPROGRESS;
        }
        return UcsConstants.STATUS.UCS_OK;
    }

    private void awaitActiveMessages(long expected) throws Exception {
        while (amArrived < expected || amReceiveCount > 0 || amKeptCount > 0) {
            progressOrSleep();
            for (int i = 0; i < amKeptCount; i++) {
                if (amReceiveCount == amReceives.length) {
                    amReceives = Arrays.copyOf(amReceives, amReceives.length * 2);
                }
                amReceives[amReceiveCount++] = amKept[i].receive(recv, null);
                amKept[i] = null;
            }
            amKeptCount = 0;
            int kept = 0;
            for (int i = 0; i < amReceiveCount; i++) {
                UcpRequest r = amReceives[i];
                if (r.isCompleted()) {
                    check(r);
                } else {
                    amReceives[kept++] = r;
                }
            }
            for (int i = kept; i < amReceiveCount; i++) {
                amReceives[i] = null;
            }
            amReceiveCount = kept;
        }
    }

    @Override
    public void close() {
        try {
            if (rkey != null) {
                rkey.close();
            }
            if (endpoint != null) {
                UcpRequest closing = endpoint.closeNonBlockingFlush();
                long deadline = System.nanoTime() + 2_000_000_000L;
                while (!closing.isCompleted() && System.nanoTime() - deadline < 0) {
                    worker.progress();
                }
            }
        } catch (Exception e) {
            err.println(RUNNER + ": closing the endpoint: " + e.getMessage());
        } finally {
            // memory before the context: UCX asserts on registered regions still in use at cleanup
            for (UcpMemory m : new UcpMemory[] {sendMemory, recvMemory, controlMemory}) {
                if (m != null) {
                    m.deregister();
                }
            }
            worker.close();
            if (ownsContext) {
                context.close();
            }
        }
    }
}
