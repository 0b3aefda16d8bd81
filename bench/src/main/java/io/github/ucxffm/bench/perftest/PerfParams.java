package io.github.ucxffm.bench.perftest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The command line of a {@code ucx_perftest}-compatible runner: the options {@code ucx_perftest} has for UCP tests
 * that these runners support, with the same letters and defaults, and an optional server host name (a client when
 * given, a server otherwise).
 *
 * @param runner       the program name, for messages
 * @param test         the test ({@code -t}); {@code null} on a server, which learns it from the client
 * @param size         message size in bytes ({@code -s}, one size: no scatter-gather list)
 * @param iterations   measured iterations ({@code -n})
 * @param warmup       warm-up iterations asked for ({@code -w}); {@link #effectiveWarmup()} is what runs
 * @param port         the port the server listens on and the client connects to ({@code -p})
 * @param window       outstanding operations ({@code -O}); {@code 0} means the test's default
 * @param host         the server to connect to; {@code null} to be the server
 * @param transports   UCX transports ({@code -x}), or {@code null} to use {@code UCX_TLS} from the environment
 * @param finalOnly    print only the final numbers ({@code -f})
 * @param percentile   percentile rank of the latency column ({@code -R})
 * @param sleep        wait mode ({@code -E}): {@code true} for {@code sleep} (when a progress call finds nothing to
 *                     do, block in {@code ucp_worker_wait} until the worker has events), {@code false} for
 *                     {@code poll} (call progress in a loop)
 * @param threads      threads ({@code -T}), each with its own worker and endpoint
 * @param device       the UCT device ({@code -d}, UCT tests only), or {@code null}
 * @param layout       the UCT data layout ({@code -D}, UCT tests only), or {@code null} for the default
 * @param paired       round trips per block of a paired run ({@code --paired[=N]}, not a {@code ucx_perftest}
 *                     option): blocks through the binding in turn with blocks of the same loop in C on the same
 *                     worker and endpoint ({@link PairedBlocks}); {@code 0} for an ordinary run
 */
public record PerfParams(String runner, PerfTestType test, long size, long iterations, long warmup, int port,
                         int window, String host, String transports, boolean finalOnly, double percentile,
                         boolean sleep, int threads, String device, UctLayout layout, int paired) {

    /** Round trips per block of {@code --paired} without a number. */
    public static final int DEFAULT_PAIRED_BLOCK = 1000;
    /** The largest block {@code --paired=N} takes. */
    public static final int MAX_PAIRED_BLOCK = 1 << 20;

    /** The most threads {@code -T} takes. */
    public static final int MAX_THREADS = 64;

    /** {@code ucx_perftest}'s default port. */
    public static final int DEFAULT_PORT = 13337;
    /** {@code ucx_perftest}'s default iteration count. */
    public static final long DEFAULT_ITERATIONS = 1_000_000;
    /** {@code ucx_perftest}'s default warm-up. */
    public static final long DEFAULT_WARMUP = 10_000;

    /** Raised for a command line the runner cannot run; {@link #getMessage()} says why. */
    public static final class UsageException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * An unusable command line.
         *
         * @param message why, for the user
         */
        public UsageException(String message) {
            super(message);
        }
    }

    /** Raised for {@code -h}: print {@link #usage(String)} and exit 0. */
    public static final class HelpRequested extends RuntimeException {
        private static final long serialVersionUID = 1L;

        HelpRequested() {
            super("help");
        }
    }

    /**
     * The help text.
     *
     * @param runner the program name
     * @return the text
     */
    public static String usage(String runner) {
        return "Usage: " + runner + " [ server-hostname ] [ options ]\n"
                + "\n"
                + "  A ucx_perftest-compatible runner: run it without a host name as the server, then with the\n"
                + "  server's host name as the client, which sends the test parameters to the server.\n"
                + "\n"
                + "  Options (the ucx_perftest options for UCP tests that this runner supports):\n"
                + "     -t <test>      test to run:\n"
                + testList()
                + "     -s <size>      message size in bytes (8); one size, no scatter-gather list.\n"
                + "                    Atomic tests take 4 or 8\n"
                + "     -n <iters>     number of iterations to run (" + DEFAULT_ITERATIONS + ")\n"
                + "     -w <iters>     number of warm-up iterations (" + DEFAULT_WARMUP + "); as in ucx_perftest,\n"
                + "                    at most a tenth of -n (rounded up) is run\n"
                + "     -O <count>     maximal number of uncompleted outstanding operations (0: the test's\n"
                + "                    default, 1 for latency tests, ucp_get and fetching atomics, 32 otherwise)\n"
                + "     -p <port>      TCP port the server listens on; the two swap UCX worker addresses there,\n"
                + "                    as ucx_perftest does (" + DEFAULT_PORT + ")\n"
                + "     -x <tls>       UCX transports, as UCX_TLS (default: UCX_TLS from the environment, or all)\n"
                + "     -R <rank>      percentile rank of the percentile column, in [0, 100] (50.0); taken over\n"
                + "                    the most recent " + PerfReport.QUEUE + " iterations, as in ucx_perftest\n"
                + "     -E <mode>      wait mode: poll (call progress in a loop; the default) or sleep (when\n"
                + "                    progress finds nothing to do, block in ucp_worker_wait on the worker's\n"
                + "                    event fd, as ucx_perftest -E sleep does)\n"
                + "     -T <threads>   threads (1), each with its own worker and endpoint to the peer's\n"
                + "                    matching thread, as ucx_perftest -T; the Final line then sums the\n"
                + "                    bandwidths and message rates and averages the latencies of the threads\n"
                + "     -f             print only final numbers\n"
                + "     -h             show this help message\n"
                + "\n"
                + "  Not in ucx_perftest (client only; the server follows the client):\n"
                + "     --paired[=N]   tag_lat, tag_sync_lat, stream_lat, ucp_am_lat: blocks of N round trips (" +
                DEFAULT_PAIRED_BLOCK + ")\n"
                + "                    through the binding, the same loop in C and the C loop's calls made\n"
                + "                    from Java through plain FFM downcalls, in turn, on the same worker and\n"
                + "                    endpoint; after Final: (the binding's blocks), a Paired: line (binding\n"
                + "                    against C: each kind's median one-way p50, the median ratio of a block\n"
                + "                    to the next) and a Paired FFM: line (plain FFM against C, binding\n"
                + "                    against plain FFM). Needs UCXFFM_PAIRED_LIBRARY, the library built from\n"
                + "                    bench/native/ucp_paired.c (./ucx-ffm perftest does it)\n"
                + "\n"
                + "  UCT tests (am_lat, put_lat, am_bw, put_bw):\n"
                + "     -x <tl>        transport to use, e.g. posix, sysv, cma, tcp\n"
                + "     -d <device>    device to use, e.g. memory (posix, sysv, cma) or lo (tcp)\n"
                + "     -D <layout>    data layout for the sender side: short (default), bcopy or zcopy\n"
                + "  A UCT server needs -d (any device; the client's -x and -d are used).\n"
                + "\n"
                + "  As ucx_perftest does, client and server swap addresses over a plain TCP socket on -p and\n"
                + "  connect by address; endpoints have no peer error handling, as in ucx_perftest.\n";
    }

    private static String testList() {
        StringBuilder b = new StringBuilder();
        for (PerfTestType t : PerfTestType.values()) {
            b.append(String.format(Locale.ROOT, "          %15s - %s%n", t.testName(), t.description()));
        }
        return b.toString();
    }

    /**
     * Parses a command line the way {@code ucx_perftest} does: options in any order, a value either attached
     * ({@code -s8}) or as the next argument, one host name anywhere.
     *
     * @param runner the program name, for messages
     * @param args   the arguments
     * @return the parameters
     * @throws UsageException for an unknown or unsupported option, a bad value, or a client without {@code -t}
     * @throws HelpRequested  for {@code -h}
     */
    public static PerfParams parse(String runner, String... args) {
        PerfTestType test = null;
        long size = 8;
        long iterations = DEFAULT_ITERATIONS;
        long warmup = DEFAULT_WARMUP;
        int port = DEFAULT_PORT;
        int window = 0;
        String host = null;
        String tls = null;
        boolean finalOnly = false;
        double percentile = 50.0;
        boolean sleep = false;
        int threads = 1;
        String device = null;
        UctLayout layout = null;
        int paired = 0;
        List<String> hosts = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("-") || a.length() < 2) {
                hosts.add(a);
                continue;
            }
            if (a.equals("--help")) {
                throw new HelpRequested();
            }
            if (a.equals("--paired")) {
                paired = DEFAULT_PAIRED_BLOCK;
                continue;
            }
            if (a.startsWith("--paired=")) {
                paired = (int) number("-paired=", a.substring("--paired=".length()), 1, MAX_PAIRED_BLOCK);
                continue;
            }
            char opt = a.charAt(1);
            switch (opt) {
                case 'h' -> throw new HelpRequested();
                case 'f' -> {
                    if (a.length() > 2) {
                        throw new UsageException("option -f takes no value: '" + a + "'");
                    }
                    finalOnly = true;
                }
                case 'I' -> throw new UsageException("-I is not supported: in ucx_perftest it prints extra "
                        + "information about the operation after the numbers (its UCP option -I, 'create context with "
                        + "wakeup feature enabled', is taken by the output option first and never reaches the test); "
                        + "to wait on the worker's event fd instead of polling, use -E sleep");
                case 't', 's', 'n', 'w', 'p', 'O', 'x', 'R', 'E', 'T', 'd', 'D' -> {
                    String value;
                    if (a.length() > 2) {
                        value = a.substring(2);
                    } else if (i + 1 < args.length) {
                        value = args[++i];
                    } else {
                        throw new UsageException("option -" + opt + " needs a value");
                    }
                    switch (opt) {
                        case 't' -> {
                            try {
                                test = PerfTestType.byName(value);
                            } catch (IllegalArgumentException e) {
                                throw new UsageException(e.getMessage());
                            }
                        }
                        case 's' -> {
                            if (value.contains(",")) {
                                throw new UsageException("-s takes one size here, not a scatter-gather list: '"
                                        + value + "'");
                            }
                            size = number(opt, value, 1, Long.MAX_VALUE);
                        }
                        case 'n' -> iterations = number(opt, value, 1, Long.MAX_VALUE);
                        case 'w' -> warmup = number(opt, value, 0, Long.MAX_VALUE);
                        case 'p' -> port = (int) number(opt, value, 0, 65535);
                        case 'O' -> window = (int) number(opt, value, 0, 1 << 20);
                        case 'x' -> {
                            if (value.isBlank()) {
                                throw new UsageException("-x needs transport names, such as tcp or shm");
                            }
                            tls = value;
                        }
                        case 'R' -> {
                            try {
                                percentile = Double.parseDouble(value);
                            } catch (NumberFormatException e) {
                                throw new UsageException("-R takes a percentile rank, not '" + value + "'");
                            }
                            if (!(percentile >= 0 && percentile <= 100)) {
                                throw new UsageException("-R takes a rank in [0, 100], not " + value);
                            }
                        }
                        case 'E' -> {
                            switch (value) {
                                case "poll" -> sleep = false;
                                case "sleep" -> sleep = true;
                                default -> throw new UsageException("-E takes poll or sleep, not '" + value + "'");
                            }
                        }
                        case 'T' -> threads = (int) number(opt, value, 1, MAX_THREADS);
                        case 'd' -> {
                            if (value.isBlank()) {
                                throw new UsageException("-d needs a device name, such as memory or lo");
                            }
                            device = value;
                        }
                        case 'D' -> {
                            try {
                                layout = UctLayout.byName(value);
                            } catch (IllegalArgumentException e) {
                                throw new UsageException(e.getMessage());
                            }
                        }
                        default -> throw new IllegalStateException();
                    }
                }
                default -> throw new UsageException("option " + (opt == '-' ? a : "-" + opt) + " is not supported by "
                        + runner + " (supported: -t -s -n -w -O -p -x -d -D -R -E -T -f -h --paired; see -h)");
            }
        }
        if (hosts.size() > 1) {
            throw new UsageException("one server host name at most, not " + hosts);
        }
        if (!hosts.isEmpty()) {
            host = hosts.getFirst();
        }
        if (host != null && test == null) {
            throw new UsageException("the client needs a test: -t NAME (" + PerfTestType.names() + ")");
        }
        if (host != null && port == 0) {
            throw new UsageException("the client needs the server's port: -p PORT");
        }
        if (paired > 0 && host == null) {
            throw new UsageException("--paired is a client option: the server follows the client's request");
        }
        PerfParams p = new PerfParams(runner, test, size, iterations, warmup, port, window, host, tls, finalOnly,
                percentile, sleep, threads, device, layout, paired);
        if (test != null) {
            p.validate();
        }
        return p;
    }

    private static long number(char opt, String value, long min, long max) {
        return number(String.valueOf(opt), value, min, max);
    }

    private static long number(String opt, String value, long min, long max) {
        long v;
        try {
            v = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new UsageException("-" + opt + " takes a number, not '" + value + "'");
        }
        if (v < min || v > max) {
            throw new UsageException("-" + opt + " must be in [" + min + ", " + max + "], not " + v);
        }
        return v;
    }

    /**
     * Checks what depends on the test: the operand size of atomics.
     *
     * @throws UsageException if the size does not suit the test
     */
    public void validate() {
        if (test.isUct()) {
            if (host != null && (transports == null || device == null)) {
                throw new UsageException(test.testName() + " is a UCT test: it needs a transport and a device, -x TL "
                        + "-d DEV (e.g. -x posix -d memory, -x tcp -d lo)");
            }
            if (transports != null && transports.contains(",")) {
                throw new UsageException("a UCT test runs on one transport: -x " + transports);
            }
            if (test.operation() == PerfTestType.Operation.AM && size < Long.BYTES) {
                throw new UsageException(test.testName() + " sends an 8-byte header in the message: -s 8 or more, "
                        + "not " + size);
            }
        } else if (device != null || layout != null) {
            throw new UsageException("-d and -D are for the UCT tests (am_lat, put_lat, am_bw, put_bw); "
                    + test.testName() + " takes its transports from -x or UCX_TLS");
        }
        if (test.operation().isAtomic() && size != 4 && size != 8) {
            throw new UsageException(test.testName() + " works on a 4- or 8-byte word: -s 4 or -s 8, not " + size);
        }
        if (size > Integer.MAX_VALUE) {
            throw new UsageException("-s " + size + " is too large for this runner");
        }
        if (paired > 0) {
            PerfTestType.Operation op = test.operation();
            boolean loop = test.pattern() == PerfTestType.Pattern.PING_PONG && !test.isUct()
                    && (op == PerfTestType.Operation.TAG || op == PerfTestType.Operation.TAG_SYNC
                    || op == PerfTestType.Operation.STREAM || op == PerfTestType.Operation.AM);
            if (!loop) {
                throw new UsageException("--paired runs tag_lat, tag_sync_lat, stream_lat and ucp_am_lat (its C "
                        + "loop has no remote key), not " + test.testName());
            }
            if (sleep || threads != 1) {
                throw new UsageException("--paired polls on one thread: no -E sleep, no -T");
            }
        }
    }

    /**
     * Whether this process is the server.
     *
     * @return {@code true} without a host name
     */
    public boolean isServer() {
        return host == null;
    }

    /**
     * Whether this command line runs a UCT test: the client's test is one, or a server was given a device
     * ({@code -d}), which makes it serve UCT clients over a plain socket.
     *
     * @return {@code true} for the UCT runner
     */
    public boolean isUct() {
        return test != null ? test.isUct() : device != null;
    }

    /**
     * The data layout of a UCT test: {@code -D}, or {@code short}, {@code ucx_perftest}'s default.
     *
     * @return the layout
     */
    public UctLayout effectiveLayout() {
        return layout == null ? UctLayout.SHORT : layout;
    }

    /**
     * The window in use: {@code -O}, or the test's default.
     *
     * @return outstanding operations, at least 1
     */
    public int effectiveWindow() {
        return window > 0 ? window : test.defaultWindow();
    }

    /**
     * The warm-up iterations that run: {@code ucx_perftest} runs at most a tenth of the measured iterations,
     * rounded up.
     *
     * @return iterations
     */
    public long effectiveWarmup() {
        return Math.min(warmup, (iterations + 9) / 10);
    }

    /**
     * The same parameters with the test fields the client sent (on a server).
     *
     * @param request the client's request
     * @return the parameters to run with
     */
    public PerfParams withRequest(Handshake.Request request) {
        PerfParams p = new PerfParams(runner, request.test(), request.size(), request.iterations(),
                request.warmup(), port, request.window(), host, transports, finalOnly, percentile, request.sleep(),
                request.threads(), device, layout, request.paired());
        p.validate();
        return p;
    }

    /**
     * The same parameters with the UCT transport, device and layout the client sent (on a UCT server).
     *
     * @param tl     the transport
     * @param dev    the device
     * @param layout the data layout
     * @return the parameters to run with
     */
    public PerfParams withUct(String tl, String dev, UctLayout layout) {
        PerfParams p = new PerfParams(runner, test, size, iterations, warmup, port, window, host, tl, finalOnly,
                percentile, sleep, threads, dev, layout, paired);
        p.validate();
        return p;
    }

    /**
     * The transports to configure UCX with: {@code -x}, else {@code UCX_TLS}, as given (the runners connect by worker
     * address, as {@code ucx_perftest} does, so no transport has to be added for the connection). {@code null} leaves
     * UCX's default (all).
     *
     * @param environment {@code UCX_TLS} from the environment, or {@code null}
     * @return the value for UCX's {@code TLS} option, or {@code null} to leave it
     */
    public String ucxTransports(String environment) {
        String tls = transports != null ? transports : environment;
        return tls == null || tls.isBlank() ? null : tls.trim();
    }
}
