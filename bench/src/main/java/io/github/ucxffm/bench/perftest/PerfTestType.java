package io.github.ucxffm.bench.perftest;

import java.util.Locale;

/**
 * The tests of {@code ucx_perftest} that the Java runners implement (UCP tests, and four UCT tests that only the
 * ucx-ffm runner runs), with the shape each has there: a ping-pong
 * (the latency is half a round trip) or a one-way stream of operations with a window of outstanding ones, the label
 * of the first column group ({@code latency} or {@code overhead}) and the default window ({@code -O}).
 * <p>
 * The defaults were read from {@code ucx_perftest} 1.13.1 by running it: the one-sided fetching tests ({@code ucp_get},
 * {@code ucp_fadd}, {@code ucp_swap}, {@code ucp_cswap}) keep one operation in flight, so their latency is a whole
 * round trip; the bandwidth tests keep 32.
 */
public enum PerfTestType {
    /** Tag ping-pong. */
    TAG_LAT("tag match latency", Pattern.PING_PONG, Operation.TAG, 1),
    /** Tag sends, a window of them, to pre-posted receives. */
    TAG_BW("tag match bandwidth", Pattern.STREAM, Operation.TAG, 32),
    /** Tag ping-pong with synchronous sends (complete when the peer matched them). */
    TAG_SYNC_LAT("tag sync match latency", Pattern.PING_PONG, Operation.TAG_SYNC, 1),
    /** Synchronous tag sends, a window of them. */
    TAG_SYNC_BW("tag sync match bandwidth", Pattern.STREAM, Operation.TAG_SYNC, 32),
    /** Stream ping-pong. */
    STREAM_LAT("stream latency", Pattern.PING_PONG, Operation.STREAM, 1),
    /** Stream sends, a window of them. */
    STREAM_BW("stream bandwidth", Pattern.STREAM, Operation.STREAM, 32),
    /** Active-message ping-pong. */
    UCP_AM_LAT("am latency", Pattern.PING_PONG, Operation.AM, 1),
    /** Active messages, a window of them. */
    UCP_AM_BW("am bandwidth / message rate", Pattern.STREAM, Operation.AM, 32),
    /** Put ping-pong through memory: each side waits for the last byte of the peer's put to change. */
    UCP_PUT_LAT("put latency", Pattern.PING_PONG, Operation.PUT, 1),
    /** Puts, a window of them, then a flush. */
    UCP_PUT_BW("put bandwidth", Pattern.STREAM, Operation.PUT, 32),
    /** Gets; one in flight by default, so the latency is a round trip. */
    UCP_GET("get latency / bandwidth / message rate", Pattern.STREAM, Operation.GET, 1),
    /** Posted atomic adds, a window of them. */
    UCP_ADD("atomic add bandwidth / message rate", Pattern.STREAM, Operation.ADD, 32),
    /** Fetching atomic adds; one in flight by default. */
    UCP_FADD("atomic fetch-and-add latency / bandwidth / rate", Pattern.STREAM, Operation.FADD, 1),
    /** Atomic swaps; one in flight by default. */
    UCP_SWAP("atomic swap latency / bandwidth / rate", Pattern.STREAM, Operation.SWAP, 1),
    /** Atomic compare-and-swaps; one in flight by default. */
    UCP_CSWAP("atomic compare-and-swap latency / bandwidth / rate", Pattern.STREAM, Operation.CSWAP, 1),
    /** UCT active-message ping-pong ({@code uct_ep_am_*} and an AM handler). */
    AM_LAT("active message latency", Pattern.PING_PONG, Operation.AM, 1, Api.UCT),
    /** UCT put ping-pong through memory, as {@code ucp_put_lat}. */
    PUT_LAT("put latency", Pattern.PING_PONG, Operation.PUT, 1, Api.UCT),
    /** UCT active messages with the receiver's acknowledgements as flow control. */
    AM_BW("active message bandwidth / message rate", Pattern.STREAM, Operation.AM, 32, Api.UCT),
    /** UCT puts, ended by a sentinel put the receiver waits for. */
    PUT_BW("put bandwidth / message rate", Pattern.STREAM, Operation.PUT, 32, Api.UCT);

    /** The UCX layer a test measures. */
    public enum Api {
        /** The protocol layer, {@code ucp_*}: the transports come from {@code UCX_TLS}. */
        UCP,
        /** The transport layer, {@code uct_*}: one transport and device, {@code -x TL -d DEV}. */
        UCT
    }

