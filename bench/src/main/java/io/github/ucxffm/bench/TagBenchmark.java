package io.github.ucxffm.bench;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpWorker;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The binding's cost around UCX for the tag hot path and for idle progress, between two workers of one JVM on
 * one thread (UCX's {@code self}/shared-memory transports). Allocation per operation should be zero.
 */
@State(Scope.Thread)
public class TagBenchmark extends BenchmarkBase {

    /**
     * Whether the endpoint has an error callback (every endpoint has, unless told otherwise). Without one the
     * sending worker has nothing UCX could call back, and makes its calls critical (see {@code UcpWorker}).
     */
    @Param({"true", "false"})
    public boolean errorCallback;

    private UcpContext context;
    private UcpWorker sender;
    private UcpWorker receiver;
    private UcpEndpoint endpoint;
    private Arena arena;
    private MemorySegment out;
    private MemorySegment in;
    private MemorySegment parked;
    private long inFlight;

    private static final long NEVER_SENT = 0x7e57_0000_0000_0001L;

    @Setup(Level.Trial)
    public void setUp() {
        context = UcpContext.builder().features(UcpContext.Feature.TAG).build();
        sender = context.newWorker();
        receiver = context.newWorker();
        // no peer error handling, as ucx_perftest: UCX 1.13 then uses shared memory between the workers (with it,
        // tcp over loopback)
        endpoint = sender.connect(UcpEndpoint.Params.worker(receiver.address())
                .peerErrorHandling(false).errorCallback(errorCallback));
        arena = Arena.ofConfined();
        out = arena.allocate(8);
        in = arena.allocate(8);
        parked = arena.allocate(8);
        // a receive no message will ever match: what polling a request still in flight costs
        inFlight = receiver.receiveTag(parked, 0, 8, NEVER_SENT, -1L);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        receiver.cancel(inFlight);
        try {
            receiver.poll(inFlight);
        } catch (io.github.ucxffm.UcxException canceled) {
            // expected: the receive was canceled
        }
        endpoint.closeForce();
        context.close();
        arena.close();
    }

    /** One 8-byte tag message: post the receive, send, progress both workers until both complete. */
    @Benchmark
    public long tagSendReceive8() {
        long recv = receiver.receiveTag(in, 0, 8, 42, -1L);
        long send = endpoint.sendTag(out, 0, 8, 42);
        boolean sent = false;
        boolean received = false;
        while (!(sent && received)) {
            sender.progress();
            receiver.progress();
            sent = sent || sender.poll(send);
            received = received || receiver.poll(recv);
        }
        return receiver.receivedLength();
    }

    /** {@code progress()} with nothing to do: the floor of every polling loop. */
    @Benchmark
    public int progressIdle() {
        return sender.progress();
    }

    /**
     * Polls a request that is still in flight (request completion polling, the inner step of every wait loop).
     *
     * @return {@code false}, always
     */
    @Benchmark
    public boolean pollInFlight() {
        return receiver.poll(inFlight);
    }
}
