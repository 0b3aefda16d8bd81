package io.github.ucxffm.bench.perftest;

import java.io.PrintStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The skeleton every {@code ucx_perftest}-compatible runner shares, whatever binding it drives: the command line
 * (usage, errors, exit status), and the order of a run on each side: warm-up (in rounds, each ended by a barrier,
 * until the JIT compilers are done: {@link #WARMUP_MIN_NANOS}), barrier, the measured loop, barrier.
 * Subclasses supply the session (connect or accept, exchange parameters) and the operations: one round trip of a
 * ping-pong on each side, issuing the next operation of a one-way stream inside the window, and receiving on the
 * server's side of a stream.
 * <p>
 * Timing follows {@code ucx_perftest}: the clock is read after every iteration of a ping-pong. In the one-way
 * (bandwidth) tests, while operations take under {@link #BATCH_BELOW_NANOS} ns each, it is read once per
 * {@link #STREAM_BATCH} iterations and each iteration of the batch is recorded with the batch's average: a Java
 * clock read ({@link System#nanoTime()}) costs about 20 ns on the machines measured, where {@code ucx_perftest}'s
 * {@code rdtsc} costs a few, and at 30 to 40 ns per 8-byte operation a per-operation read would measure the clock
 * more than the binding. Longer operations are timed one by one. Totals, averages and message rates do not depend
 * on this; the percentile column of a bandwidth test of small messages is one of batch averages.
 * <p>
 * In one-sided tests (put, get, atomics) the server has nothing to do until the closing barrier, and
 * {@code ucx_perftest}'s server sleeps in a socket read meanwhile. The Java servers wait for the barrier
 * {@linkplain #waitsQuietly() quietly}: they progress, and when there was nothing to do they sleep
 * {@link #QUIET_PARK_NANOS} ns before progressing again. A server spinning on the other core slows the client
 * where the two cores share a physical one (hyper-threads of a virtual machine), and one-sided operations over
 * shared memory need no progress at the target; over tcp they do, and the short sleeps keep them moving.
 */
public abstract class PerfRunner implements AutoCloseable {

    /** Iterations of a one-way test timed together while they are short. */
    public static final int STREAM_BATCH = 16;
    /**
     * Warm-up iterations a Java runner makes at least, whatever {@code -w} and {@code -n} say (both sides compute
     * the same number), for ping-pongs of messages under {@link #JIT_WARMUP_BELOW} bytes and for bandwidth tests of
     * messages under {@link #JIT_WARMUP_LARGE_FROM} bytes: HotSpot compiles a method with its optimizing compiler
     * after some thousands of calls, and until then the compiled code is not what is measured and the compiler
     * threads compete for the cores with the two spinning processes. Fewer are not enough: 2,762 warm-up puts of
     * 64 KiB (what {@code bench compare} asks for) left the optimizing compiler at work on the put path during the
     * measured loop, whose average came out at twice its median. {@code ucx_perftest} has no JIT; its own default
     * warm-up is this number too. Warm-up is never measured.
     */
    public static final long JIT_WARMUP = 10_000;

    /**
     * From this message size on, ten thousand round trips would take seconds: a ping-pong warms up for
     * {@code -w}'s iterations alone (each one is long enough that what the compiler has not finished weighs
     * little).
     */
    public static final long JIT_WARMUP_BELOW = 64 * 1024;

    /**
     * From this message size on, a bandwidth test warms up in rounds of {@link #JIT_WARMUP_LARGE} iterations rather
     * than {@link #JIT_WARMUP}, ten thousand of which could take seconds (a run of a few hundred 1 MiB messages over
     * tcp measured 40 % slower with the compiler still at work than with it done).
     */
    public static final long JIT_WARMUP_LARGE_FROM = 1024 * 1024;

    /**
     * The iterations of a warm-up round of a bandwidth test of {@link #JIT_WARMUP_LARGE_FROM} bytes or more (rounds
     * repeat up to {@link #JIT_WARMUP} iterations, within {@link #WARMUP_MAX_NANOS}).
     */
    public static final long JIT_WARMUP_LARGE = 1_000;

    /**
     * The warm-up repeats its iterations in rounds until it has lasted this long and made {@link #JIT_WARMUP}
     * iterations in all: the compiler works in the background, and ten thousand 4 KiB puts are over in a
     * millisecond, long before it has compiled what they ran; and four rounds of a thousand 1 MiB messages left the
     * optimizing compiler's thresholds uncrossed until the measured loop, which it then interrupted for
     * milliseconds at a time (two cores, both spinning).
     */
    public static final long WARMUP_MIN_NANOS = 250_000_000L;

    /**
     * Past the minimum, rounds go on while either side's compiler was at work during the last one; and never once
     * the warm-up has lasted this long, whatever the other conditions say (a thousand 1 MiB puts over tcp take
     * over half a second).
     */
    public static final long WARMUP_MAX_NANOS = 5_000_000_000L;

    /**
     * Each side sleeps this long after each warm-up round, before it asks whether its compiler was at work: while
     * both sides spin on the two cores, the compiler threads wait for one, and a compilation queued during a round
     * finished only once the measured loop had started (an 8-byte {@code tag_bw} of 200,000 messages ran at 2 to 6
     * million a second with the optimizing compiler busy in its first 20 ms, against 10 million without). The pause
     * lets the queue drain inside the warm-up, where what it finishes counts as compiling and asks for another round.
     */
    public static final long WARMUP_PAUSE_MILLIS = 20;

    /**
     * Past the minimum, the warm-up also goes on until its last rounds made this many iterations with neither
     * compiler finishing any work: a round that compiled nothing can still have left the optimizing compiler's
     * thresholds (tens of thousands of loop turns in the first tier's code) uncrossed, so that it compiles in the
     * measured loop; a first round made slow by the interpreter, with a quiet second round, did that.
     */
    public static final long WARMUP_QUIET_ITERATIONS = 50_000;

    /** The sequence number of the barrier that ends each warm-up round (1 and 2 surround the measured loop). */
    private static final int WARMUP_BARRIER = 0;
    /** Flags the sides exchange at the end of a warm-up round: the client's minimum (time, iterations) is not met. */
    static final int WARMUP_TOO_SHORT = 1;
    /** The sender's compiler finished some work during the round. */
    static final int WARMUP_COMPILING = 2;
    /** The client stops warming up whatever the other flags say. */
    static final int WARMUP_STOP = 4;

    /** How long a server waiting out a one-sided test sleeps after a progress call that found nothing to do. */
    public static final long QUIET_PARK_NANOS = 50_000;

    /** Operations taking longer than this are timed one by one. */
    public static final long BATCH_BELOW_NANOS = 1_000;

    /** How the runner names itself in messages. */
    protected final String runner;
    /** Where the table goes. */
    protected final PrintStream out;
    /** Where messages go. */
    protected final PrintStream err;
    /** The test being run; set by the session before the run starts. */
    protected PerfParams params;
    /** This runner's thread ({@code -T}), from 0; each thread has a worker and an endpoint of its own. */
    protected final int thread;
    /** The threads of this process ({@code -T}); {@code null} until a run of several threads starts. */
    protected PerfThreads<?> threads;
    /** The client's report of this thread's measured run: the first thread aggregates those of the others. */
    protected PerfReport report;
    /** What the client's measured loop allocated, set after the run. */
    private String allocationLine;
    /** How long the client warmed up; {@code null} without a warm-up. */
    private String warmupLine;
    /** The blocks of each kind a paired run's record has room for before it grows. */
    static final int PAIRED_PREALLOCATED = 1 << 20;
    /** The blocks of the client's measured loop in a paired run; {@code null} otherwise. */
    private PairedBlocks paired;
    /** The clock after each round trip of a paired run's block. */
    private long[] pairedStamps;

    /**
     * Sets where output goes.
     *
     * @param runner the runner's name for messages
     * @param out    where the table goes
     * @param err    where messages go
     */
    protected PerfRunner(String runner, PrintStream out, PrintStream err) {
        this.runner = runner;
        this.out = out;
        this.err = err;
        this.thread = 0;
    }

    /**
     * The runner of thread {@code thread} (from 1) of a run of several ({@code -T}), made once the first thread has
     * started the threads: it writes where the first one does.
     *
     * @param first  the first thread's runner
     * @param thread this runner's thread
     */
    protected PerfRunner(PerfRunner first, int thread) {
        this.runner = first.runner;
        this.out = first.out;
        this.err = first.err;
        this.thread = thread;
        this.threads = first.threads;
    }

    /**
     * Starts a run of several threads in the first thread's runner: the runners of threads 1.. are made by the
     * returned object's {@code startServers} or {@code startClients}.
     *
     * @param <R>     the runner's type
     * @param first   this runner
     * @param count   threads ({@code -T})
     * @param timeout how long the handshakes may take
     * @param close   closes a runner of thread 1.. on its own thread when its session ends
     * @return the threads
     */
    protected final <R extends PerfRunner> PerfThreads<R> startThreads(R first, int count, Duration timeout,
                                                                       Consumer<R> close) {
        if (first != this || thread != 0) {
            throw new IllegalStateException("threads are started by the first thread's runner, for itself");
        }
        PerfThreads<R> t = new PerfThreads<>(runner, err, timeout, count, first, close);
        threads = t;
        return t;
    }

    /**
     * The client's first thread after its handshake: checks that the server runs as many threads as asked for, and
     * prints the table's header into this thread's report.
     *
     * @param reply the server's reply
     * @return the ports the server's threads 1.. listen on
     */
    protected final int[] beginClient(Handshake.Reply reply) {
        if (params.threads() > 1 && reply.ports().length != params.threads() - 1) {
            throw new IllegalStateException("the server offers " + (reply.ports().length + 1) + " threads, not "
                    + params.threads());
        }
        report = new PerfReport(out, params.test(), params.size(), params.percentile(), params.finalOnly());
        report.printHeader(params.test());
        return reply.ports();
    }

    /**
     * The session of a client thread after the first, once connected: runs the test into a report of its own, whose
     * progress rows name the thread, and keeps it for the first thread's aggregate.
     *
     * @throws Exception on failure
     */
    protected final void runClientThread() throws Exception {
        PerfReport mine = new PerfReport(out, params.test(), params.size(), params.percentile(), params.finalOnly(),
                thread);
        runClient(mine);
        report = mine;
    }

    /**
     * The client's final row: the first thread's {@code Final:} line, or with several threads, once all of them have
     * ended, {@code ucx_perftest}'s aggregate of theirs.
     *
     * @throws InterruptedException if interrupted while waiting for the other threads
     */
    protected final void printFinal() throws InterruptedException {
        if (threads == null) {
            report.printFinal();
            return;
        }
        threads.join();
        out.println(PerfReport.formatRow(params.finalOnly() ? "" : "Final:", threads.aggregate()));
        out.flush();
    }

    /** Makes a runner for the transports to use ({@code null}: UCX's default). */
    @FunctionalInterface
    public interface Factory {
        /**
         * Creates the runner.
         *
         * @param out        where the table goes
         * @param err        where messages go
         * @param transports {@code UCX_TLS}, or {@code null}
         * @param params     this side's command line (a server learns the test later)
         * @return the runner
         * @throws Exception if the binding cannot start
         */
        PerfRunner create(PrintStream out, PrintStream err, String transports, PerfParams params) throws Exception;
    }

    /**
     * Runs a command line: parses it, checks that the runner can run the test, serves or connects, and reports
     * failures on {@code err}.
     *
     * @param runner  the runner's name for messages
     * @param out     where the table goes
     * @param err     where messages go
     * @param args    {@code ucx_perftest}-style options and an optional server host
     * @param check   throws {@link UnsupportedOperationException} for a command line the runner cannot run (on the
     *                server, called again with the client's test)
     * @param extra   lines added to the usage text
     * @param factory creates the runner
     * @return the exit status: 0 on success, 1 on failure or bad usage
     */
    public static int run(String runner, PrintStream out, PrintStream err, String[] args,
                          Consumer<PerfParams> check, String extra, Factory factory) {
        PerfParams p;
        try {
            p = PerfParams.parse(runner, args);
            check.accept(p);
        } catch (PerfParams.HelpRequested h) {
            out.print(PerfParams.usage(runner));
            out.print(extra);
            return 0;
        } catch (PerfParams.UsageException | UnsupportedOperationException e) {
            err.println(runner + ": " + e.getMessage());
            if (e instanceof PerfParams.UsageException) {
                err.println("run '" + runner + " -h' for the options");
            }
            return 1;
        }
        // a UCT test names its transport (-x) and device (-d) itself; UCX_TLS is for UCP
        String tls = p.isUct() ? p.transports() : p.ucxTransports(System.getenv("UCX_TLS"));
        try (PerfRunner t = factory.create(out, err, tls, p)) {
            if (p.isServer()) {
                t.serve(p);
            } else {
                t.client(p);
            }
            return 0;
        } catch (PerfParams.UsageException | UnsupportedOperationException e) {
            err.println(runner + ": " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println(runner + ": failed: " + e);
            for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
                err.println("  caused by " + c);
            }
            return 1;
        }
    }

    /**
     * The server's session: accept one client, learn the test from it, {@link #runServer()}.
     *
     * @param p the command line (no host)
     * @throws Exception on failure
     */
    protected abstract void serve(PerfParams p) throws Exception;

    /**
     * The client's session: connect, send the test, {@link #runClient(PerfReport)}, print the result.
     *
     * @param p the command line (with a host)
     * @throws Exception on failure
     */
    protected abstract void client(PerfParams p) throws Exception;

    /**
     * Both sides reach the same point: the client sends, the server answers; each tells the other a value.
     *
     * @param sequenceNumber which barrier (0 after a warm-up round, 1 before the measured loop, 2 after)
     * @param value          what this side tells the other
     * @param server         whether this is the server's side
     * @return the value the other side told
     * @throws Exception on failure
     */
    protected abstract int barrier(int sequenceNumber, int value, boolean server) throws Exception;

    /**
     * The client's half of one round trip: send, then wait for the answer.
     *
     * @throws Exception on failure
     */
    protected abstract void ping() throws Exception;

    /**
     * The server's half of one round trip: wait for the client's message, answer it.
     *
     * @throws Exception on failure
     */
    protected abstract void pong() throws Exception;

    /**
     * Waits until the window has room, then starts the client's operation number {@code i} of a one-way test.
     *
     * @param i the operation's number, from 0
     * @throws Exception on failure
     */
    protected abstract void issue(long i) throws Exception;

    /**
     * Completes every outstanding operation.
     *
     * @throws Exception on failure
     */
    protected abstract void drain() throws Exception;

    /**
     * After a one-sided stream: waits until the operations completed remotely (a flush).
     *
     * @throws Exception on failure
     */
    protected abstract void flush() throws Exception;

    /**
     * The server's side of a one-way test of {@code iterations} operations: receive what needs receiving (one-sided
     * tests need nothing: the barrier that follows progresses the worker).
     *
     * @param iterations operations the client sends
     * @throws Exception on failure
     */
    protected abstract void sink(long iterations) throws Exception;

    /**
     * The client's half of {@code n} round trips of a paired run ({@code --paired}) in C, on this runner's worker
     * and endpoint, the same loop as {@link #ping()}'s.
     *
     * @param n      round trips
     * @param stamps filled with the clock ({@link System#nanoTime()}'s) after each round trip
     * @throws Exception on failure; {@link UnsupportedOperationException} for a runner without a paired mode
     */
    protected void nativePing(int n, long[] stamps) throws Exception {
        throw new UnsupportedOperationException(runner + " has no paired mode");
    }

    /**
     * The server's half of {@code n} round trips of a paired run in C, the same loop as {@link #pong()}'s.
     *
     * @param n round trips
     * @throws Exception on failure; {@link UnsupportedOperationException} for a runner without a paired mode
     */
    protected void nativePong(int n) throws Exception {
        throw new UnsupportedOperationException(runner + " has no paired mode");
    }

    /**
     * The client's half of {@code n} round trips of a paired run through plain FFM downcalls, the C loop's calls
     * made from Java with none of the binding's code ({@link FfmPairedLoop}).
     *
     * @param n      round trips
     * @param stamps filled with the clock ({@link System#nanoTime()}'s) after each round trip
     * @throws Exception on failure; {@link UnsupportedOperationException} for a runner without a paired mode
     */
    protected void ffmPing(int n, long[] stamps) throws Exception {
        throw new UnsupportedOperationException(runner + " has no paired mode");
    }

    /**
     * The server's half of {@code n} round trips of a paired run through plain FFM downcalls.
     *
     * @param n round trips
     * @throws Exception on failure; {@link UnsupportedOperationException} for a runner without a paired mode
     */
    protected void ffmPong(int n) throws Exception {
        throw new UnsupportedOperationException(runner + " has no paired mode");
    }

    /**
     * The blocks of the client's measured loop in a paired run, after {@link #runClient(PerfReport)}.
     *
     * @return the blocks, or {@code null} for an ordinary run
     */
    protected final PairedBlocks pairedBlocks() {
        return paired;
    }

    /**
     * Whether this side waits without spinning: the server of a one-sided test, which only answers barriers.
     *
     * @return {@code true} for the server of a put, get or atomic test
     */
    protected final boolean waitsQuietly() {
        return params != null && params.isServer() && params.test().operation().isOneSided();
    }

    private boolean pingPong() {
        return params.test().pattern() == PerfTestType.Pattern.PING_PONG;
    }

    /**
     * The client's run: warm-up, barrier, the measured loop into {@code report}, barrier; records the allocation.
     *
     * @param report where the iterations are timed
     * @throws Exception on failure
     */
    protected final void runClient(PerfReport report) throws Exception {
        primeMeasurements();
        long warmup = warmup();
        if (warmup > 0) {
            // the warm-up times itself into a report of its own that prints nothing, so that the code compiled
            // during warm-up is the code measured: a warm-up without a report leaves the report's branch
            // uncompiled, and the measured loop would start with a deoptimization
            PerfReport scratch = new PerfReport(out, params.test(), params.size(), params.percentile(), true);
            paired = pairedFor(warmup);
            long start = System.nanoTime();
            scratch.begin(start);
            int rounds = 0;
            long quiet = 0;
            boolean more = true;
            while (more) {
                long compiled = compilationMillis();
                clientLoop(warmup, scratch);
                rounds++;
                Thread.sleep(WARMUP_PAUSE_MILLIS);
                long elapsed = System.nanoTime() - start;
                boolean tooShort = elapsed < WARMUP_MIN_NANOS || (long) rounds * warmup < JIT_WARMUP;
                int mine = (compilationMillis() != compiled ? WARMUP_COMPILING : 0)
                        | (tooShort ? WARMUP_TOO_SHORT : 0)
                        | (elapsed >= WARMUP_MAX_NANOS || !warmsUpInRounds() ? WARMUP_STOP : 0);
                int server = barrier(WARMUP_BARRIER, mine, false);
                quiet = quietAfter(quiet, mine, server, warmup);
                more = anotherWarmupRound(mine, server, quiet);
            }
            warmupLine = String.format(Locale.ROOT, "%s: warm-up: %d round%s of %d iterations, %.0f ms",
                    runner, rounds, rounds == 1 ? "" : "s", warmup, (System.nanoTime() - start) / 1e6);
        }
        beforeMeasuredRun();
        paired = pairedFor(params.iterations());
        barrier(1, 0, false);
        double cpuBefore = processCpuSeconds();
        long allocatedBefore = PerfReport.allocatedBytes();
        report.begin(System.nanoTime());
        clientLoop(params.iterations(), report);
        report.finish(System.nanoTime());
        long allocated = allocatedBefore < 0 ? -1 : PerfReport.allocatedBytes() - allocatedBefore;
        barrier(2, 0, false);
        cpuLine = cpuLine(processCpuSeconds() - cpuBefore);
        allocationLine = PerfReport.allocationLine(runner, allocated, params.iterations());
    }

    /**
     * Reads once, before the warm-up, what the measured loop's edges read: the first call of each management bean
     * loads classes and spins lambda forms, and the compiles that follows would otherwise run during the measured
     * loop, on a core one of the two spinning sides needs.
     */
    private static void primeMeasurements() {
        processCpuSeconds();
        PerfReport.allocatedBytes();
        compilationMillis();
    }

    /** The prefix of the line that gives the CPU time of the measured loop ({@link #cpuLine}). */
    public static final String CPU_LINE = "CPU time of this process in the measured loop: ";

    /**
     * CPU seconds this process has used so far, all its threads (the JIT compiler's and the collector's too).
     *
     * @return seconds, or {@link Double#NaN} where the JVM does not tell
     */
    static double processCpuSeconds() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long n = os.getProcessCpuTime();
            return n < 0 ? Double.NaN : n / 1e9;
        }
        return Double.NaN;
    }

    /**
     * The line, for the message stream, with the CPU time this process spent from the barrier before the measured
     * loop to the one after it; {@code null} when a thread after the first of a {@code -T} run asks (the process's
     * time is reported once) or the time is unknown.
     */
    private String cpuLine(double seconds) {
        if (thread != 0 || Double.isNaN(seconds)) {
            return null;
        }
        return String.format(Locale.ROOT, "%s: %s%.4f s", runner, CPU_LINE, seconds);
    }

    /** The CPU line of the measured loop, set after the run. */
    private String cpuLine;

    /**
     * Called on each side after the warm-up, before the barrier that starts the measured run: the threads of a
     * process ({@code -T}) wait for each other there, so that they start measuring together, as
     * {@code ucx_perftest}'s threads do.
     */
    private void beforeMeasuredRun() throws Exception {
        if (threads != null) {
            threads.startTogether();
        }
    }

    /**
     * Prints, on the message stream, how long the client warmed up and what its measured loop allocated.
     */
    protected final void printRunNotes() {
        if (warmupLine != null) {
            err.println(warmupLine);
        }
        if (allocationLine != null) {
            err.println(allocationLine);
        }
        if (cpuLine != null) {
            err.println(cpuLine);
        }
    }

    /**
     * The server's run: warm-up, barrier, the measured loop, barrier.
     *
     * @throws Exception on failure
     */
    protected final void runServer() throws Exception {
        primeMeasurements();
        long warmup = warmup();
        if (warmup > 0) {
            long quiet = 0;
            boolean more = true;
            while (more) {
                long compiled = compilationMillis();
                serverLoop(warmup);
                Thread.sleep(WARMUP_PAUSE_MILLIS);
                int mine = compilationMillis() != compiled ? WARMUP_COMPILING : 0;
                int client = barrier(WARMUP_BARRIER, mine, true);
                quiet = quietAfter(quiet, client, mine, warmup);
                more = anotherWarmupRound(client, mine, quiet);
            }
        }
        beforeMeasuredRun();
        barrier(1, 0, true);
        double cpuBefore = processCpuSeconds();
        serverLoop(params.iterations());
        barrier(2, 0, true);
        String line = cpuLine(processCpuSeconds() - cpuBefore);
        if (line != null) {
            err.println(line);
        }
    }

    /**
     * Whether both sides run another warm-up round, decided by both from the flags they exchanged and the quiet
     * iterations they count alike, so that they agree: not when the client says stop; otherwise while the client's
     * minimum (time and iterations) is not reached, either compiler was at work, or fewer than
     * {@link #WARMUP_QUIET_ITERATIONS} iterations ran since it last was.
     */
    static boolean anotherWarmupRound(int client, int server, long quiet) {
        if ((client & WARMUP_STOP) != 0) {
            return false;
        }
        return ((client | server) & (WARMUP_TOO_SHORT | WARMUP_COMPILING)) != 0 || quiet < WARMUP_QUIET_ITERATIONS;
    }

    /**
     * The iterations run since either side's compiler last finished work, after a round of {@code iterations}.
     *
     * @param quiet the count before the round
     * @return {@code 0} when either side flagged {@link #WARMUP_COMPILING}, else {@code quiet + iterations}
     */
    static long quietAfter(long quiet, int client, int server, long iterations) {
        return ((client | server) & WARMUP_COMPILING) != 0 ? 0 : quiet + iterations;
    }

    /**
     * Ping-pongs of {@link #JIT_WARMUP_BELOW} bytes and more warm up for one round of {@code -w}'s iterations: each
     * of their iterations is long enough that the compiler weighs little, and ten thousand would take seconds.
     */
    private boolean warmsUpInRounds() {
        return !pingPong() || params.size() < JIT_WARMUP_BELOW;
    }

    /** Milliseconds this JVM's compiler has worked so far ({@code -1} when it does not tell). */
    private static long compilationMillis() {
        CompilationMXBean c = ManagementFactory.getCompilationMXBean();
        return c != null && c.isCompilationTimeMonitoringSupported() ? c.getTotalCompilationTime() : -1;
    }

    /**
     * The warm-up iterations both sides run: {@link PerfParams#effectiveWarmup()}, and at least {@link #JIT_WARMUP}
     * for ping-pongs under {@link #JIT_WARMUP_BELOW} bytes and bandwidth tests under {@link #JIT_WARMUP_LARGE_FROM}
     * bytes, {@link #JIT_WARMUP_LARGE} for larger bandwidth tests.
     *
     * @return iterations
     */
    protected final long warmup() {
        long w = params.effectiveWarmup();
        long size = params.size();
        if (pingPong()) {
            return size < JIT_WARMUP_BELOW ? Math.max(w, JIT_WARMUP) : w;
        }
        return Math.max(w, size < JIT_WARMUP_LARGE_FROM ? JIT_WARMUP : JIT_WARMUP_LARGE);
    }

    /**
     * A record for a paired loop of {@code iterations}, made before it so that the loop allocates nothing; room for
     * at most {@link #PAIRED_PREALLOCATED} blocks of each kind (24 MiB for the three), past which it grows.
     */
    private PairedBlocks pairedFor(long iterations) {
        int b = params.paired();
        if (b == 0) {
            return null;
        }
        if (pairedStamps == null) {
            pairedStamps = new long[b];
        }
        int kinds = PairedBlocks.Kind.values().length;
        return new PairedBlocks(b, (int) Math.min(PAIRED_PREALLOCATED, iterations / b / kinds + 1));
    }

    /**
     * The client's loop of a paired run: blocks through the binding (timed into {@code report} as well), in C and
     * through plain FFM in turn ({@link PairedBlocks.Kind#ofBlock}).
     */
    private void pairedClientLoop(long iterations, PerfReport report) throws Exception {
        int b = params.paired();
        long[] stamps = pairedStamps;
        long index = 0;
        for (long i = 0; i < iterations; i += b, index++) {
            int n = (int) Math.min(b, iterations - i);
            PairedBlocks.Kind kind = PairedBlocks.Kind.ofBlock(index);
            long start = System.nanoTime();
            switch (kind) {
                case NATIVE -> nativePing(n, stamps);
                case FFM -> ffmPing(n, stamps);
                case BINDING -> {
                    report.skipTo(start);
                    for (int k = 0; k < n; k++) {
                        ping();
                        long now = System.nanoTime();
                        stamps[k] = now;
                        report.update(now);
                    }
                }
            }
            paired.record(kind, start, stamps, n);
        }
        drain();
    }

    private void clientLoop(long iterations, PerfReport report) throws Exception {
        if (params.paired() > 0) {
            pairedClientLoop(iterations, report);
            return;
        }
        if (pingPong()) {
            for (long i = 0; i < iterations; i++) {
                ping();
                report.update(System.nanoTime());
            }
            drain();
            return;
        }
        long i = 0;
        int batch = STREAM_BATCH;
        long last = System.nanoTime();
        while (i < iterations) {
            long batchEnd = Math.min(iterations, i + batch);
            int n = (int) (batchEnd - i);
            for (; i < batchEnd; i++) {
                issue(i);
            }
            long now = System.nanoTime();
            report.update(now, n);
            // batches only where a clock read would weigh: operations under a microsecond
            batch = now - last < (long) n * BATCH_BELOW_NANOS ? STREAM_BATCH : 1;
            last = now;
        }
        drain();
        if (params.test().operation().isOneSided()) {
            flush();
        }
    }

    private void serverLoop(long iterations) throws Exception {
        int b = params.paired();
        if (b > 0) {
            long index = 0;
            for (long i = 0; i < iterations; i += b, index++) {
                int n = (int) Math.min(b, iterations - i);
                switch (PairedBlocks.Kind.ofBlock(index)) {
                    case NATIVE -> nativePong(n);
                    case FFM -> ffmPong(n);
                    case BINDING -> {
                        for (int k = 0; k < n; k++) {
                            pong();
                        }
                    }
                }
            }
            drain();
            return;
        }
        if (pingPong()) {
            for (long i = 0; i < iterations; i++) {
                pong();
            }
            drain();
        } else {
            sink(iterations);
        }
    }
}
