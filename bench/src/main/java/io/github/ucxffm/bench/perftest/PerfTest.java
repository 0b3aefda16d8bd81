package io.github.ucxffm.bench.perftest;

import io.github.ucxffm.UcpAmData;
import io.github.ucxffm.UcpAmMessage;
import io.github.ucxffm.UcpAtomicOp;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpMemory;
import io.github.ucxffm.UcpRemoteKey;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A {@code ucx_perftest}-compatible runner on ucx-ffm: {@code ./ucx-ffm perftest [OPTIONS] [HOST]}. Without a host
 * it is the server: it listens on {@code -p}, accepts one client, learns the test from the client's first message,
 * runs it and exits. With a host it is the client: it connects, sends the test parameters, runs the test and prints
 * the table and the {@code Final:} line in {@code ucx_perftest}'s columns and units ({@link PerfReport}). As in
 * {@code ucx_perftest}, the two connect a plain TCP socket first, swap their worker addresses over it and connect
 * their UCP endpoints by address ({@link SideChannel}); so no transport is added to {@code -x} or {@code UCX_TLS}.
 * <p>
 * Each test follows {@code ucx_perftest}'s definition ({@link PerfTestType}): latency tests are ping-pongs whose
 * reported latency is half the round trip; bandwidth tests keep a window of outstanding operations ({@code -O});
 * {@code ucp_put_lat} is a ping-pong through memory, each side putting its buffer into the peer's with a sequence
 * number in the last byte and waiting for the peer's put to change its own last byte. Warm-up runs first, then a
 * barrier, the measured run and a closing barrier, all on the UCX connection (control messages are tag messages;
 * {@link Handshake}).
 * <p>
 * Both sides create the context with every feature the tests use (tag, stream, active messages, RMA, 32- and 64-bit
 * atomics), since the server must listen before it knows the test; endpoints have no peer error handling
 * ({@code UCP_ERR_HANDLING_MODE_NONE}, as in {@code ucx_perftest}, which also lets UCX 1.13 use shared memory).
 * Message buffers and the remotely accessed region are allocated and registered by UCX, as {@code ucx_perftest}'s
 * are. The runner's own loops allocate nothing; what the library allocates during the measured loop is printed after
 * the {@code Final:} line (a kept rendezvous active message is an object; the other paths allocate nothing).
 * <p>
 * {@code -E sleep} waits as {@code ucx_perftest -E sleep} does: a progress call that found nothing to do is followed by
 * {@link UcpWorker#waitForEvents()} ({@code ucp_worker_wait}). {@code -T N} runs a worker and endpoint per platform
 * thread on one context with shared workers, each connected to the peer's thread of the same number (the server's
 * first thread tells the client the ports its other threads listen on), and prints {@code ucx_perftest}'s aggregate
 * final row. A server must be given {@code -E sleep} and {@code -T N} itself, since its context is made before the
 * client connects.
 */
public final class PerfTest extends PerfRunner {

    static final String RUNNER = "ucx-ffm perftest";
    /**
     * Whether the runner's endpoints get an error callback: not by default, as {@code ucx_perftest}'s have none,
     * which lets the workers make critical calls in tests that register no active-message handler; the system
     * property {@code ucxffm.perftest.errorCallback=true} gives them one, to measure what the critical calls buy.
     */
    static final boolean ERROR_CALLBACK = Boolean.getBoolean("ucxffm.perftest.errorCallback");
    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
    private static final VarHandle BYTE = JAVA_BYTE.varHandle();

    private final UcpContext context;
    /** Whether this runner closes the context: the first thread's does, the others share it. */
    private final boolean ownsContext;
    private final UcpWorker worker;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment controlIn;
    private final MemorySegment controlOut;
    private final byte[] controlBytes = new byte[Handshake.MAX_MESSAGE];

    private UcpEndpoint endpoint;
    private UcpMemory sendMemory;
    private UcpMemory recvMemory;
    private MemorySegment send;
    private MemorySegment recv;
    private UcpRemoteKey rkey;
    private long remote;
    private int size;
    private int window;
    private PerfTestType.Operation operation;
    private MemorySegment operand;
    private MemorySegment[] results;

    /** Outstanding operations, oldest first; a power-of-two ring. */
    private long[] ring;
    private int ringMask;
    private int head;
    private int outstanding;

