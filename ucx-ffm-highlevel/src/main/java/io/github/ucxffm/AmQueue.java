package io.github.ucxffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;

import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_DATA;
import static io.github.ucxffm.bindings.ucx_h.UCP_AM_RECV_ATTR_FLAG_RNDV;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A worker's queue of small active messages, filled by a native receive callback instead of a Java upcall per
 * message.
 * <p>
 * UCX delivers every active message to a callback, and a Java callback is an upcall, paid on every message: without
 * it an 8-byte send and receive takes 7 to 13 % less time ({@code ./ucx-ffm bench am-queue}; bench/RESULTS.md, round
 * 23). What still separates a Java ping-pong from a C one lies elsewhere (round 25). Where this class is
 * {@linkplain #usable usable}, the callback UCX calls is a short native function, {@link #CODE}, that copies
 * an eager message of up to {@link #PAYLOAD_BYTES} bytes (header and data) into the next free slot of this queue and
 * returns {@code UCS_OK}. {@link UcpWorker#progress()} then hands the queued messages to their Java handlers, in
 * order, after {@code ucp_worker_progress} returns. Everything else (rendezvous messages, any message of a handler
 * that asked for {@link UcpAmHandler#PERSISTENT_DATA}, larger messages, a full queue) goes on from the native function
 * to the worker's Java upcall stub, which first hands on what is queued, so that handlers see messages in the order
 * they came.
 * <p>
 * The function's source is {@code src/main/asm/am-queue-x86_64.S}, with the memory layouts it reads and writes;
 * {@code AmQueueCodeTest} assembles it and compares the bytes with {@link #CODE}. It exists for Linux on x86-64 only;
 * elsewhere, for a {@link UcsThreadMode#MULTI} worker (whose progress may run on several threads at once), where the
 * system refuses executable memory, or with {@code -Ducxffm.am.queue=false}, every message comes by upcall as
 * before.
 * <p>
 * <b>Thread.</b> The thread progressing the worker fills the queue (inside UCX) and empties it; nothing else touches
 * it.
 */
final class AmQueue {

    /** {@code src/main/asm/am-queue-x86_64.S}, assembled. */
    static final byte[] CODE = HexFormat.of().parseHex(
            "f30f1efa498b014885472075774c8b1f4a8d0402493b839000000077674d8b13"
            + "4c89d0492b4340493b838000000077544d2393800000004d0faf93880000004d"
            + "0393980000004989124d894208498b0149894210498b410849894218488b4708"
            + "49894220498d7a284889c84889d1f3a44889c64c89c1f3a4498b0348ffc04989"
            + "0331c0c3488b4710488b7f18ffe0");

    /** Whether the queue is used at all ({@code -Ducxffm.am.queue=false} turns it off). */
    static final String PROPERTY = "ucxffm.am.queue";

    static final int SLOTS = 128;
    static final int SLOT_BYTES = 256;
    /** A slot's own fields before the header and data. */
    static final int SLOT_FIELDS = 40;
    /** The header and data bytes a slot carries. */
    static final int PAYLOAD_BYTES = SLOT_BYTES - SLOT_FIELDS;

    // the queue's fields (the assembly source's layout): head and tail on cache lines of their own
    private static final long HEAD = 0;
    private static final long TAIL = 64;
    private static final long MASK = 128;
    private static final long SLOT_SIZE = 136;
    private static final long PAYLOAD = 144;
    private static final long FIRST_SLOT = 152;
    private static final long FIELDS_BYTES = 192;

    // a slot's fields
    static final long SLOT_HEADER_LENGTH = 0;
    static final long SLOT_LENGTH = 8;
    static final long SLOT_ATTR = 16;
    static final long SLOT_REPLY_EP = 24;
    static final long SLOT_ID = 32;

    // the callback's arg, one per id
    private static final long ARG_BYTES = 40;

    /** The address of the installed function; 0 when there is none (not x86-64 Linux, or refused). */
    private static final long FUNCTION = install();

    private final Arena arena;
    private final MemorySegment fields;
    private final long firstSlot;
    private final MemorySegment upcallStub;
    /** The callback's arg per id, made when the id first gets a handler. */
    private MemorySegment[] args = new MemorySegment[0];

    /** The next message to hand on (messages queued = head - next); Java's own. */
    long next;
    /** How deep the thread is in {@link AmDispatcher#deliverQueued()}: slots are given back when it leaves. */
    int depth;

    private AmQueue(Arena arena, MemorySegment upcallStub) {
        this.arena = arena;
        this.upcallStub = upcallStub;
        this.fields = arena.allocate(FIELDS_BYTES + (long) SLOTS * SLOT_BYTES, 64);
        this.firstSlot = fields.address() + FIELDS_BYTES;
        fields.set(JAVA_LONG, MASK, SLOTS - 1);
        fields.set(JAVA_LONG, SLOT_SIZE, SLOT_BYTES);
        fields.set(JAVA_LONG, PAYLOAD, PAYLOAD_BYTES);
        fields.set(JAVA_LONG, FIRST_SLOT, firstSlot);
    }

    private static long install() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return 0;
        }
        return Libc.mapExecutable(CODE);
    }

    /**
     * Whether a worker may use a queue (see the class comment); asked when the worker is made, the queue itself is
     * made when the first handler is registered.
     *
     * @param multi whether the worker is {@link UcsThreadMode#MULTI}
     */
    static boolean usable(boolean multi) {
        return FUNCTION != 0 && !multi && !"false".equalsIgnoreCase(System.getProperty(PROPERTY));
    }

    /**
     * A queue for a worker that is {@linkplain #usable usable}.
     *
     * @param arena      the worker's memory, closed after the worker is destroyed
     * @param upcallStub the worker's {@code ucp_am_recv_callback_t} upcall stub, called with the message's id as arg
     */
    static AmQueue create(Arena arena, MemorySegment upcallStub) {
        return new AmQueue(arena, upcallStub);
    }

    /** Whether this process runs the native callback (not x86-64 Linux, or executable memory refused: no). */
    static boolean installed() {
        return FUNCTION != 0;
    }

    /** The callback to register with UCX for every id. */
    MemorySegment callback() {
        return MemorySegment.ofAddress(FUNCTION);
    }

    /**
     * The callback's arg for {@code id}: this queue, the id, the upcall to hand on to, and which messages go to it:
     * rendezvous messages always, and eager data in a descriptor UCX lets the handler keep
     * ({@code UCP_AM_RECV_ATTR_FLAG_DATA}) when the handler asked for {@link UcpAmHandler#PERSISTENT_DATA}. Without
     * it a small message is copied into the queue, descriptor or not, and UCX takes the descriptor back.
     */
    synchronized MemorySegment arg(int id, boolean persistentData) {
        MemorySegment a = arg(id);
        a.set(JAVA_LONG, 32, UCP_AM_RECV_ATTR_FLAG_RNDV() | (persistentData ? UCP_AM_RECV_ATTR_FLAG_DATA() : 0));
        return a;
    }

    /** The callback's arg for {@code id}, made the first time with the mask of a handler without persistent data. */
    synchronized MemorySegment arg(int id) {
        if (id >= args.length) {
            args = Arrays.copyOf(args, Math.max(id + 1, args.length * 2));
        }
        MemorySegment a = args[id];
        if (a == null) {
            a = arena.allocate(ARG_BYTES, 8);
            a.set(JAVA_LONG, 0, fields.address());
            a.set(JAVA_LONG, 8, id);
            a.set(JAVA_LONG, 16, upcallStub.address());
            a.set(JAVA_LONG, 24, id); // the upcall's arg: the id, as when UCX calls the upcall directly
            a.set(JAVA_LONG, 32, UCP_AM_RECV_ATTR_FLAG_RNDV());
            args[id] = a;
        }
        return a;
    }

    /** Messages ever queued. */
    long head() {
        return fields.get(JAVA_LONG, HEAD);
    }

    /** Whether messages wait to be handed on. */
    boolean hasQueued() {
        return fields.get(JAVA_LONG, HEAD) != next;
    }

    /** The address of the slot of message number {@code n}. */
    long slot(long n) {
        return firstSlot + (n & (SLOTS - 1)) * SLOT_BYTES;
    }

    /** Gives the slots of the messages handed on back to the callback. */
    void release() {
        fields.set(JAVA_LONG, TAIL, next);
    }
}