    /** How the two sides take turns. */
    public enum Pattern {
        /** Request and reply; the reported latency is half the round trip. */
        PING_PONG,
        /** The client issues operations with a window of outstanding ones; the server only receives or progresses. */
        STREAM
    }

    /** The UCP operation under test. */
    public enum Operation {
        /** {@code ucp_tag_send_nbx} / {@code ucp_tag_recv_nbx}. */
        TAG,
        /** {@code ucp_tag_send_sync_nbx} / {@code ucp_tag_recv_nbx}. */
        TAG_SYNC,
        /** {@code ucp_stream_send_nbx} / {@code ucp_stream_recv_nbx}. */
        STREAM,
        /** {@code ucp_am_send_nbx} and a receive handler. */
        AM,
        /** {@code ucp_put_nbx}. */
        PUT,
        /** {@code ucp_get_nbx}. */
        GET,
        /** {@code ucp_atomic_op_nbx} ADD without a result. */
        ADD,
        /** {@code ucp_atomic_op_nbx} ADD with a result. */
        FADD,
        /** {@code ucp_atomic_op_nbx} SWAP. */
        SWAP,
        /** {@code ucp_atomic_op_nbx} CSWAP. */
        CSWAP;

        /** Whether the server's memory is the target (it sends a remote key). */
        public boolean isOneSided() {
            return this.ordinal() >= PUT.ordinal();
        }

        /** Whether the operand is an atomic word, 4 or 8 bytes. */
        public boolean isAtomic() {
            return this.ordinal() >= ADD.ordinal();
        }
    }

    private final String description;
    private final Pattern pattern;
    private final Operation operation;
    private final int defaultWindow;
    private final Api api;

    PerfTestType(String description, Pattern pattern, Operation operation, int defaultWindow) {
        this(description, pattern, operation, defaultWindow, Api.UCP);
    }

    PerfTestType(String description, Pattern pattern, Operation operation, int defaultWindow, Api api) {
        this.description = description;
        this.pattern = pattern;
        this.operation = operation;
        this.defaultWindow = defaultWindow;
        this.api = api;
    }

    /**
     * The UCX layer the test measures.
     *
     * @return {@link Api#UCP} or {@link Api#UCT}
     */
    public Api api() {
        return api;
    }

    /**
     * Whether the test is one of {@code ucx_perftest}'s UCT tests, run on one transport and device.
     *
     * @return {@code true} for {@code am_lat}, {@code put_lat}, {@code am_bw}, {@code put_bw}
     */
    public boolean isUct() {
        return api == Api.UCT;
    }

    /**
     * The name {@code ucx_perftest -t} takes.
     *
     * @return e.g. {@code tag_lat}
     */
    public String testName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The test's description, as {@code ucx_perftest} prints it in its {@code Test:} line.
     *
     * @return e.g. {@code tag match latency}
     */
    public String description() {
        return description;
    }

    /**
     * How the sides take turns.
     *
     * @return the pattern
     */
    public Pattern pattern() {
        return pattern;
    }

    /**
     * The operation measured.
     *
     * @return the operation
     */
    public Operation operation() {
        return operation;
    }

    /**
     * The window used when {@code -O} is not given.
     *
     * @return outstanding operations
     */
    public int defaultWindow() {
        return defaultWindow;
    }

    /**
     * The label of the first column group, as {@code ucx_perftest} prints it.
     *
     * @return {@code latency} or {@code overhead}
     */
    public String timeLabel() {
        return pattern == Pattern.PING_PONG || defaultWindow == 1 ? "latency" : "overhead";
    }

    /**
     * What the reported time is divided by: 2 for a ping-pong (half a round trip), 1 otherwise.
     *
     * @return the factor
     */
    public int timeFactor() {
        return pattern == Pattern.PING_PONG ? 2 : 1;
    }

    /**
     * Looks a test up by its {@code ucx_perftest} name.
     *
     * @param name e.g. {@code tag_bw}
     * @return the test
     * @throws IllegalArgumentException naming the known tests
     */
    public static PerfTestType byName(String name) {
        for (PerfTestType t : values()) {
            if (t.testName().equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown test '" + name + "'; this runner knows: " + names());
    }

    /**
     * The names of all tests, comma-separated.
     *
     * @return the list
     */
    public static String names() {
        StringBuilder b = new StringBuilder();
        for (PerfTestType t : values()) {
            if (!b.isEmpty()) {
                b.append(", ");
            }
            b.append(t.testName());
        }
        return b.toString();
    }
}
