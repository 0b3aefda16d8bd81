package io.github.ucxffm.bench.perftest;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * The threads of a run of several ({@code -T N}), as {@code ucx_perftest} runs them: thread 0 is the runner that
 * made the session; each other thread makes its own runner (a worker and an endpoint of its own on the process's
 * shared context) on its own platform thread and connects it to the peer's thread of the same number. The server's
 * threads 1.. each listen on a port the system chooses, which its thread 0 sends the client in its reply. All threads
 * of a side wait for each other before the measured run. A thread that fails ends the process with status 1, since
 * its peer would otherwise wait for it at a barrier for ever.
 *
 * @param <R> the runner (one per thread)
 */
public final class PerfThreads<R extends PerfRunner> {

    /** What thread {@code t} (from 1) does with the runner made for it, on its own thread. */
    @FunctionalInterface
    public interface Session<R extends PerfRunner> {
        /**
         * Runs the thread's session.
         *
         * @param runner the thread's runner
         * @param thread the thread's number, from 1
         * @throws Exception anything that fails it, which ends the process
         */
        void run(R runner, int thread) throws Exception;
    }

    private final String runnerName;
    private final PrintStream err;
    private final Duration timeout;
    private final int count;
    private final CyclicBarrier together;
    private final PerfRunner[] runners;
    private final Thread[] started;
    private final int[] ports;
    private final CountDownLatch listening;
    private final Consumer<R> close;

    /**
     * Threads of a run; made by {@link PerfRunner#startThreads}.
     *
     * @param runnerName the runner's name, for messages
     * @param err        where a failing thread's message goes
     * @param timeout    how long the server's threads may take to listen; the measured run's start waits four times
     *                   as long for the slowest thread
     * @param count      threads, thread 0 included ({@code -T}, at least 2)
     * @param first      thread 0's runner, the caller's
     * @param close      closes a runner of thread 1.. on its own thread once its session ends (however it ends)
     */
    PerfThreads(String runnerName, PrintStream err, Duration timeout, int count, R first, Consumer<R> close) {
        if (count < 2) {
            throw new IllegalArgumentException("a run of several threads has at least 2, not " + count);
        }
        this.runnerName = runnerName;
        this.err = err;
        this.timeout = timeout;
        this.count = count;
        this.together = new CyclicBarrier(count);
        this.runners = new PerfRunner[count];
        this.started = new Thread[count];
        this.ports = new int[count];
        this.listening = new CountDownLatch(count - 1);
        this.close = close;
        runners[0] = first;
    }

    /**
     * Starts the server's threads 1.. and returns the ports they listen on, once all of them listen. Each session
     * should begin with {@link #awaitClient(int)}.
     *
     * @param make  makes thread {@code t}'s runner, on that thread
     * @param serve the session of a server thread
     * @return the ports of threads 1.., in order, for the reply to the client
     * @throws InterruptedException if interrupted while waiting for them to listen
     */
    public int[] startServers(IntFunction<R> make, Session<R> serve) throws InterruptedException {
        startAll(make, serve);
        if (!listening.await(timeout.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException("the server's threads did not listen within " + timeout.toSeconds()
                    + " s");
        }
        return Arrays.copyOfRange(ports, 1, count);
    }

    /**
     * Listens for server thread {@code t}'s client on a port the system chooses, tells {@link #startServers} the port,
     * and accepts the client's thread of the same number.
     *
     * @param t the server thread, from 1
     * @return the side channel to the client's thread
     * @throws IOException if the client's thread does not connect within the timeout
     */
    public SideChannel awaitClient(int t) throws IOException {
        try (ServerSocket server = SideChannel.bind(0)) {
            ports[t] = server.getLocalPort();
            listening.countDown();
            return SideChannel.accept(server, timeout);
        } catch (IOException e) {
            throw new IOException("thread " + t + ": " + e.getMessage(), e);
        }
    }

    /**
     * Starts the client's threads 1..; thread {@code t} should connect to the server's port {@code serverPorts[t -
     * 1]}.
     *
     * @param make      makes thread {@code t}'s runner, on that thread
     * @param runClient the session of a client thread
     */
    public void startClients(IntFunction<R> make, Session<R> runClient) {
        startAll(make, runClient);
    }

    private void startAll(IntFunction<R> make, Session<R> session) {
        for (int i = 1; i < count; i++) {
            int t = i;
            started[i] = Thread.ofPlatform().name("perftest-thread-" + t).start(() -> {
                R r = null;
                try {
                    r = make.apply(t);
                    runners[t] = r;
                    session.run(r, t);
                } catch (Throwable e) {
                    err.println(runnerName + ": thread " + t + " failed: " + e);
                    err.flush();
                    System.exit(1);
                } finally {
                    if (r != null) {
                        close.accept(r);
                    }
                }
            });
        }
    }

    /**
     * Waits until every thread of this side reaches the start of its measured run.
     *
     * @throws Exception if a thread does not arrive in time, or the wait is interrupted
     */
    public void startTogether() throws Exception {
        together.await(timeout.toSeconds() * 4, TimeUnit.SECONDS);
    }

    /**
     * Waits for threads 1.. to end.
     *
     * @throws InterruptedException if interrupted
     */
    public void join() throws InterruptedException {
        for (int i = 1; i < count; i++) {
            started[i].join();
        }
    }

    /**
     * The final numbers of the client's threads as {@code ucx_perftest} aggregates them: the iterations of thread 0,
     * the mean of the overall latencies, the sums of bandwidths and message rates. Call after {@link #join()}.
     */
    PerfFinal aggregate() {
        PerfFinal first = runners[0].report.result();
        double latency = 0;
        double bandwidth = 0;
        double rate = 0;
        for (int t = 0; t < count; t++) {
            PerfFinal f = runners[t].report.result();
            latency += f.overallMicros();
            bandwidth += f.bandwidthOverall();
            rate += f.rateOverall();
        }
        return PerfFinal.aggregate(first.iterations(), latency / count, bandwidth, rate);
    }
}