    /** Active messages the handler has seen, rendezvous data it kept, and fetches started and not yet complete. */
    private long amArrived;
    /**
     * Active messages the loops have waited for so far. The handler's count may run ahead of it: a ping-pong's
     * next message can arrive while the answer to the previous one is still being sent (see {@link #pong()}), so
     * the message a loop waits for is numbered from this count, never from {@link #amArrived}.
     */
    private long amAwaited;
    private long[] amReceives = new long[64];
    private int amReceiveCount;
    private UcpAmData[] amKept = new UcpAmData[64];
    private int amKeptCount;

    /** Ping-pong sequence number for the put test, shared by warm-up and the measured run on both sides. */
    private long sequence;
    /** {@code -E sleep}: when a progress call finds nothing to do, block in {@code ucp_worker_wait}. */
    private boolean sleep;
    /** Whether the context has the wakeup feature ({@code -E sleep} on this side's command line). */
    private final boolean sleepable;
    /** The C loop of a paired run, made when the test is prepared (before the peer can send). */
    private NativePairedLoop nativeLoop;
    /** The plain FFM loop of a paired run, made with the C loop. */
    private FfmPairedLoop ffmLoop;

    /**
     * The runner of a process: creates the context, with the wakeup feature for {@code -E sleep} and workers shared
     * between threads for {@code -T} (a server learns the test later, so its own command line says what its
     * context must allow), and the first thread's worker.
     */
    private PerfTest(PrintStream out, PrintStream err, String transports, PerfParams command) {
        super(RUNNER, out, err);
        UcpContext.Builder b = UcpContext.builder().name("ucx-ffm perftest").features(UcpContext.Feature.TAG,
                UcpContext.Feature.STREAM, UcpContext.Feature.AM, UcpContext.Feature.RMA, UcpContext.Feature.AMO32,
                UcpContext.Feature.AMO64);
        if (command.sleep()) {
            b.features(UcpContext.Feature.WAKEUP);
        }
        if (command.threads() > 1) {
            b.sharedWorkers(true); // a worker per thread on one context, as ucx_perftest's mt_workers_shared
        }
        if (transports != null) {
            b.config("TLS", transports);
        }
        this.context = b.build();
        this.sleepable = command.sleep();
        this.ownsContext = true;
        try {
            this.worker = context.newWorker();
            this.controlIn = arena.allocate(Handshake.MAX_MESSAGE, 8);
            this.controlOut = arena.allocate(Handshake.MAX_MESSAGE, 8);
        } catch (RuntimeException e) {
            context.close();
            arena.close();
            throw e;
        }
    }

    /** The runner of thread {@code thread} (from 1), made on that thread: a worker of its own on the shared context. */
    private PerfTest(PerfTest first, int thread) {
        super(first, thread);
        this.context = first.context;
        this.sleepable = first.sleepable;
        this.ownsContext = false;
        this.worker = context.newWorker();
        this.controlIn = arena.allocate(Handshake.MAX_MESSAGE, 8);
        this.controlOut = arena.allocate(Handshake.MAX_MESSAGE, 8);
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
        // the UCT tests (-t am_lat..., or a server given -d) run on the raw UCT bindings, the others on UCP
        return PerfRunner.run(RUNNER, out, err, args, PerfTest::check, "",
                wantsUct(args) ? UctPerfTest::create : PerfTest::new);
    }

    /** What this runner cannot run: a one-sided test sleeping (a put or get raises no event on its target). */
    static void check(PerfParams p) {
        if (p.paired() > 0) {
            NativePairedLoop.library();
        }
        if (p.sleep() && p.test() != null && p.test().operation().isOneSided()) {
            throw new UnsupportedOperationException("-E sleep is for tag, stream and active-message tests: a "
                    + "one-sided operation raises no event at its target, whose side would sleep for ever");
        }
    }

    private static boolean wantsUct(String... args) {
        try {
            return PerfParams.parse(RUNNER, args).isUct();
        } catch (RuntimeException e) {
            return false; // PerfRunner.run parses again and reports the error
        }
    }

    // ---- session ------------------------------------------------------------------------------------------------

