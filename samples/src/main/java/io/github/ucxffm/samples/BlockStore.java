package io.github.ucxffm.samples;

import io.github.ucxffm.UcpAmMessage;
import io.github.ucxffm.UcpAmSendFlags;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpMemory;
import io.github.ucxffm.UcpRemoteKey;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A small remote block service: the server holds a volume of fixed-size blocks in memory and moves blocks with RMA
 * between the volume and the client's registered buffer, on requests that come as active messages. The client writes
 * a pattern to every block with {@code --window} requests in flight, reads every block back and checks it, and
 * reports IOPS and request latency.
 * <p>
 * <b>Options.</b> {@code --blocks N} (server only; default {@value #DEFAULT_BLOCKS}) is the number of blocks;
 * {@code --size} is the block size (default {@value #DEFAULT_BLOCK_SIZE}, a multiple of 8, the same on both sides);
 * {@code --window} is the client's queue depth; {@code --warmup} is the number of warm-up READ requests, of blocks
 * {@code 0, 1, ...} modulo the block count, before anything is written. {@code --iterations} does not apply: the
 * client writes and reads each block once.
 * <p>
 * <b>Wire protocol.</b> Active messages only; every integer is little-endian; no message but REGISTER carries data.
 * The server's volume is {@code blocks × block size} bytes of memory it registered, zero-filled at start; the client's
 * buffer is {@code window × block size} bytes it registered, one slot per request in flight.
 * <ol>
 * <li>REGISTER (id {@value #AM_REGISTER}), client to server, sent once after connecting: header
 * {@value #REGISTER_HEADER} bytes = block size (u64), queue depth (u64); data = the remote key of the client's
 * buffer in ucx-ffm's checked format ({@link UcpRemoteKey#FORMAT}).</li>
 * <li>READY (id {@value #AM_READY}), server to client: header {@value #READY_HEADER} bytes = status (u32), 0 (u32),
 * block size (u64), block count (u64). Status {@link #OK}; or {@link #BAD_REQUEST} (a REGISTER header that is not
 * {@value #REGISTER_HEADER} bytes), {@link #BAD_BLOCK_SIZE} (the client's block size differs) or {@link #BAD_KEY}
 * (no key, or one that cannot be unpacked), after which the client stops with BYE. A later REGISTER replaces the
 * key.</li>
 * <li>READ (id {@value #AM_READ}) and WRITE (id {@value #AM_WRITE}), client to server: header
 * {@value #REQUEST_HEADER} bytes = request id (u64, the client's choice, echoed in DONE), block number (u64),
 * address in the client's buffer (u64) of the block's {@code block size} bytes. For WRITE the server gets those bytes
 * from the client into the block ({@code ucp_get_nbx}); for READ it puts the block there ({@code ucp_put_nbx}); then
 * it flushes the endpoint, so that the bytes are in place, and answers. Requests are served concurrently and may be
 * answered out of order.</li>
 * <li>DONE (id {@value #AM_DONE}), server to client: header {@value #DONE_HEADER} bytes = request id (u64), status
 * (u32), 0 (u32). A refused request moves no data: {@link #OUT_OF_RANGE} (block number not below the block count),
 * {@link #BAD_ADDRESS} (the range is not inside the registered buffer), {@link #NOT_REGISTERED} (no REGISTER
 * accepted yet), {@link #BAD_REQUEST} (a header that is not {@value #REQUEST_HEADER} bytes, or data attached; the
 * request id is then the header's first 8 bytes if present, else 0).</li>
 * <li>BYE (id {@value #AM_BYE}), client to server, no header: the server answers the requests still in service, then
 * sends BYE back (no header) and ends; the client closes once that BYE arrived. A client that gives up after
 * REGISTER sends BYE too.</li>
 * </ol>
 * The client's pattern: 64-bit word {@code w} of block {@code b} is {@code (b << 32) | (w + 1)}, little-endian, so
 * no word of a written block is zero. Its request ids are {@code (sequence << 16) | slot}.
 */
public final class BlockStore {

    /** Client to server ({@code 0x42}): the buffer's key and the block size. */
    public static final int AM_REGISTER = 0x42;
    /** Server to client ({@code 0x43}): the answer to REGISTER, with the volume's geometry. */
    public static final int AM_READY = 0x43;
    /** Client to server ({@code 0x44}): put a block into the client's buffer. */
    public static final int AM_READ = 0x44;
    /** Client to server ({@code 0x45}): get a block from the client's buffer. */
    public static final int AM_WRITE = 0x45;
    /** Server to client ({@code 0x46}): a request is done (or refused). */
    public static final int AM_DONE = 0x46;
    /** Both ways ({@code 0x47}): the end, and its acknowledgement. */
    public static final int AM_BYE = 0x47;

    /** REGISTER header: block size, queue depth. */
    public static final int REGISTER_HEADER = 16;
    /** READY header: status, 0, block size, block count. */
    public static final int READY_HEADER = 24;
    /** READ and WRITE header: request id, block number, client address. */
    public static final int REQUEST_HEADER = 24;
    /** DONE header: request id, status, 0. */
    public static final int DONE_HEADER = 16;

    /** Status: done. */
    public static final int OK = 0;
    /** Status: the block number is not below the block count. */
    public static final int OUT_OF_RANGE = 1;
    /** Status: the client range is outside the registered buffer. */
    public static final int BAD_ADDRESS = 2;
    /** Status: no buffer registered yet. */
    public static final int NOT_REGISTERED = 3;
    /** Status: a malformed request. */
    public static final int BAD_REQUEST = 4;
    /** Status (READY): the client's block size is not the volume's. */
    public static final int BAD_BLOCK_SIZE = 5;
    /** Status (READY): the remote key was rejected. */
    public static final int BAD_KEY = 6;

    /** Blocks in the volume unless {@code --blocks} says otherwise. */
    public static final long DEFAULT_BLOCKS = 1024;
    /** Block size unless {@code --size} says otherwise. */
    public static final long DEFAULT_BLOCK_SIZE = 4096;

    private static final ValueLayout.OfLong LE_LONG =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final String NAME = "block-store";
    private static final Set<String> VALUED = Set.of("--client", "--port", "--size", "--iterations", "--warmup",
            "--transport", "--window");

    private BlockStore() {
    }

    /**
     * The name of a status.
     *
     * @param status a DONE or READY status
     * @return its name, such as {@code OUT_OF_RANGE}
     */
    public static String statusName(int status) {
        return switch (status) {
            case OK -> "OK";
            case OUT_OF_RANGE -> "OUT_OF_RANGE";
            case BAD_ADDRESS -> "BAD_ADDRESS";
            case NOT_REGISTERED -> "NOT_REGISTERED";
            case BAD_REQUEST -> "BAD_REQUEST";
            case BAD_BLOCK_SIZE -> "BAD_BLOCK_SIZE";
            case BAD_KEY -> "BAD_KEY";
            default -> "status " + status;
        };
    }

    /**
     * The client's pattern: word {@code word} of block {@code block}.
     *
     * @param block the block number
     * @param word  the index of the 64-bit word in the block
     * @return the value written there
     */
    public static long pattern(long block, long word) {
        return (block << 32) | (word + 1);
    }

    private record Options(SampleOptions sample, long blocks) {
    }

    /** The common options, with {@code --blocks} taken out and the block size's own default. */
    private static Options parse(String[] args) {
        List<String> rest = new ArrayList<>();
        long blocks = -1;
        boolean size = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--blocks")) {
                if (i + 1 >= args.length) {
                    throw SampleException.usage("--blocks needs a value");
                }
                blocks = count("--blocks", args[++i]);
                continue;
            }
            rest.add(a);
            if (VALUED.contains(a) && i + 1 < args.length) {
                size |= a.equals("--size");
                rest.add(args[++i]);
            }
        }
        if (!size) {
            rest.add("--size");
            rest.add(Long.toString(DEFAULT_BLOCK_SIZE));
        }
        SampleOptions o = SampleOptions.parse(rest.toArray(String[]::new));
        if (blocks >= 0 && !o.server()) {
            throw SampleException.usage("--blocks is a server option: the client uses the server's whole volume");
        }
        if (o.size() < 8 || o.size() % 8 != 0) {
            throw SampleException.usage("--size (the block size) must be a positive multiple of 8, not " + o.size());
        }
        blocks = blocks < 0 ? DEFAULT_BLOCKS : blocks;
        if (o.server() && blocks > Long.MAX_VALUE / o.size()) {
            throw SampleException.usage("--blocks " + blocks + " of " + o.size() + " bytes is too large a volume");
        }
        return new Options(o, blocks);
    }

    private static long count(String option, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = t.endsWith("k") ? 1024 : t.endsWith("m") ? 1024 * 1024 : 1;
        if (unit != 1) {
            t = t.substring(0, t.length() - 1);
        }
        long v;
        try {
            v = Math.multiplyExact(Long.parseLong(t), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw SampleException.usage(option + " takes a whole number, not '" + text + "'");
        }
        if (v < 1 || v > 1L << 31) {
            throw SampleException.usage(option + " must be between 1 and " + (1L << 31) + ", not " + text);
        }
        return v;
    }

    static void run(String[] args) {
        Options options = parse(args);
        try (Arena arena = Arena.ofConfined(); // freed last: after the worker, which may still write into it
             Session s = Session.open(NAME, options.sample(), UcpContext.Feature.AM, UcpContext.Feature.RMA)) {
            try {
                if (options.sample().server()) {
                    new Server(s, arena, options.blocks()).serve();
                } else {
                    new Client(s, arena).run();
                }
            } catch (UcxException e) {
                throw s.failure(e);
            }
        }
    }

    // ---- server -----------------------------------------------------------------------------------------------

    /**
     * The server: active-message handlers queue what arrives; the main loop starts each request's RMA, then its
     * flush, then its DONE, polling every request in service (no allocation per request once the pools are warm).
     */
    private static final class Server {
        private static final int EVENT_REGISTER = 1;
        private static final int EVENT_READ = 2;
        private static final int EVENT_WRITE = 3;
        private static final int EVENT_BAD = 4;
        private static final int EVENT_BYE = 5;

        private static final int FREE = 0;
        private static final int RMA = 1;
        private static final int FLUSH = 2;
        private static final int REPLY = 3;

        /** One request in service: a state, the token of its current operation, and its answer's header. */
        private static final class Op {
            final int index;
            final MemorySegment header;
            final MemorySegment done;
            int state = FREE;
            long token;
            long id;
            int status;
            int kind;

            Op(Arena arena, int index) {
                this.index = index;
                header = arena.allocate(READY_HEADER, 8);
                done = header.asSlice(0, DONE_HEADER);
            }
        }

        private final Session s;
        private final Arena arena;
        private final UcpWorker w;
        private final UcpEndpoint ep;
        private final long blocks;
        private final long blockSize;
        private UcpMemory volume;
        private UcpRemoteKey clientKey;
        private boolean bye;
        private long reads;
        private long writes;
        private long refused;

        // Events in arrival order, filled by the handlers: a ring that grows when full.
        private int[] kinds = new int[64];
        private long[] ids = new long[64];
        private long[] numbers = new long[64];
        private long[] addresses = new long[64];
        private Object[] keys = new Object[64];
        private int head;
        private int queued;

        private Op[] ops = new Op[0];
        private int[] free = new int[0];
        private int freeCount;
        private int inService;

        Server(Session s, Arena arena, long blocks) {
            this.s = s;
            this.arena = arena;
            this.w = s.worker;
            this.ep = s.endpoint;
            this.blocks = blocks;
            this.blockSize = s.options.size();
        }

        void serve() {
            // No progress happens between the accept and these registrations: the client's first message cannot
            // reach a worker without handlers.
            w.setAmHandler(AM_REGISTER, this::onRegister);
            w.setAmHandler(AM_READ, m -> onRequest(m, EVENT_READ));
            w.setAmHandler(AM_WRITE, m -> onRequest(m, EVENT_WRITE));
            w.setAmHandler(AM_BYE, m -> enqueue(EVENT_BYE, 0, 0, 0, null));
            try (UcpMemory v = s.allocate(blocks * blockSize, "the volume")) {
                volume = v;
                v.segment().fill((byte) 0);
                System.out.printf(Locale.ROOT, "%s: volume of %d blocks of %d bytes%n", NAME, blocks, blockSize);
                while (!(bye && inService == 0)) {
                    s.awaitCondition(this::step, bye ? "finishing the last requests" : "waiting for requests");
                }
                s.await(ep.sendAm(AM_BYE, null, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE), "saying goodbye");
                System.out.printf(Locale.ROOT, "%s: served %d writes and %d reads, refused %d requests%n", NAME, writes,
                        reads, refused);
            }
        }

        // The handlers run inside progress: they copy what they need and never throw.

        private void onRegister(UcpAmMessage m) {
            long size = m.headerLength() == REGISTER_HEADER ? m.header().get(LE_LONG, 0) : -1;
            byte[] key = m.isRendezvous() || m.dataLength() == 0 ? null : m.data().toArray(JAVA_BYTE);
            enqueue(EVENT_REGISTER, 0, size, 0, key);
        }

        private void onRequest(UcpAmMessage m, int kind) {
            long length = m.headerLength();
            MemorySegment h = length == 0 ? MemorySegment.NULL : m.header();
            long id = length >= 8 ? h.get(LE_LONG, 0) : 0;
            if (length != REQUEST_HEADER || m.dataLength() != 0) {
                enqueue(EVENT_BAD, id, 0, 0, null);
            } else {
                enqueue(kind, id, h.get(LE_LONG, 8), h.get(LE_LONG, 16), null);
            }
        }

        private void enqueue(int kind, long id, long number, long address, Object key) {
            if (queued == kinds.length) {
                grow();
            }
            int at = (head + queued) % kinds.length;
            kinds[at] = kind;
            ids[at] = id;
            numbers[at] = number;
            addresses[at] = address;
            keys[at] = key;
            queued++;
        }

        private void grow() {
            int n = kinds.length * 2;
            int[] k = new int[n];
            long[] i = new long[n];
            long[] b = new long[n];
            long[] a = new long[n];
            Object[] o = new Object[n];
            for (int j = 0; j < queued; j++) {
                int from = (head + j) % kinds.length;
                k[j] = kinds[from];
                i[j] = ids[from];
                b[j] = numbers[from];
                a[j] = addresses[from];
                o[j] = keys[from];
            }
            kinds = k;
            ids = i;
            numbers = b;
            addresses = a;
            keys = o;
            head = 0;
        }

        /** Starts what arrived and advances what is in service; {@code true} if anything moved or the run is over. */
        private boolean step() {
            boolean moved = queued > 0;
            while (queued > 0) {
                int at = head;
                head = (head + 1) % kinds.length;
                queued--;
                Object key = keys[at];
                keys[at] = null;
                dispatch(kinds[at], ids[at], numbers[at], addresses[at], (byte[]) key);
            }
            for (Op op : ops) {
                if (op.state != FREE) {
                    moved |= advance(op);
                }
            }
            return moved || bye && inService == 0;
        }

        private void dispatch(int kind, long id, long number, long address, byte[] key) {
            switch (kind) {
                case EVENT_REGISTER -> register(number, key);
                case EVENT_BYE -> bye = true;
                case EVENT_BAD -> reply(acquire(kind, id), BAD_REQUEST);
                default -> start(acquire(kind, id), kind, number, address);
            }
        }

        private void register(long size, byte[] key) {
            int status = OK;
            if (size < 0) {
                status = BAD_REQUEST;
            } else if (size != blockSize) {
                status = BAD_BLOCK_SIZE;
            } else if (key == null) {
                status = BAD_KEY;
            } else {
                try {
                    // A key replaced by a second REGISTER stays open: requests in service may still use it. The
                    // endpoint closes it.
                    clientKey = ep.unpackRemoteKey(key);
                    System.out.printf(Locale.ROOT, "%s: the client registered a buffer of %d bytes%n", NAME,
                            clientKey.length());
                } catch (IllegalArgumentException | UcxException e) {
                    status = BAD_KEY;
                    System.out.println(NAME + ": refused the client's key: " + e.getMessage());
                }
            }
            Op op = acquire(EVENT_REGISTER, 0);
            op.header.set(LE_INT, 0, status);
            op.header.set(LE_INT, 4, 0);
            op.header.set(LE_LONG, 8, blockSize);
            op.header.set(LE_LONG, 16, blocks);
            op.status = status;
            op.state = REPLY;
            op.token = ep.sendAm(AM_READY, op.header, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE);
        }

        private void start(Op op, int kind, long block, long address) {
            UcpRemoteKey key = clientKey;
            int status = OK;
            if (key == null) {
                status = NOT_REGISTERED;
            } else if (Long.compareUnsigned(block, blocks) >= 0) {
                status = OUT_OF_RANGE;
            } else if (Long.compareUnsigned(address, key.base()) < 0
                    || Long.compareUnsigned(address - key.base(), key.length()) > 0
                    || key.length() - (address - key.base()) < blockSize) {
                status = BAD_ADDRESS;
            }
            if (status != OK) {
                reply(op, status);
                return;
            }
            long offset = block * blockSize;
            op.state = RMA;
            op.token = kind == EVENT_WRITE ? ep.get(volume, offset, blockSize, address, key)
                    : ep.put(volume, offset, blockSize, address, key);
        }

        private void reply(Op op, int status) {
            op.status = status;
            op.done.set(LE_LONG, 0, op.id);
            op.done.set(LE_INT, 8, status);
            op.done.set(LE_INT, 12, 0);
            op.state = REPLY;
            op.token = ep.sendAm(AM_DONE, op.done, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE);
        }

        /** Moves a request on as far as its operations have completed; {@code true} if it moved. */
        private boolean advance(Op op) {
            boolean moved = false;
            while (op.state != FREE && w.poll(op.token)) {
                moved = true;
                switch (op.state) {
                    case RMA -> {
                        op.state = FLUSH;
                        op.token = ep.flush();
                    }
                    case FLUSH -> reply(op, OK);
                    default -> release(op);
                }
            }
            return moved;
        }

        private Op acquire(int kind, long id) {
            if (freeCount == 0) {
                int n = Math.max(16, ops.length * 2);
                Op[] more = Arrays.copyOf(ops, n);
                free = new int[n];
                for (int i = n - 1; i >= ops.length; i--) {
                    more[i] = new Op(arena, i);
                    free[freeCount++] = i;
                }
                ops = more;
            }
            Op op = ops[free[--freeCount]];
            op.kind = kind;
            op.id = id;
            inService++;
            return op;
        }

        private void release(Op op) {
            if (op.kind == EVENT_READ || op.kind == EVENT_WRITE) {
                if (op.status == OK) {
                    if (op.kind == EVENT_READ) {
                        reads++;
                    } else {
                        writes++;
                    }
                } else {
                    refused++;
                }
            } else if (op.kind == EVENT_BAD) {
                refused++;
            }
            op.state = FREE;
            inService--;
            free[freeCount++] = op.index;
        }
    }

    // ---- client -----------------------------------------------------------------------------------------------

    /**
     * The client: one buffer slot per request in flight; the DONE handler records the latency and queues the slot,
     * the main loop checks it and reuses it.
     */
    private static final class Client {
        private final Session s;
        private final Arena arena;
        private final UcpWorker w;
        private final UcpEndpoint ep;
        private final long blockSize;
        private final int window;

        private final long[] slotId;
        private final long[] sentAt;
        private final long[] sendToken;
        private final long[] blockOf;
        private final int[] status;
        private final MemorySegment[] header;
        private final int[] free;
        private int freeCount;
        private final int[] completed;
        private int completedHead;
        private int completedCount;
        private long sequence;
        private String protocolError;

        private MemorySegment slots;
        private long slotsAddress;
        private OperationLatency current;
        private OperationLatency combined;

        private boolean ready;
        private int readyStatus;
        private long serverBlockSize;
        private long blocks;
        private boolean registered;
        private boolean byeReceived;

        Client(Session s, Arena arena) {
            this.s = s;
            this.arena = arena;
            this.w = s.worker;
            this.ep = s.endpoint;
            this.blockSize = s.options.size();
            this.window = s.options.window();
            slotId = new long[window];
            sentAt = new long[window];
            sendToken = new long[window];
            blockOf = new long[window];
            status = new int[window];
            header = new MemorySegment[window];
            free = new int[window];
            completed = new int[window];
            for (int i = 0; i < window; i++) {
                slotId[i] = -1;
                header[i] = arena.allocate(REQUEST_HEADER, 8);
                free[freeCount++] = window - 1 - i;
            }
        }

        void run() {
            w.setAmHandler(AM_READY, this::onReady);
            w.setAmHandler(AM_DONE, this::onDone);
            w.setAmHandler(AM_BYE, m -> byeReceived = true);
            try (UcpMemory buffer = s.allocate(window * blockSize, "the client's buffer")) {
                slots = buffer.segment();
                slotsAddress = buffer.address();
                register(buffer);
                try {
                    measure();
                } catch (SampleException e) {
                    giveUp();
                    throw e;
                }
            }
        }

        private void register(UcpMemory buffer) {
            MemorySegment h = arena.allocate(REGISTER_HEADER, 8);
            h.set(LE_LONG, 0, blockSize);
            h.set(LE_LONG, 8, window);
            MemorySegment key = buffer.packRemoteKey(arena);
            long sent = ep.sendAm(AM_REGISTER, h, key, 0, key.byteSize(), UcpAmSendFlags.NONE);
            s.awaitCondition(() -> ready, "waiting for the server to accept the buffer");
            s.await(sent, "registering the buffer");
            registered = true;
            if (readyStatus == BAD_BLOCK_SIZE) {
                giveUp();
                throw SampleException.failed("the server's blocks are " + serverBlockSize + " bytes, not "
                        + blockSize + ": give the client --size " + serverBlockSize);
            }
            if (readyStatus != OK) {
                giveUp();
                throw SampleException.failed("the server refused the buffer: " + statusName(readyStatus));
            }
            if (serverBlockSize != blockSize || blocks < 1) {
                giveUp();
                throw SampleException.failed("the server's READY says OK for " + blocks + " blocks of "
                        + serverBlockSize + " bytes, which this client cannot use");
            }
        }

        private void measure() {
            String transports = s.transports();
            long warmup = s.options.warmup();
            if (warmup > 0) {
                phase("warm-up", AM_READ, warmup, false);
            }
            combined = new OperationLatency("all");
            combined.start();
            OperationLatency write = phase("write", AM_WRITE, blocks, true);
            OperationLatency read = phase("read", AM_READ, blocks, true);
            combined.stop();
            registered = false;
            s.await(ep.sendAm(AM_BYE, null, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE), "saying goodbye");
            s.awaitCondition(() -> byeReceived, "waiting for the server's goodbye");
            System.out.printf(Locale.ROOT, "%s: %d blocks of %d bytes, queue depth %d, over %s%n", NAME, blocks,
                    blockSize, window, transports);
            System.out.println(OperationLatency.header("IOPS"));
            System.out.println(write.row(write.wallRate()));
            System.out.println(read.row(read.wallRate()));
            System.out.printf(Locale.ROOT, "RESULT sample=%s transport=%s block_size=%d queue_depth=%d "
                            + "write_iops=%.0f read_iops=%.0f p50_us=%.3f p99_us=%.3f blocks=%d%n", NAME, transports,
                    blockSize, window, write.wallRate(), read.wallRate(), combined.micros(50), combined.micros(99),
                    blocks);
            System.out.printf(Locale.ROOT, "%s: verified %d blocks: every block read back holds what was written%n",
                    NAME, blocks);
        }

        /** Ends the server's run after a failure here, and waits for its goodbye; the server may be gone already. */
        private void giveUp() {
            if (!registered) {
                return;
            }
            registered = false;
            try {
                w.await(ep.sendAm(AM_BYE, null, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE), Duration.ofSeconds(2),
                        s.idle());
                w.awaitCondition(() -> byeReceived, Duration.ofSeconds(2), s.idle());
            } catch (RuntimeException ignored) {
                // best effort: the server then notices the client going away instead
            }
        }

        /** Sends {@code requests} requests of one kind, for blocks 0, 1, ... modulo the block count. */
        private OperationLatency phase(String name, int kind, long requests, boolean measured) {
            OperationLatency latency = new OperationLatency(name);
            current = measured ? latency : null;
            latency.start();
            String what = "waiting for answers to " + (kind == AM_READ ? "READ" : "WRITE") + " requests";
            long next = 0;
            long finished = 0;
            while (finished < requests) {
                while (next < requests && freeCount > 0) {
                    issue(kind, next % blocks);
                    next++;
                }
                if (completedCount == 0) {
                    s.awaitCondition(() -> completedCount > 0 || protocolError != null, what);
                }
                if (protocolError != null) {
                    throw SampleException.failed("the server sent " + protocolError);
                }
                while (completedCount > 0) {
                    int slot = completed[completedHead];
                    completedHead = (completedHead + 1) % window;
                    completedCount--;
                    finish(kind, slot, measured);
                    finished++;
                }
            }
            latency.stop();
            current = null;
            return latency;
        }

        private void issue(int kind, long block) {
            int slot = free[--freeCount];
            long at = slot * blockSize;
            if (kind == AM_WRITE) {
                for (long word = 0; word < blockSize / 8; word++) {
                    slots.set(LE_LONG, at + 8 * word, pattern(block, word));
                }
            } else {
                slots.asSlice(at, blockSize).fill((byte) 0xA5); // a READ that moves nothing cannot pass
            }
            long id = (++sequence << 16) | slot;
            MemorySegment h = header[slot];
            h.set(LE_LONG, 0, id);
            h.set(LE_LONG, 8, block);
            h.set(LE_LONG, 16, slotsAddress + at);
            slotId[slot] = id;
            blockOf[slot] = block;
            sentAt[slot] = System.nanoTime();
            sendToken[slot] = ep.sendAm(kind, h, MemorySegment.NULL, 0, 0, UcpAmSendFlags.NONE);
        }

        private void finish(int kind, int slot, boolean written) {
            s.await(sendToken[slot], "sending a request");
            sendToken[slot] = UcpWorker.COMPLETED;
            String op = kind == AM_READ ? "READ" : "WRITE";
            if (status[slot] != OK) {
                throw SampleException.failed("the server refused " + op + " of block " + blockOf[slot] + ": "
                        + statusName(status[slot]));
            }
            if (kind == AM_READ) {
                long at = slot * blockSize;
                for (long word = 0; word < blockSize / 8; word++) {
                    long expected = written ? pattern(blockOf[slot], word) : 0; // the volume starts zeroed
                    long found = slots.get(LE_LONG, at + 8 * word);
                    if (found != expected) {
                        throw SampleException.failed(String.format(Locale.ROOT, "block %d read back differs at byte "
                                + "%d: 0x%016x, expected 0x%016x", blockOf[slot], 8 * word, found, expected));
                    }
                }
            }
            free[freeCount++] = slot;
        }

        // The handlers run inside progress: short, allocation-free on the good path, and they never throw.

        private void onReady(UcpAmMessage m) {
            if (m.headerLength() != READY_HEADER) {
                protocolError = "a READY with a " + m.headerLength() + "-byte header";
                readyStatus = BAD_REQUEST;
            } else {
                MemorySegment h = m.header();
                readyStatus = h.get(LE_INT, 0);
                serverBlockSize = h.get(LE_LONG, 8);
                blocks = h.get(LE_LONG, 16);
            }
            ready = true;
        }

        private void onDone(UcpAmMessage m) {
            long now = System.nanoTime();
            if (m.headerLength() != DONE_HEADER) {
                protocolError = "a DONE with a " + m.headerLength() + "-byte header";
                return;
            }
            MemorySegment h = m.header();
            long id = h.get(LE_LONG, 0);
            int slot = (int) (id & 0xFFFF);
            if (slot >= window || slotId[slot] != id) {
                protocolError = "a DONE for request " + id + ", which is not in flight";
                return;
            }
            slotId[slot] = -1;
            status[slot] = h.get(LE_INT, 8);
            if (current != null) {
                long t = now - sentAt[slot];
                current.record(t);
                combined.record(t);
            }
            completed[(completedHead + completedCount) % window] = slot;
            completedCount++;
        }
    }
}
