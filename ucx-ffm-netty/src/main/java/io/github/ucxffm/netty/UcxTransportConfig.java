package io.github.ucxffm.netty;

import io.github.ucxffm.UcxVersion;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The settings of a UCX transport: the UCX options of its context, and how its channels use UCX. Immutable; made
 * with {@link #builder()}. Event loops made with {@link UcxIoHandler#newFactory(UcxTransportConfig)} from configs
 * with the same UCX options and name share one {@code UcpContext}.
 * <ul>
 *   <li>{@link Builder#config(String, String)}: a UCX option for the context, as {@code UCX_}<i>key</i> in the
 *       environment would set it ({@code config("TLS", "tcp")}). UCX still reads {@code UCX_*} variables of the
 *       environment for what is not set here.</li>
 *   <li>{@link Builder#peerErrorHandling(boolean)} (default {@code true}): endpoints made with
 *       {@code UCP_ERR_HANDLING_MODE_PEER}, so that a peer that dies or a link that fails reaches the pipeline as
 *       {@code exceptionCaught(IOException)} then {@code channelInactive}. On UCX 1.13 this keeps shared-memory
 *       transports out of the endpoints (TCP even between processes of one host); which transports later releases
 *       allow with it is theirs to decide (the tests assert TCP with it, shared memory without it). Turned off,
 *       UCX may use shared memory on one host, but a dead peer may never be noticed, and an endpoint is closed by
 *       flushing it.</li>
 *   <li>{@link Builder#windowBytes(int)} (default 4 MiB): how many bytes a channel may receive and hold before its
 *       application reads them; the sender stops at that many unacknowledged bytes. A channel's
 *       {@code SO_RCVBUF}, set before it connects, replaces it for that channel.</li>
 *   <li>{@link Builder#maxMessageBytes(int)} (default 1 MiB): the largest active message a write is cut into.</li>
 *   <li>{@link Builder#spinNanos(long)} (default: the system property {@code io.github.ucxffm.netty.spinNanos}, else
 *       0): how long an idle event loop keeps progressing before it sleeps on the worker's event descriptor.</li>
 *   <li>{@link Builder#dataProtocol(DataProtocol)} (default {@link DataProtocol#AUTOMATIC}): whether data messages
 *       go eager whatever their size, or by UCX's choice (rendezvous from its threshold).</li>
 *   <li>{@link Builder#sharedMemoryEagerBytes(int)} (default {@value #SHARED_MEMORY_EAGER_DEFAULT}): under
 *       {@link DataProtocol#AUTOMATIC}, the largest data message sent eager over shared memory whatever UCX's
 *       threshold.</li>
 * </ul>
 * Three UCX options have defaults of the transport's own, each used when neither the config nor the environment
 * sets it:
 * <ul>
 *   <li>where the transports ({@code TLS}) may include tcp, the tcp transport's receive segment
 *       ({@code TCP_RX_SEG_SIZE}, UCX's default 64K) and, on UCX 1.18 and later, its send segment
 *       ({@code TCP_TX_SEG_SIZE}, UCX's default 8K), both {@value #TCP_SEGMENT_DEFAULT}. UCX sends an eager message
 *       over tcp in fragments of at most a segment (1.18 and later the send segment, 1.13 the receive segment), each
 *       a message to handle on both sides. With 128K a 64 KiB write goes as one UCX message with its framing (a
 *       64 KiB gRPC message is 65,577 bytes with its HTTP/2 and gRPC headers), with 64K as two; measured in
 *       alternated runs, windows of 64 KiB echoes over tcp gained with 128K on UCX 1.13, 1.18 and 1.23, ping-pong on
 *       1.23, and gRPC streaming did not change beyond the noise (bench/RESULTS.md, round 19). UCX's 8K send segment
 *       halved the rate of 64 KiB echoes against 64K (round 13).
 *       A segment the user sets bounds the other's default, since UCX refuses to open tcp with a receive segment
 *       smaller than the send segment: with {@code TCP_RX_SEG_SIZE=32k} alone the send segment is 32k too, and with a
 *       send segment above {@value #TCP_SEGMENT_DEFAULT} the receive segment is left to the user. UCX 1.13 takes its
 *       transports' options through a context only by their names without the transport's prefix
 *       ({@code RX_SEG_SIZE}; {@code TCP_RX_SEG_SIZE} given that way draws an "invalid configuration" warning and
 *       is ignored); 1.18 and later take them with the prefix. On 1.14 to 1.17, which did not run here, the transport
 *       leaves both segments to UCX.</li>
 *   <li>{@code MAX_RNDV_RAILS} {@value #RNDV_RAILS_TCP_ALONE} where the transports ({@code TLS}) are tcp alone
 *       ({@code tcp}, with or without {@code self}) and the data protocol is not {@link DataProtocol#BY_SIZE}. There
 *       every data message goes eager, on the connection's first lane, so the second rendezvous lane UCX adds on a
 *       host with a second network device (UCX's default is two rails) carries nothing, while every progress call
 *       polls its interface too: an {@code epoll_wait} more for each, twice as many in all. Measured, gRPC streaming
 *       and 64 KiB echo windows over tcp gained with one rail (bench/RESULTS.md, round 18).</li>
 * </ul>
 * <p>
 * Over tcp alone, data messages are cut to fit one of UCX's tcp segments ({@link #tcpMessageBytes()}): UCP sends a
 * larger eager message in fragments and reassembles it on the receiving side in memory it allocates for each message,
 * one more copy of every byte before the transport's own. The segment is UCX's receive segment, and on UCX 1.18 and
 * later no larger than the send segment.
 */
public final class UcxTransportConfig {

    /** The UCX option {@link #contextDefaults} sets on UCX 1.18 and later: the tcp transport's send segment. */
    static final String TCP_SEGMENT = "TCP_TX_SEG_SIZE";
    /**
     * The value of the tcp transport's segments when neither the config nor the environment gives one: a 64 KiB write
     * and its framing in one UCX message.
     */
    static final String TCP_SEGMENT_DEFAULT = "128k";

    /** The UCX option {@link #contextDefaults} sets over tcp alone: how many lanes a rendezvous may use. */
    static final String RNDV_RAILS = "MAX_RNDV_RAILS";
    /** Its value over tcp alone, where no data goes by rendezvous. */
    static final String RNDV_RAILS_TCP_ALONE = "1";

    /** The UCX option of the tcp transport's receive segment, and UCX's value when nothing sets it (1.13 to 1.23). */
    static final String TCP_RX_SEGMENT = "TCP_RX_SEG_SIZE";
    /** The name under which UCX 1.13's context takes {@link #TCP_RX_SEGMENT}: without the transport's prefix. */
    static final String TCP_RX_SEGMENT_UNPREFIXED = "RX_SEG_SIZE";
    /** {@link #TCP_SEGMENT} without the transport's prefix, as UCX 1.13's context takes it. */
    static final String TCP_SEGMENT_UNPREFIXED = "TX_SEG_SIZE";
    static final long TCP_RX_SEGMENT_UCX_DEFAULT = 64 << 10;
    /** UCX's own send segment over tcp, where neither the transport's default nor the user sets one. */
    static final long TCP_TX_SEGMENT_UCX_DEFAULT = 8 << 10;
    /** What a data message over tcp leaves of a segment for the headers of UCT, UCP and the transport. */
    static final int TCP_SEGMENT_HEADROOM = 512;
    /** The smallest cut of a data message over tcp, however small the segment. */
    static final int TCP_MESSAGE_MIN = 1024;

    /** The default of {@link Builder#sharedMemoryEagerBytes(int)}: 256 KiB. */
    public static final int SHARED_MEMORY_EAGER_DEFAULT = 256 << 10;
    /**
     * The transports of a connection over which {@link DataProtocol#AUTOMATIC} sends data messages up to
     * {@link #sharedMemoryEagerBytes()} eager: UCX's shared-memory transports without a zero-copy kernel module,
     * loopback, and tcp beside them (a connection over tcp alone is {@code AUTOMATIC}'s other case).
     */
    static final java.util.Set<String> SHARED_MEMORY_LANES = java.util.Set.of("posix", "sysv", "cma", "self", "tcp");

    /** The system property that gives the default of {@link Builder#spinNanos(long)}. */
    public static final String SPIN_NANOS_PROPERTY = "io.github.ucxffm.netty.spinNanos";

    private static final UcxTransportConfig DEFAULT = builder().build();

    private final Map<String, String> ucxConfig;
    private final String name;
    private final boolean peerErrorHandling;
    private final int windowBytes;
    private final int maxMessageBytes;
    private final long spinNanos;
    private final DataProtocol dataProtocol;
    private final int sharedMemoryEagerBytes;
    /** {@link #tcpMessageBytes()}, worked out on first use; 0 before. */
    private volatile int tcpMessageBytes;
    /** {@link #tcpReceiveBytes()}, worked out on first use; 0 before. */
    private volatile int tcpReceiveBytes;

    /** How a channel's data messages travel: eager (the data with the message) or by rendezvous (fetched). */
    public enum DataProtocol {
        /**
         * Eager on a connection whose lanes all use UCX's tcp transport; over shared memory (lanes all among
         * {@code posix}, {@code sysv}, {@code cma}, {@code self} and {@code tcp}) eager up to
         * {@link #sharedMemoryEagerBytes()} and UCX's choice by size above; UCX's choice by size on any other
         * connection (RDMA, GPU, {@code knem} or {@code xpmem}). Over tcp a rendezvous copies as much as eager does
         * (UCX 1.13 has no zero-copy fetch over tcp) and adds a request, an answer and an acknowledgement, each a
         * socket call and a turn of both loops: measured, eager carried 64 KiB messages two to three times faster.
         * Over shared memory a rendezvous is a single copy straight into the receiving buffer, but its request and
         * answer each wait for a turn of the other side's loop, often asleep: measured, eager carried gRPC's
         * streamed 64 KiB messages 20 to 42 % faster on UCX 1.18 and 1.23 (within the runs' spread on 1.13), 256 KiB
         * echoes 24 to 53 % faster on all three, large gathered flushes (up to 1 MiB) no faster, and a lone 64 KiB
         * echo each way up to 15 % slower on 1.18 and 1.23. Over RDMA a rendezvous is zero-copy. The lanes are read
         * from UCX ({@code UcpEndpoint.transports()}) before the channel's first data message.
         */
        AUTOMATIC,
        /** Every data message eager ({@code UCP_AM_SEND_FLAG_EAGER}); UCX reassembles large ones in its memory. */
        EAGER,
        /** UCX's choice by size: rendezvous from its threshold ({@code UCX_RNDV_THRESH}), eager below it. */
        BY_SIZE
    }

    private UcxTransportConfig(Builder b) {
        this.ucxConfig = Collections.unmodifiableMap(new LinkedHashMap<>(b.ucxConfig));
        this.name = b.name;
        this.peerErrorHandling = b.peerErrorHandling;
        this.windowBytes = b.windowBytes;
        this.maxMessageBytes = Math.min(b.maxMessageBytes, b.windowBytes);
        this.spinNanos = b.spinNanos;
        this.dataProtocol = b.dataProtocol;
        this.sharedMemoryEagerBytes = b.sharedMemoryEagerBytes;
    }

    /**
     * The UCX options the transport sets on its contexts beside {@code options}: those of its own defaults that apply
     * to {@code ucx} and {@code protocol} and that neither {@code options} nor the environment
     * ({@code UCX_}<i>key</i>) sets.
     *
     * @param options     a config's UCX options
     * @param environment the environment's variables by name
     * @param ucx         the UCX release the contexts run on
     * @param protocol    the config's data protocol
     * @return options to set before {@code options}, in a fixed order
     */
    static Map<String, String> contextDefaults(Map<String, String> options,
                                               Function<String, String> environment,
                                               UcxVersion ucx, DataProtocol protocol) {
        Map<String, String> m = new LinkedHashMap<>();
        String tls = options.containsKey("TLS") ? options.get("TLS") : environment.apply("UCX_TLS");
        // an option of a transport the context does not open draws UCX's "invalid configuration" warning
        if (tlsMayUseTcp(tls)) {
            // UCX refuses to open tcp (and so to create a worker) with a receive segment smaller than the send
            // segment: a segment the user chose bounds the default of the other, or keeps it unset when unreadable
            String userRx = userValue(TCP_RX_SEGMENT, TCP_RX_SEGMENT_UNPREFIXED, options, environment);
            String userTx = userValue(TCP_SEGMENT, TCP_SEGMENT_UNPREFIXED, options, environment);
            long segment = parseUcxBytes(TCP_SEGMENT_DEFAULT);
            String rxSegment = rxSegmentOption(ucx);
            if (rxSegment != null && userRx == null
                    && (userTx == null || between(parseUcxBytes(userTx), 1, segment))) {
                m.put(rxSegment, TCP_SEGMENT_DEFAULT);
            }
            if (ucx.atLeast(1, 18) && userTx == null) {
                long rx = userRx == null ? segment : parseUcxBytes(userRx);
                if (rx > 0) {
                    m.put(TCP_SEGMENT, rx >= segment ? TCP_SEGMENT_DEFAULT : userRx.trim());
                }
            }
        }
        if (protocol != DataProtocol.BY_SIZE && tlsTcpAlone(tls) && unset(RNDV_RAILS, options, environment)) {
            m.put(RNDV_RAILS, RNDV_RAILS_TCP_ALONE);
        }
        return m;
    }

    /**
     * The name under which a context on {@code ucx} takes the tcp transport's receive segment, or {@code null} where
     * that was not tried: UCX 1.13 takes it without the transport's prefix and 1.18 and later with it (and refuse it
     * without, 1.23 with an error); 1.14 to 1.17 did not run here.
     */
    static String rxSegmentOption(UcxVersion ucx) {
        return ucx.atLeast(1, 18) ? TCP_RX_SEGMENT : ucx.atLeast(1, 14) ? null : TCP_RX_SEGMENT_UNPREFIXED;
    }

    /**
     * What the user set for a tcp option: in the config under its name or its name without the transport's prefix
     * (UCX 1.13's), else in the environment; {@code null} if nowhere.
     */
    private static String userValue(String key, String unprefixed, Map<String, String> options,
                                    Function<String, String> environment) {
        String v = options.containsKey(key) ? options.get(key) : options.get(unprefixed);
        return v != null ? v : environment.apply("UCX_" + key);
    }

    private static boolean between(long value, long min, long max) {
        return value >= min && value <= max;
    }

    private static boolean unset(String key, Map<String, String> options, Function<String, String> environment) {
        return !options.containsKey(key) && environment.apply("UCX_" + key) == null;
    }

    /**
     * Whether a {@code UCX_TLS} value may bring in UCX's tcp transport: none set (UCX's default, all), {@code all},
     * tcp named, or a negation ({@code ^...}) that does not name it.
     */
    static boolean tlsMayUseTcp(String tls) {
        if (tls == null || tls.isBlank()) {
            return true;
        }
        String list = tls.trim();
        boolean negation = list.startsWith("^");
        boolean named = false;
        for (String t : (negation ? list.substring(1) : list).split(",")) {
            String name = t.trim().toLowerCase(Locale.ROOT);
            if (name.startsWith("\\")) {
                name = name.substring(1); // UCX's mark for a name that is not an alias
            }
            int colon = name.indexOf(':');
            if (colon >= 0) {
                name = name.substring(0, colon); // tcp:aux
            }
            if (name.equals("all") && !negation) {
                return true;
            }
            named |= name.equals("tcp");
        }
        return negation != named;
    }

    /**
     * Whether a {@code UCX_TLS} value names tcp and nothing else but {@code self}. A negation ({@code ^...}), an alias
     * or UCX's default (none set) may bring in other transports, so those are not tcp alone.
     */
    static boolean tlsTcpAlone(String tls) {
        if (tls == null) {
            return false;
        }
        boolean tcp = false;
        for (String t : tls.split(",")) {
            String name = t.trim().toLowerCase(Locale.ROOT);
            if (name.equals("tcp")) {
                tcp = true;
            } else if (!name.equals("self")) {
                return false;
            }
        }
        return tcp;
    }

    /**
     * The largest data message that UCX sends over tcp in one fragment: {@link #TCP_SEGMENT_HEADROOM} less than the
     * tcp segment of the contexts, which is the receive segment and, on UCX 1.18 and later, no larger than the send
     * segment. Each comes from {@code contextOptions} under the name that reaches UCX on {@code ucx}
     * ({@link #rxSegmentOption}; no send segment before 1.18), else from the environment ({@code UCX_}<i>key</i>),
     * else UCX's default. A value UCX would not parse counts as the default (UCX then refuses it itself).
     *
     * @param contextOptions what a context gets ({@link #contextOptions()})
     * @param environment    the environment's variables by name
     * @param ucx            the UCX release the contexts run on
     * @return bytes, at least {@link #TCP_MESSAGE_MIN}
     */
    static int tcpMessageBytes(Map<String, String> contextOptions, Function<String, String> environment,
                               UcxVersion ucx) {
        int n = tcpReceiveBytes(contextOptions, environment, ucx);
        if (ucx.atLeast(1, 18)) { // from 1.18 on UCX sends eager messages over tcp in send segments; 1.13 does not
            n = Math.min(n, lessHeadroom(segmentBytes(TCP_SEGMENT, TCP_SEGMENT, TCP_TX_SEGMENT_UCX_DEFAULT,
                    contextOptions, environment)));
        }
        return n;
    }

    /**
     * The largest data message that this side's contexts take in over tcp: {@link #TCP_SEGMENT_HEADROOM} less than the
     * receive segment, found as in {@link #tcpMessageBytes(Map, Function, UcxVersion)}. UCX's tcp transport aborts the
     * process that receives a message larger than its receive segment (an assertion in {@code tcp_ep.c}; 1.23 resets
     * the connection instead) and does not tell its peer the size, so each side sends its own in the connection's
     * hello and the other cuts its data messages to it (docs/UCX-BEHAVIOUR.md).
     *
     * @param contextOptions what a context gets ({@link #contextOptions()})
     * @param environment    the environment's variables by name
     * @param ucx            the UCX release the contexts run on
     * @return bytes, at least {@link #TCP_MESSAGE_MIN}
     */
    static int tcpReceiveBytes(Map<String, String> contextOptions, Function<String, String> environment,
                               UcxVersion ucx) {
        return lessHeadroom(segmentBytes(rxSegmentOption(ucx), TCP_RX_SEGMENT, TCP_RX_SEGMENT_UCX_DEFAULT,
                contextOptions, environment));
    }

    /** The data a message may carry in one tcp segment of {@code segment} bytes. */
    private static int lessHeadroom(long segment) {
        return (int) Math.max(TCP_MESSAGE_MIN, Math.min(Integer.MAX_VALUE, segment - TCP_SEGMENT_HEADROOM));
    }

    private static long segmentBytes(String optionKey, String environmentKey, long ucxDefault,
                                     Map<String, String> options, Function<String, String> environment) {
        String value = optionKey == null ? null : options.get(optionKey);
        if (value == null) {
            value = environment.apply("UCX_" + environmentKey);
        }
        long bytes = value == null ? -1 : parseUcxBytes(value);
        return bytes > 0 ? bytes : ucxDefault;
    }

    /**
     * A size as UCX writes one ({@code 65536}, {@code 64k}, {@code 64K}, {@code 64kb}, {@code 1m}, {@code 1g}), or -1
     * when it is not one.
     *
     * @param value the text
     * @return the bytes, or -1
     */
    static long parseUcxBytes(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.endsWith("b")) {
            v = v.substring(0, v.length() - 1);
        }
        int shift = 0;
        if (!v.isEmpty()) {
            switch (v.charAt(v.length() - 1)) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                default -> {
                }
            }
        }
        if (shift != 0) {
            v = v.substring(0, v.length() - 1);
        }
        if (v.isEmpty() || v.length() > 18 || !v.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        try {
            return Math.multiplyExact(Long.parseLong(v), 1L << shift);
        } catch (ArithmeticException tooLarge) {
            return -1;
        }
    }

    /**
     * The default settings: UCX options from the environment only, peer error handling, 4 MiB windows.
     *
     * @return the default config
     */
    public static UcxTransportConfig defaults() {
        return DEFAULT;
    }

    /**
     * Starts a config.
     *
     * @return a builder with the defaults
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The UCX options set for the context, keys without the {@code UCX_} prefix.
     *
     * @return an unmodifiable map, in the order they were set
     */
    public Map<String, String> ucxConfig() {
        return ucxConfig;
    }

    /**
     * The UCX options a context of this config gets on the UCX release loaded: the transport's own defaults that
     * apply there and that neither this config nor the environment sets (see the class comment), then
     * {@link #ucxConfig()}. UCX reads the environment's {@code UCX_} variables for the rest.
     *
     * @return an unmodifiable map, keys without the {@code UCX_} prefix
     */
    public Map<String, String> contextOptions() {
        Map<String, String> m = new LinkedHashMap<>(contextDefaults(ucxConfig, System::getenv, UcxVersion.runtime(),
                dataProtocol));
        m.putAll(ucxConfig);
        return Collections.unmodifiableMap(m);
    }

    /**
     * The context's name for UCX's logs, or {@code null}.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Whether endpoints report peer failures ({@code UCP_ERR_HANDLING_MODE_PEER}).
     *
     * @return {@code true} by default
     */
    public boolean peerErrorHandling() {
        return peerErrorHandling;
    }

    /**
     * The receive window of a channel in bytes.
     *
     * @return the window
     */
    public int windowBytes() {
        return windowBytes;
    }

    /**
     * The largest active message a write is cut into.
     *
     * @return bytes
     */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /**
     * The largest data message a channel whose lanes are all UCX's tcp transport sends when its data goes eager: what
     * UCX sends in one fragment, so that neither side handles a message in pieces (see the class comment). A write is
     * cut at the smaller of this and {@link #maxMessageBytes()} there.
     *
     * @return bytes, for the UCX loaded in this process and this process's environment
     */
    public int tcpMessageBytes() {
        int n = tcpMessageBytes;
        if (n == 0) {
            n = tcpMessageBytes(contextOptions(), System::getenv, UcxVersion.runtime());
            tcpMessageBytes = n;
        }
        return n;
    }

    /**
     * The largest data message the event loops of this config take in over tcp, which a peer's channel cuts its data
     * messages to (sent in the connection's hello).
     *
     * @return bytes, for the UCX loaded in this process and this process's environment
     */
    int tcpReceiveBytes() {
        int n = tcpReceiveBytes;
        if (n == 0) {
            n = tcpReceiveBytes(contextOptions(), System::getenv, UcxVersion.runtime());
            tcpReceiveBytes = n;
        }
        return n;
    }

    /**
     * How long an idle event loop spins before sleeping.
     *
     * @return nanoseconds, 0 for none
     */
    public long spinNanos() {
        return spinNanos;
    }

    /**
     * How data messages choose between eager and rendezvous.
     *
     * @return the protocol choice
     */
    public DataProtocol dataProtocol() {
        return dataProtocol;
    }

    /**
     * The largest data message that {@link DataProtocol#AUTOMATIC} sends eager over shared memory.
     *
     * @return bytes, 0 for UCX's choice by size at every size
     */
    public int sharedMemoryEagerBytes() {
        return sharedMemoryEagerBytes;
    }

    /**
     * The largest data message a connection over {@code lanes} sends eager whatever UCX's threshold: under
     * {@link DataProtocol#AUTOMATIC}, {@link #sharedMemoryEagerBytes()} when the lanes are all among
     * {@link #SHARED_MEMORY_LANES} and not all tcp (those send every message eager); 0 otherwise.
     *
     * @param lanes the transports of the connection's lanes, none when unknown
     * @return bytes, 0 for none
     */
    int eagerUpTo(java.util.Set<String> lanes) {
        boolean sharedMemory = !lanes.isEmpty() && SHARED_MEMORY_LANES.containsAll(lanes)
                && !UcxSocketChannel.tcpAlone(lanes);
        return dataProtocol == DataProtocol.AUTOMATIC && sharedMemory ? sharedMemoryEagerBytes : 0;
    }

    /** What decides whether two configs can share a {@code UcpContext}. */
    Object contextKey() {
        return Map.entry(contextOptions(), Objects.toString(name, "")); // the defaults depend on the data protocol
    }

    @Override
    public String toString() {
        return "UcxTransportConfig[ucx=" + ucxConfig + ", name=" + name + ", peerErrorHandling=" + peerErrorHandling
                + ", windowBytes=" + windowBytes + ", maxMessageBytes=" + maxMessageBytes + ", spinNanos=" + spinNanos
                + ", dataProtocol=" + dataProtocol + ", sharedMemoryEagerBytes=" + sharedMemoryEagerBytes + "]";
    }

    /** Builds a {@link UcxTransportConfig}. Not thread-safe. */
    public static final class Builder {
        private final Map<String, String> ucxConfig = new LinkedHashMap<>();
        private String name;
        private boolean peerErrorHandling = true;
        private int windowBytes = 4 << 20;
        private int maxMessageBytes = 1 << 20;
        private long spinNanos = Long.getLong(SPIN_NANOS_PROPERTY, 0L);
        private DataProtocol dataProtocol = DataProtocol.AUTOMATIC;
        private int sharedMemoryEagerBytes = SHARED_MEMORY_EAGER_DEFAULT;

        private Builder() {
        }

        /**
         * Sets a UCX option of the context ({@code UcpContext.Builder.config}).
         *
         * @param key   the option, with or without {@code UCX_} ({@code "TLS"})
         * @param value its value ({@code "tcp"})
         * @return this builder
         */
        public Builder config(String key, String value) {
            Objects.requireNonNull(key, "key");
            String k = key.startsWith("UCX_") ? key.substring(4) : key;
            if (k.isEmpty()) {
                throw new IllegalArgumentException("empty UCX option name: '" + key + "'");
            }
            ucxConfig.put(k, Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Names the context in UCX's logs; configs with different names get different contexts.
         *
         * @param contextName the name, or {@code null}
         * @return this builder
         */
        public Builder name(String contextName) {
            this.name = contextName;
            return this;
        }

        /**
         * Whether endpoints report peer failures (see the class comment).
         *
         * @param enabled {@code false} for {@code UCP_ERR_HANDLING_MODE_NONE}
         * @return this builder
         */
        public Builder peerErrorHandling(boolean enabled) {
            this.peerErrorHandling = enabled;
            return this;
        }

        /**
         * The receive window of each channel.
         *
         * @param bytes at least 4096
         * @return this builder
         */
        public Builder windowBytes(int bytes) {
            if (bytes < 4096) {
                throw new IllegalArgumentException("windowBytes must be at least 4096: " + bytes);
            }
            this.windowBytes = bytes;
            return this;
        }

        /**
         * The largest active message; a larger write goes as several.
         *
         * @param bytes at least 1024; capped at the window
         * @return this builder
         */
        public Builder maxMessageBytes(int bytes) {
            if (bytes < 1024) {
                throw new IllegalArgumentException("maxMessageBytes must be at least 1024: " + bytes);
            }
            this.maxMessageBytes = bytes;
            return this;
        }

        /**
         * How long an idle event loop spins before sleeping.
         *
         * @param nanos 0 or more
         * @return this builder
         */
        public Builder spinNanos(long nanos) {
            if (nanos < 0) {
                throw new IllegalArgumentException("spinNanos must not be negative: " + nanos);
            }
            this.spinNanos = nanos;
            return this;
        }

        /**
         * How data messages choose between eager and rendezvous.
         *
         * @param protocol the choice; {@link DataProtocol#AUTOMATIC} by default
         * @return this builder
         */
        public Builder dataProtocol(DataProtocol protocol) {
            this.dataProtocol = Objects.requireNonNull(protocol, "protocol");
            return this;
        }

        /**
         * The largest data message that {@link DataProtocol#AUTOMATIC} sends eager over shared memory, whatever UCX's
         * rendezvous threshold; a larger one goes by UCX's choice. UCX reassembles an eager message in memory of its
         * own when it comes in several fragments, so this also bounds what it allocates per message. Streams gain
         * most from the default; an application that sends one large message at a time each way and waits for the
         * answer (a 64 KiB request and response) was up to 15 % faster with 0 on UCX 1.18 and 1.23 when its loops
         * slept between messages; with loops that spin ({@link #spinNanos(long)}) the same exchange took 29 % less
         * time eager (UCX 1.13.1).
         *
         * @param bytes 0 (UCX's choice at every size) or more
         * @return this builder
         */
        public Builder sharedMemoryEagerBytes(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("sharedMemoryEagerBytes must not be negative: " + bytes);
            }
            this.sharedMemoryEagerBytes = bytes;
            return this;
        }

        /**
         * Makes the config.
         *
         * @return the config
         */
        public UcxTransportConfig build() {
            return new UcxTransportConfig(this);
        }
    }
}