    @Override
    protected void serve(PerfParams p) throws Exception {
        try (SideChannel side = SideChannel.awaitClient(p.port(), out)) {
            connectByAddress(side);
        }
        int n = receiveControl(HANDSHAKE_TIMEOUT);
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
        check(params);
        prepare();
        if (r.rkey().length > 0) {
            rkey = endpoint.unpackRemoteKey(r.rkey());
            remote = rkey.base();
        }
        int[] ports = new int[0];
        if (params.threads() > 1) {
            PerfParams all = params;
            ports = newThreads(params.threads()).startServers(t -> new PerfTest(this, t),
                    (other, t) -> other.serveThread(all));
        }
        byte[] packed = params.test().operation().isOneSided() ? recvMemory.packRemoteKey() : new byte[0];
        sendControl(Handshake.reply(packed, recvMemory.address(), ports), HANDSHAKE_TIMEOUT);
        PerfReport.printServerInfo(out, "ucx-ffm (Java FFM API)", params.test(), params.size());
        runServer();
        if (threads != null) {
            threads.join();
        }
        err.println(RUNNER + ": transports: " + String.join(",", endpoint.transports()));
    }

    /**
     * The session of a server thread after the first: listen on a port the system chooses, which the first thread
     * tells the client; then serve the client's thread of the same number as the first thread serves the first.
     */
    private void serveThread(PerfParams p) throws Exception {
        try (SideChannel side = threads.awaitClient(thread)) {
            connectByAddress(side);
        }
        params = p;
        prepare();
        int n = receiveControl(HANDSHAKE_TIMEOUT);
        Handshake.Request r = Handshake.parseRequest(controlBytes, n);
        if (r.rkey().length > 0) {
            rkey = endpoint.unpackRemoteKey(r.rkey());
            remote = rkey.base();
        }
        byte[] packed = params.test().operation().isOneSided() ? recvMemory.packRemoteKey() : new byte[0];
        sendControl(Handshake.reply(packed, recvMemory.address()), HANDSHAKE_TIMEOUT);
        runServer();
    }

    /**
     * Swaps worker addresses with the peer over the side channel and connects this thread's endpoint to the peer's
     * worker, as {@code ucx_perftest} connects (see {@link SideChannel} for why not through UCX's listener). As in
     * {@code ucx_perftest}, no peer error handling and no error callback, so that nothing can call back into Java
     * during the measured calls and the worker makes them critical (UcpWorker, "Critical calls"); see
     * {@link #ERROR_CALLBACK}.
     */
    private void connectByAddress(SideChannel side) throws IOException {
        byte[] peer = side.swap(worker.address(), RUNNER);
        endpoint = worker.connect(UcpEndpoint.Params.worker(peer).peerErrorHandling(false)
                .errorCallback(ERROR_CALLBACK));
    }

    @Override
    protected void client(PerfParams p) throws Exception {
        int[] ports = beginClient(connect(p, p.port()));
        if (p.threads() > 1) {
            newThreads(p.threads()).startClients(t -> new PerfTest(this, t), (other, t) -> {
                other.connect(p, ports[t - 1]);
                other.runClientThread();
            });
        }
        runClient(report);
        printFinal();
        if (pairedBlocks() != null) {
            out.println(pairedBlocks().line("ucx-ffm"));
            out.println(pairedBlocks().ffmLine("ucx-ffm"));
            out.flush();
        }
        printRunNotes();
        err.println(RUNNER + ": transports: " + String.join(",", endpoint.transports()));
    }

