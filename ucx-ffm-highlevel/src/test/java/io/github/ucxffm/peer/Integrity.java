package io.github.ucxffm.peer;

import io.github.ucxffm.testsupport.BytePattern;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The data-integrity harness's wire format and bookkeeping, shared by the two sides ({@link IntegritySender},
 * {@link IntegrityReceiver}), the process that runs them ({@link IntegrityPeer}) and the tests that audit them.
 * <p>
 * <b>Messages.</b> Every message is a {@value #HEADER}-byte header followed by a payload of 8 B to 256 KiB: magic,
 * channel, sequence number, payload length, operation kind, and a CRC-32C over the first 24 header bytes and the
 * payload. The payload is a pattern derived from the sequence number, so that a message delivered in the place of
 * another fails the check too. The same bytes travel by tag send, synchronous tag send, stream, active message (header
 * as the user header, payload as the data) or put into a slot of the receiver's registered region.
 * <p>
 * <b>Channels.</b> One endpoint carries one channel in one direction. Control messages are tag messages whose tag
 * holds a type and the channel ({@link #tag(int, int)}): the receiver's packed remote key, notifications of puts,
 * application acknowledgements, the sender's end and the receiver's answer to it.
 * <p>
 * <b>Acknowledged</b> means, for the sender: a synchronous tag send completed ({@code sync}), a put and the flush after
 * it completed ({@code flush}), or the receiver's application acknowledgement arrived ({@code app}), which it sends
 * only after it verified the message (and, in a peer process, printed it).
 */
public final class Integrity {

    private Integrity() {
    }

    /** First header word. */
    public static final int MAGIC = 0x55434649;
    /** Header bytes in front of every payload. */
    public static final int HEADER = 32;
    /** Header bytes covered by the CRC (the CRC itself follows them). */
    static final int CRC_COVERED = 24;
    /** Active-message id of data messages. */
    public static final int AM_ID = 21;
    /** Bytes of the hello that opens each endpoint's stream: magic, direction, channel, zero. */
    public static final int HELLO_BYTES = 16;
    /** First word of a hello. */
    public static final int HELLO_MAGIC = 0x48454C4F;

    /** Tag type of data messages (tag and synchronous tag sends). */
    public static final int T_DATA = 1;
    /** Tag type of put notifications: sequence number and slot. */
    public static final int T_NOTIFY = 2;
    /** Tag type of application acknowledgements: a count, then that many sequence numbers. */
    public static final int T_ACK = 3;
    /** Tag type of the receiver's packed remote key. */
    public static final int T_KEY = 4;
    /** Tag type of the sender's end: the number of messages it sent. */
    public static final int T_END = 5;
    /** Tag type of the receiver's answer to the end. */
    public static final int T_FIN = 6;

    /** Bytes at the start of a receiver's region that hold a fixed pattern, for gets. */
    public static final long REF_BYTES = 64 * 1024;
    /** Offset of the 64-bit counter that atomics add to. */
    public static final long COUNTER_AT = REF_BYTES;
    /** Offset of the first put slot. */
    public static final long SLOTS_AT = REF_BYTES + 4096;
    /** Acknowledgements per ack message at most. */
    static final int ACK_BATCH = 128;

    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    /** How a message travels. */
    public enum Kind {
        /** {@code ucp_tag_send_nbx}; acknowledged by the receiver's application ack. */
        TAG,
        /** {@code ucp_tag_send_sync_nbx}; acknowledged when the send completes (the receiver matched it). */
        TAG_SYNC,
        /** {@code ucp_stream_send_nbx}; acknowledged by the application ack. */
        STREAM,
        /** {@code ucp_am_send_nbx}, header as user header; acknowledged by the application ack. */
        AM,
        /** {@code ucp_put_nbx} into a slot, then {@code ucp_ep_flush_nbx}; acknowledged when the flush completes. */
        PUT
    }

    /** The tag of a control or data message of a channel. */
    public static long tag(int type, int channel) {
        return ((long) type << 56) | (channel & 0xFFFF_FFFFL);
    }

    /** SplitMix64's finalizer: a cheap, well-spread hash. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static final int[] SIZES = {8, 8, 64, 200, 1000, 4000, 8192, 8192 + 17, 30_000, 65_536, 100_003,
        256 * 1024};

    /** The payload length of message {@code seq}: from 8 B to 256 KiB, capped at {@code max}. */
    public static int payloadSize(long seq, int max) {
        return Math.min(max, SIZES[(int) Long.remainderUnsigned(mix(seq * 31 + 7), SIZES.length)]);
    }

    /** The kind of message {@code seq}, from those allowed, spread evenly. */
    public static Kind kindOf(long seq, List<Kind> kinds) {
        return kinds.get((int) Long.remainderUnsigned(mix(seq ^ 0x5DEECE66DL), kinds.size()));
    }

    /** Writes message {@code seq}: header and payload, {@code HEADER + length} bytes from offset 0. */
    public static void write(MemorySegment m, int channel, long seq, Kind kind, int length) {
        m.set(INT, 0, MAGIC);
        m.set(INT, 4, channel);
        m.set(LONG, 8, seq);
        m.set(INT, 16, length);
        m.set(INT, 20, kind.ordinal() + 1);
        fillPayload(m.asSlice(HEADER, length), seq);
        m.set(INT, 24, crc(m, m.asSlice(HEADER, length)));
        m.set(INT, 28, 0);
    }

    static void fillPayload(MemorySegment p, long seq) {
        BytePattern.fill(p, seq);
    }

    static int crc(MemorySegment header, MemorySegment payload) {
        CRC32C crc = new CRC32C();
        crc.update(header.asSlice(0, CRC_COVERED).asByteBuffer());
        crc.update(payload.asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * Checks a contiguous message of {@code length} bytes.
     *
     * @return {@code null} if intact, else what is wrong
     */
    public static String check(MemorySegment m, long length, int channel) {
        if (length < HEADER) {
            return "message of " + length + " bytes is shorter than a header";
        }
        return check(m.asSlice(0, HEADER), m.asSlice(HEADER, length - HEADER), channel);
    }

    /**
     * Checks a message whose header and payload are apart (an active message).
     *
     * @return {@code null} if intact, else what is wrong
     */
    public static String check(MemorySegment header, MemorySegment payload, int channel) {
        if (header.byteSize() < HEADER) {
            return "header of " + header.byteSize() + " bytes";
        }
        int magic = header.get(INT, 0);
        if (magic != MAGIC) {
            return "bad magic 0x" + Integer.toHexString(magic);
        }
        int ch = header.get(INT, 4);
        if (ch != channel) {
            return "message of channel " + ch + " arrived on channel " + channel;
        }
        long seq = header.get(LONG, 8);
        int length = header.get(INT, 16);
        if (length != payload.byteSize()) {
            return "seq " + seq + ": header says " + length + " payload bytes, " + payload.byteSize() + " arrived";
        }
        int kind = header.get(INT, 20);
        if (seq < 0 || seq > Integer.MAX_VALUE || kind < 1 || kind > Kind.values().length) {
            return "seq " + seq + ": bad sequence number or kind " + kind;
        }
        int expected = header.get(INT, 24);
        int actual = crc(header, payload);
        if (expected != actual) {
            return "seq " + seq + " (" + kindOf(header) + ", " + length + " B): CRC-32C 0x" + Integer.toHexString(actual)
                    + " instead of 0x" + Integer.toHexString(expected);
        }
        return null;
    }

    /** The sequence number in a header that passed {@link #check}. */
    public static long seqOf(MemorySegment header) {
        return header.get(LONG, 8);
    }

    /** The kind in a header that passed {@link #check}. */
    public static Kind kindOf(MemorySegment header) {
        return Kind.values()[header.get(INT, 20) - 1];
    }

    /** Bytes of one put slot: a message of the largest size, rounded up. */
    public static long slotBytes(int maxPayload) {
        return (HEADER + maxPayload + 63) & ~63L;
    }

    /** Offset of a put slot in the receiver's region. */
    public static long slotOffset(int slot, int maxPayload) {
        return SLOTS_AT + slot * slotBytes(maxPayload);
    }

    /** Size of a receiver's registered region. */
    public static long regionBytes(Config c) {
        return slotOffset(c.slots, c.maxPayload);
    }

    /** The fixed bytes at the start of every region, which gets read back. */
    public static void fillReference(MemorySegment region) {
        fillPayload(region.asSlice(0, REF_BYTES), 0x5EED_0000_0000L);
    }

    /** CRC-32C of what {@link #fillReference} writes. */
    public static long referenceCrc() {
        try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment s = a.allocate(REF_BYTES);
            fillReference(s);
            CRC32C crc = new CRC32C();
            crc.update(s.asByteBuffer());
            return crc.getValue();
        }
    }

    /** What the put slots of a region hold: intact messages, torn ones, and a description of each slot. */
    public record SlotScan(SeqSet intact, int torn, List<String> slots) {
    }

    /**
     * Reads every put slot of a receiver's region: an empty slot (no magic) is skipped, an intact message is listed,
     * anything else is torn (a put cut short by a death, or a corruption).
     */
    public static SlotScan scanSlots(MemorySegment region, Config c, int channel) {
        SeqSet intact = new SeqSet();
        int torn = 0;
        List<String> details = new ArrayList<>();
        long slot = slotBytes(c.maxPayload);
        for (int i = 0; i < c.slots; i++) {
            MemorySegment s = region.asSlice(slotOffset(i, c.maxPayload), slot);
            if (s.get(INT, 0) == 0 && s.get(LONG, 8) == 0) {
                details.add("slot " + i + ": empty");
                continue;
            }
            int length = s.get(INT, 16);
            String why = length < 0 || length > c.maxPayload ? "length " + length : check(s, HEADER + length, channel);
            if (why == null && kindOf(s) == Kind.PUT) {
                intact.add(seqOf(s));
                details.add("slot " + i + ": seq " + seqOf(s));
            } else {
                torn++;
                details.add("slot " + i + ": torn, " + (why == null ? "kind " + kindOf(s) : why));
            }
        }
        return new SlotScan(intact, torn, details);
    }

    // ---- sets of sequence numbers -----------------------------------------------------------------------------------

    /** A set of sequence numbers, printed and parsed as ranges ({@code 0-41,43,45-50}, {@code -} when empty). */
    public static final class SeqSet {
        private final BitSet bits = new BitSet();

        private static int index(long seq) {
            if (seq < 0 || seq > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("sequence number out of range: " + seq);
            }
            return (int) seq;
        }

        /** Adds; {@code true} if it was not there. */
        public boolean add(long seq) {
            int i = index(seq);
            if (bits.get(i)) {
                return false;
            }
            bits.set(i);
            return true;
        }

        /** Adds {@code [from, to)}. */
        public void addRange(long from, long to) {
            if (to > from) {
                bits.set(index(from), index(to));
            }
        }

        /** Whether {@code seq} is in the set. */
        public boolean contains(long seq) {
            return seq >= 0 && seq <= Integer.MAX_VALUE && bits.get((int) seq);
        }

        /** Adds every member of {@code other}. */
        public void addAll(SeqSet other) {
            bits.or(other.bits);
        }

        /** The members of this set that are not in {@code other}, as a new set. */
        public SeqSet minus(SeqSet other) {
            SeqSet d = copy();
            d.bits.andNot(other.bits);
            return d;
        }

        /** A copy. */
        public SeqSet copy() {
            SeqSet c = new SeqSet();
            c.bits.or(bits);
            return c;
        }

        /** How many members. */
        public int size() {
            return bits.cardinality();
        }

        /** Whether it has no members. */
        public boolean isEmpty() {
            return bits.isEmpty();
        }

        /** One more than the largest member; 0 when empty. */
        public long end() {
            return bits.length();
        }

        /** Whether the set is exactly {@code [0, n)}. */
        public boolean isPrefix(long n) {
            return size() == n && end() == n;
        }

        /** The members, in order. */
        public long[] toArray() {
            return bits.stream().asLongStream().toArray();
        }

        /** Removes every member. */
        public void clear() {
            bits.clear();
        }

        /** The ranges, as parsed by {@link #parse}. */
        public String ranges() {
            if (bits.isEmpty()) {
                return "-";
            }
            StringBuilder b = new StringBuilder();
            for (int from = bits.nextSetBit(0); from >= 0; ) {
                int to = bits.nextClearBit(from);
                if (!b.isEmpty()) {
                    b.append(',');
                }
                b.append(from);
                if (to - 1 > from) {
                    b.append('-').append(to - 1);
                }
                from = bits.nextSetBit(to);
            }
            return b.toString();
        }

        /** At most {@code n} ranges, for messages. */
        public String sample(int n) {
            String r = ranges();
            int cut = -1;
            for (int i = 0, commas = 0; i < r.length(); i++) {
                if (r.charAt(i) == ',' && ++commas == n) {
                    cut = i;
                    break;
                }
            }
            return cut < 0 ? r : r.substring(0, cut) + ",... (" + size() + " in all)";
        }

        /** Parses {@link #ranges()}. */
        public static SeqSet parse(String s) {
            SeqSet set = new SeqSet();
            if (s.equals("-")) {
                return set;
            }
            for (String part : s.split(",")) {
                int dash = part.indexOf('-');
                if (dash < 0) {
                    set.add(Long.parseLong(part));
                } else {
                    set.addRange(Long.parseLong(part.substring(0, dash)), Long.parseLong(part.substring(dash + 1)) + 1);
                }
            }
            return set;
        }

        @Override
        public String toString() {
            return sample(8);
        }
    }

    // ---- configuration ----------------------------------------------------------------------------------------------

    /** Knobs of a channel; the same on both sides of it. Written and read as {@code key=value} arguments. */
    public static final class Config {
        /** Operations a sender keeps in flight at most. */
        public int window = 32;
        /** Messages a sender lets go unacknowledged at most. */
        public int maxUnacked = 256;
        /** Tag receives a receiver keeps posted. */
        public int tagReceives = 32;
        /** Put slots in a receiver's region. */
        public int slots = 16;
        /** Largest payload. */
        public int maxPayload = 256 * 1024;
        /** Kinds of messages the sender uses. */
        public List<Kind> kinds = List.of(Kind.values());
        /** Whether the sender also reads the reference bytes back with gets. */
        public boolean gets = true;
        /** Whether the sender also adds to the counter with fetching atomics. */
        public boolean atomics = true;
        /** A get or atomic every this many messages. */
        public int sideEvery = 16;
        /** How long a sender sends, from when it has the key. */
        public long runMillis = 3000;
        /** At most this many messages. */
        public long maxMessages = Integer.MAX_VALUE;

        /** The arguments that make the same configuration in {@link #parse}. */
        public List<String> toArgs() {
            List<String> a = new ArrayList<>();
            a.add("window=" + window);
            a.add("maxUnacked=" + maxUnacked);
            a.add("tagReceives=" + tagReceives);
            a.add("slots=" + slots);
            a.add("maxPayload=" + maxPayload);
            a.add("kinds=" + String.join("+", kinds.stream().map(Kind::name).toList()));
            a.add("gets=" + gets);
            a.add("atomics=" + atomics);
            a.add("sideEvery=" + sideEvery);
            a.add("runMillis=" + runMillis);
            a.add("maxMessages=" + maxMessages);
            return a;
        }

        /** Reads {@code key=value} arguments; unknown keys throw. */
        public static Config parse(List<String> args) {
            Config c = new Config();
            for (String a : args) {
                int eq = a.indexOf('=');
                String k = a.substring(0, eq);
                String v = a.substring(eq + 1);
                switch (k) {
                    case "window" -> c.window = Integer.parseInt(v);
                    case "maxUnacked" -> c.maxUnacked = Integer.parseInt(v);
                    case "tagReceives" -> c.tagReceives = Integer.parseInt(v);
                    case "slots" -> c.slots = Integer.parseInt(v);
                    case "maxPayload" -> c.maxPayload = Integer.parseInt(v);
                    case "kinds" -> c.kinds = java.util.Arrays.stream(v.split("\\+")).map(Kind::valueOf).toList();
                    case "gets" -> c.gets = Boolean.parseBoolean(v);
                    case "atomics" -> c.atomics = Boolean.parseBoolean(v);
                    case "sideEvery" -> c.sideEvery = Integer.parseInt(v);
                    case "runMillis" -> c.runMillis = Long.parseLong(v);
                    case "maxMessages" -> c.maxMessages = Long.parseLong(v);
                    default -> throw new IllegalArgumentException("unknown key " + k);
                }
            }
            return c;
        }

        /** A copy. */
        public Config copy() {
            return parse(toArgs());
        }
    }

    // ---- reports ------------------------------------------------------------------------------------------------------

    /** What a channel tells its owner as it goes; a peer process prints it (see {@link Lines}). */
    public interface Reporter {
        /** New acknowledgements at a sender, by how they were acknowledged. */
        default void acked(int channel, SeqSet app, SeqSet sync, SeqSet flush) {
        }

        /** Messages a receiver verified; called before their application acknowledgements leave. */
        default void verified(int channel, SeqSet seqs) {
        }

        /** A corrupted message, a duplicate, a wrong get or atomic result. */
        default void problem(int channel, String what) {
        }
    }

    /** A reporter that reports nothing (the test process reads the channels' state directly). */
    public static final Reporter QUIET = new Reporter() {
    };

    /** Per-operation counts, for the figures. */
    public static final class Counts {
        /** Operations completed successfully, by name. */
        public final Map<String, Long> ops = new TreeMap<>();
        /** Messages verified, by kind. */
        public final Map<Kind, Long> verified = new EnumMap<>(Kind.class);
        /** Bytes checked against a CRC (messages, gets) or a value (atomics). */
        public long bytesVerified;

        void op(String name) {
            ops.merge(name, 1L, Long::sum);
        }

        void verified(Kind k, long bytes) {
            verified.merge(k, 1L, Long::sum);
            bytesVerified += bytes;
        }

        /** Operations completed in all. */
        public long totalOps() {
            return ops.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * The lines a peer process prints, by channel; every line ends with {@code " ."}, and a line without it (cut by a
     * SIGKILL) is ignored:
     * <pre>
     * ACKED ch=C app=RANGES sync=RANGES flush=RANGES .
     * GOT ch=C RANGES .
     * PROBLEM ch=C text .
     * REPORT ch=C key=value ... .
     * </pre>
     */
    public static final class Lines {
        /** What one channel printed. */
        public static final class Channel {
            /** Application acknowledgements the peer's sender saw. */
            public final SeqSet app = new SeqSet();
            /** Synchronous sends that completed at the peer's sender. */
            public final SeqSet sync = new SeqSet();
            /** Puts whose flush completed at the peer's sender. */
            public final SeqSet flush = new SeqSet();
            /** Messages the peer's receiver verified. */
            public final SeqSet got = new SeqSet();
            /** Sequence numbers printed as verified more than once. */
            public final SeqSet gotTwice = new SeqSet();
            /** Problems printed. */
            public final List<String> problems = new ArrayList<>();
            /** The final report's fields, if it was printed. */
            public final Map<String, String> report = new LinkedHashMap<>();
            /** The last statistics line's fields. */
            public final Map<String, String> stats = new LinkedHashMap<>();

            /** Everything the sender saw acknowledged, one way or another. */
            public SeqSet acked() {
                SeqSet all = app.copy();
                all.addAll(sync);
                all.addAll(flush);
                return all;
            }
        }

        /** Channels by number. */
        public final Map<Integer, Channel> channels = new TreeMap<>();
        /** Lines UCX printed at WARN or ERROR level ({@code UCX  WARN}, {@code UCX  ERROR}) before the peer closed. */
        public final List<String> ucxWarnings = new ArrayList<>();
        /** Such lines printed once the peer began closing its endpoints (after its {@code CLOSING} line). */
        public final List<String> ucxWarningsAtClose = new ArrayList<>();

        /** The lines of one channel (empty if it printed none). */
        public Channel channel(int ch) {
            return channels.computeIfAbsent(ch, k -> new Channel());
        }

        /** Parses a transcript. */
        public static Lines parse(String transcript) {
            Lines lines = new Lines();
            boolean closing = false;
            for (String line : transcript.split("\n")) {
                if (line.contains("UCX  WARN") || line.contains("UCX  ERROR") || line.contains("UCX  FATAL")) {
                    (closing ? lines.ucxWarningsAtClose : lines.ucxWarnings).add(line);
                    continue;
                }
                closing |= line.startsWith("CLOSING ");
                if (!line.endsWith(" .")) {
                    continue;
                }
                String[] w = line.substring(0, line.length() - 2).split(" ");
                if (w.length < 2 || !w[1].startsWith("ch=")) {
                    continue;
                }
                Channel c = lines.channel(Integer.parseInt(w[1].substring(3)));
                switch (w[0]) {
                    case "ACKED" -> {
                        for (int i = 2; i < w.length; i++) {
                            String[] kv = w[i].split("=", 2);
                            SeqSet s = SeqSet.parse(kv[1]);
                            switch (kv[0]) {
                                case "app" -> c.app.addAll(s);
                                case "sync" -> c.sync.addAll(s);
                                case "flush" -> c.flush.addAll(s);
                                default -> throw new IllegalArgumentException(line);
                            }
                        }
                    }
                    case "GOT" -> {
                        SeqSet s = SeqSet.parse(w[2]);
                        SeqSet again = s.copy();
                        again.bits.and(c.got.bits);
                        c.gotTwice.addAll(again);
                        c.got.addAll(s);
                    }
                    case "PROBLEM" -> c.problems.add(String.join(" ", java.util.Arrays.copyOfRange(w, 2, w.length)));
                    case "REPORT", "STATS" -> {
                        Map<String, String> into = w[0].equals("REPORT") ? c.report : c.stats;
                        for (int i = 2; i < w.length; i++) {
                            String[] kv = w[i].split("=", 2);
                            into.put(kv[0], kv.length > 1 ? kv[1] : "");
                        }
                    }
                    default -> {
                    }
                }
            }
            return lines;
        }
    }

    static String describe(Throwable t) {
        return (t.getClass().getSimpleName() + ": " + t.getMessage()).replace('\n', ' ');
    }
}
