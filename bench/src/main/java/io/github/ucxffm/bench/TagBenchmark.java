package io.github.ucxffm.bench;

import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpWorker;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
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

    private UcpContext context;
    private UcpWorker sender;
    private UcpWorker receiver;
    private UcpEndpoint endpoint;
    private Arena arena;
    private MemorySegment out;
    private MemorySegment in;

    @Setup(Level.Trial)
    public void setUp() {
        context = UcpContext.builder().features(UcpContext.Feature.TAG).build();
        sender = context.newWorker();
        receiver = context.newWorker();
        endpoint = sender.connect(receiver.address());
        arena = Arena.ofConfined();
        out = arena.allocate(8);
        in = arena.allocate(8);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
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
}