    /**
     * Connects this thread's endpoint to the worker of the server's thread that listens on {@code port} (by the
     * address swapped over the side channel), prepares the test and exchanges the request and reply (with the remote
     * key a one-sided test needs).
     */
    private Handshake.Reply connect(PerfParams p, int port) {
        params = p;
        try (SideChannel side = SideChannel.connect(p.host(), port, HANDSHAKE_TIMEOUT, RUNNER + " server")) {
            connectByAddress(side);
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        prepare();
        boolean putLat = p.test() == PerfTestType.UCP_PUT_LAT;
        byte[] packed = putLat ? recvMemory.packRemoteKey() : new byte[0];
        sendControl(Handshake.request(p, packed, recvMemory.address()), HANDSHAKE_TIMEOUT);
        int n = receiveControl(HANDSHAKE_TIMEOUT);
        Handshake.Reply reply = Handshake.parseReply(controlBytes, n);
        if (reply.rkey().length > 0) {
            rkey = endpoint.unpackRemoteKey(reply.rkey());
            remote = rkey.base();
        }
        return reply;
    }

    private PerfThreads<PerfTest> newThreads(int count) {
        return startThreads(this, count, HANDSHAKE_TIMEOUT, PerfTest::closeThread);
    }

    /** Allocates the buffers and the state of the test in {@link #params}. */
    private void prepare() {
        PerfParams p = params;
        size = (int) p.size();
        window = p.effectiveWindow();
        operation = p.test().operation();
        sleep = p.sleep();
        long length = Math.max(size, 64);
        sendMemory = context.allocate(length);
        recvMemory = context.allocate(length);
        send = sendMemory.segment();
        recv = recvMemory.segment();
        send.fill((byte) 0x5A);
        recv.fill((byte) 0xFF); // the put ping-pong's sequence starts at 0: the last byte must differ from it
        int capacity = Integer.highestOneBit(Math.max(window, 2) * 2 - 1);
        ring = new long[capacity];
        ringMask = capacity - 1;
        if (operation.isAtomic()) {
            operand = arena.allocate(size, size);
            results = new MemorySegment[window];
            MemorySegment all = arena.allocate((long) size * window, size);
            for (int i = 0; i < window; i++) {
                results[i] = all.asSlice((long) i * size, size);
            }
            if (size == 8) {
                operand.set(JAVA_LONG, 0, operation == PerfTestType.Operation.CSWAP ? 0 : 1);
            } else {
                operand.set(JAVA_INT, 0, operation == PerfTestType.Operation.CSWAP ? 0 : 1);
            }
        }
        if (operation == PerfTestType.Operation.AM) {
            worker.setAmHandler(Handshake.AM_ID, this::onActiveMessage);
        }
        if (params.paired() > 0) {
            // both loops now, before the peer can send: their active-message handlers must be in place first
            nativeLoop();
            ffmLoop();
        }
    }

    // ---- control messages -----------------------------------------------------------------------------------------

    private void sendControl(byte[] message, Duration timeout) {
        MemorySegment.copy(message, 0, controlOut, JAVA_BYTE, 0, message.length);
        awaitControl(endpoint.sendTag(controlOut, 0, message.length, Handshake.CONTROL_TAG), timeout,
                "sending a control message");
    }

    private int receiveControl(Duration timeout) {
        long token = worker.receiveTag(controlIn, 0, Handshake.MAX_MESSAGE, Handshake.CONTROL_TAG, -1L);
        awaitControl(token, timeout, "waiting for the peer's control message");
        int n = (int) worker.receivedLength();
        MemorySegment.copy(controlIn, JAVA_BYTE, 0, controlBytes, 0, n);
        return n;
    }

    /** Polls a control operation; the endpoint has no error callback, so a failed connection shows up here. */
    private boolean polled(long token, String what) {
        try {
            return worker.poll(token);
        } catch (UcxException e) {
            throw new IllegalStateException("the connection failed while " + what, e);
        }
    }

    private void awaitControl(long token, Duration timeout, String what) {
        long deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
        boolean quiet = waitsQuietly();
        while (!polled(token, what)) {
            if (worker.progress() != 0) {
                continue;
            }
            if (timeout != null && System.nanoTime() - deadline > 0) {
                worker.cancel(token);
                throw new IllegalStateException("no answer within " + timeout.toSeconds() + " s while " + what
                        + (params.isServer() ? "" : " (is a " + RUNNER + " server listening on " + params.host()
                        + ":" + params.port() + "?)"));
            }
            if (sleep && timeout == null) {
                worker.waitForEvents();
            } else if (quiet) {
                LockSupport.parkNanos(QUIET_PARK_NANOS);
            }
        }
    }

    @Override
    protected int barrier(int sequenceNumber, int value, boolean server) {
        byte[] message = Handshake.barrier(sequenceNumber, value);
        if (server) {
            int n = receiveControl(null);
            int peer = Handshake.checkBarrier(controlBytes, n, sequenceNumber);
            sendControl(message, null);
            return peer;
        }
        long in = worker.receiveTag(controlIn, 0, Handshake.MAX_MESSAGE, Handshake.CONTROL_TAG, -1L);
        sendControl(message, null);
        awaitControl(in, null, "waiting for the server at a barrier");
        int n = (int) worker.receivedLength();
        MemorySegment.copy(controlIn, JAVA_BYTE, 0, controlBytes, 0, n);
        return Handshake.checkBarrier(controlBytes, n, sequenceNumber);
    }

    // ---- runs -----------------------------------------------------------------------------------------------------

    @Override
    protected void ping() {
        switch (operation) {
            // as in ucx_perftest, the answer's receive is posted once the send completed: posting it first would
            // put its cost between the arrival of the previous answer and this send
            case TAG, TAG_SYNC -> {
                await(sendTag());
                await(worker.receiveTag(recv, 0, size, Handshake.DATA_TAG, -1L));
            }
            case STREAM -> {
                await(endpoint.sendStream(send, 0, size));
                await(endpoint.receiveStream(recv, 0, size, true));
            }
            case AM -> {
                await(endpoint.sendAm(Handshake.AM_ID, null, send, 0, size, 0));
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
    protected void pong() {
        switch (operation) {
            case TAG, TAG_SYNC -> {
                await(worker.receiveTag(recv, 0, size, Handshake.DATA_TAG, -1L));
                await(sendTag());
            }
            case STREAM -> {
                await(endpoint.receiveStream(recv, 0, size, true));
                await(endpoint.sendStream(send, 0, size));
            }
            case AM -> {
                // The client's next message may arrive while this answer is still being sent, and the handler
                // then counts it during the await below: UCX 1.23 writes a rendezvous over tcp/lo and tcp/eth0
                // (uct put), the client's receive completes when the data and a note have come on each lane, this
                // send only when the client's tcp transport has acknowledged the puts, and the client's next
                // message, sent at once, can overtake that acknowledgement.
                awaitActiveMessages(++amAwaited);
                await(endpoint.sendAm(Handshake.AM_ID, null, send, 0, size, 0));
            }
            case PUT -> {
                byte sn = (byte) sequence++;
                awaitByte(sn);
                putSequence(sn);
            }
            default -> throw new IllegalStateException(operation + " is not a ping-pong");
        }
    }

    @Override
    protected void nativePing(int n, long[] stamps) {
        nativeLoop().ping(n, stamps);
    }

    @Override
    protected void nativePong(int n) {
        nativeLoop().pong(n);
    }

    @Override
    protected void ffmPing(int n, long[] stamps) {
        ffmLoop().ping(n, stamps);
    }

    @Override
    protected void ffmPong(int n) {
        ffmLoop().pong(n);
    }

    private FfmPairedLoop ffmLoop() {
        if (ffmLoop == null) {
            // critical operations and progress as the binding makes them here: nothing calls back without an
            // error callback and an active-message handler
            boolean am = operation == PerfTestType.Operation.AM;
            ffmLoop = new FfmPairedLoop(worker.nativeHandle(), endpoint.nativeHandle(), operation, send, recv, size,
                    am ? Handshake.AM_ID + 2 : Handshake.DATA_TAG, !ERROR_CALLBACK && !am, arena);
        }
        return ffmLoop;
    }

    private NativePairedLoop nativeLoop() {
        if (nativeLoop == null) {
            nativeLoop = new NativePairedLoop(worker.nativeHandle(), endpoint.nativeHandle(), operation, send, recv,
                    size, operation == PerfTestType.Operation.AM ? Handshake.AM_ID + 1 : Handshake.DATA_TAG,
                    params.paired(), arena);
        }
        return nativeLoop;
    }

    private long sendTag() {
        return operation == PerfTestType.Operation.TAG_SYNC ? endpoint.sendTagSync(send, 0, size, Handshake.DATA_TAG)
                : endpoint.sendTag(send, 0, size, Handshake.DATA_TAG);
    }

    /** Puts the send buffer, its last byte set to {@code sn}, into the peer's buffer; one put in flight at most. */
    private void putSequence(byte sn) {
        waitBelow(1);
        send.set(JAVA_BYTE, size - 1, sn);
        push(endpoint.put(send, 0, size, remote, rkey));
    }

    /** Progresses until the peer's put has set the last byte of the receive buffer to {@code sn}. */
    private void awaitByte(byte sn) {
        long last = size - 1;
        while ((byte) BYTE.getVolatile(recv, last) != sn) {
            worker.progress();
        }
    }

    // ---- one-way streams of operations ----------------------------------------------------------------------------

    @Override
    protected void issue(long i) {
        waitBelow(window);
        push(start(i));
    }

    @Override
    protected void flush() {
        await(endpoint.flush());
    }

    /** Starts the client's operation number {@code i}; returns its token. */
    private long start(long i) {
        return switch (operation) {
            case TAG, TAG_SYNC -> sendTag();
            case STREAM -> endpoint.sendStream(send, 0, size);
            case AM -> endpoint.sendAm(Handshake.AM_ID, null, send, 0, size, 0);
            case PUT -> endpoint.put(send, 0, size, remote, rkey);
            case GET -> endpoint.get(recv, 0, size, remote, rkey);
            case ADD -> endpoint.atomic(UcpAtomicOp.ADD, operand, null, remote, rkey);
            case FADD -> endpoint.atomic(UcpAtomicOp.ADD, operand, results[(int) (i % window)], remote, rkey);
            case SWAP -> endpoint.atomic(UcpAtomicOp.SWAP, operand, results[(int) (i % window)], remote, rkey);
            case CSWAP -> {
                // the result buffer holds the value to swap in; the operand, 0, is the value expected
                MemorySegment result = results[(int) (i % window)];
                if (size == 8) {
                    result.set(JAVA_LONG, 0, i);
                } else {
                    result.set(JAVA_INT, 0, (int) i);
                }
                yield endpoint.atomic(UcpAtomicOp.CSWAP, operand, result, remote, rkey);
            }
        };
    }

    @Override
    protected void sink(long iterations) {
        switch (operation) {
            case TAG, TAG_SYNC -> {
                for (long i = 0; i < iterations; i++) {
                    waitBelow(window);
                    push(worker.receiveTag(recv, 0, size, Handshake.DATA_TAG, -1L));
                }
                drain();
            }
            case STREAM -> {
                for (long i = 0; i < iterations; i++) {
                    waitBelow(window);
                    push(endpoint.receiveStream(recv, 0, size, true));
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

    // ---- completion -----------------------------------------------------------------------------------------------

    private void await(long token) {
        while (!worker.poll(token)) {
            progressOrSleep();
        }
    }

    /**
     * One progress call; with {@code -E sleep}, as {@code ucx_perftest} does it, a call that found nothing to do is
     * followed by {@code ucp_worker_wait}, which arms the worker's event fd and blocks until there are events (or
     * returns at once when arming finds some).
     */
    private void progressOrSleep() {
        if (worker.progress() == 0 && sleep) {
            worker.waitForEvents();
        }
    }

    /** Adds an operation to the window; {@link UcpWorker#COMPLETED} ones too, so that the window stays in order. */
    private void push(long token) {
        ring[(head + outstanding) & ringMask] = token;
        outstanding++;
    }

    /** Completes the oldest operations until fewer than {@code limit} are outstanding. */
    private void waitBelow(int limit) {
        while (outstanding >= limit) {
            if (worker.poll(ring[head])) {
                head = (head + 1) & ringMask;
                outstanding--;
            } else {
                progressOrSleep();
            }
        }
    }

    @Override
    protected void drain() {
        waitBelow(1);
    }

    // ---- active messages ------------------------------------------------------------------------------------------

    /**
     * Counts each message; keeps a rendezvous message's data, which {@link #awaitActiveMessages} fetches into the
     * receive buffer. The fetch starts from the waiting loop rather than inside the handler, the same in the JUCX
     * runner, where fetches started inside its callback stalled for seconds during development (cause not pinned
     * down; the machine was loaded).
     */
    private void onActiveMessage(UcpAmMessage message) {
        if (message.isRendezvous()) {
            if (amKeptCount == amKept.length) {
                amKept = Arrays.copyOf(amKept, amKept.length * 2);
            }
            amKept[amKeptCount++] = message.keep();
        }
        amArrived++;
    }

    /** Progresses until {@code expected} messages have arrived and every data fetch has completed. */
    private void awaitActiveMessages(long expected) {
        while (amArrived < expected || amReceiveCount > 0 || amKeptCount > 0) {
            progressOrSleep();
            for (int i = 0; i < amKeptCount; i++) {
                long token = amKept[i].receive(recv, 0);
                amKept[i] = null;
                if (token != UcpWorker.COMPLETED) {
                    if (amReceiveCount == amReceives.length) {
                        amReceives = Arrays.copyOf(amReceives, amReceives.length * 2);
                    }
                    amReceives[amReceiveCount++] = token;
                }
            }
            amKeptCount = 0;
            int kept = 0;
            for (int i = 0; i < amReceiveCount; i++) {
                long token = amReceives[i];
                if (!worker.poll(token)) {
                    amReceives[kept++] = token;
                }
            }
            amReceiveCount = kept;
        }
    }

    @Override
    public void close() {
        try {
            if (endpoint != null) {
                endpoint.closeTimeout(Duration.ofSeconds(2));
                endpoint.close();
            }
        } catch (RuntimeException e) {
            err.println(RUNNER + ": closing the endpoint: " + e.getMessage());
        } finally {
            if (ownsContext) {
                context.close();
            }
            arena.close();
        }
    }

    /** Closes what a thread after the first made, on that thread: endpoint, worker (confined to it), buffers. */
    private void closeThread() {
        try {
            close();
        } finally {
            worker.close();
        }
    }
}
