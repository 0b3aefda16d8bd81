package io.github.ucxffm.bench;

import io.github.ucxffm.UcpAtomicOp;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpMemory;
import io.github.ucxffm.UcpRemoteKey;
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

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The binding's cost for active messages, put, get and atomic add between two workers of one JVM on one thread.
 * Each operation is started, then both workers are progressed until it completes; allocation per operation should
 * be zero.
 */
@State(Scope.Thread)
public class RmaAmBenchmark extends BenchmarkBase {

    /**
     * Whether the endpoint has an error callback (every endpoint has, unless told otherwise). Without one the
     * sending worker has nothing UCX could call back, and makes its calls critical (see {@code UcpWorker}).
     */
    @Param({"true", "false"})
    public boolean errorCallback;

    private static final int AM_ID = 3;

    private UcpContext context;
    private UcpWorker sender;
    private UcpWorker receiver;
    private UcpEndpoint endpoint;
    private UcpMemory region;
    private UcpRemoteKey rkey;
    private Arena arena;
    private MemorySegment data;
    private MemorySegment operand;
    private long remote;
    private long amReceived;

    @Setup(Level.Trial)
    public void setUp() {
        context = UcpContext.builder().features(UcpContext.Feature.AM, UcpContext.Feature.RMA,
                UcpContext.Feature.AMO64).build();
        sender = context.newWorker();
        receiver = context.newWorker();
        // no peer error handling, as ucx_perftest: UCX 1.13 then uses shared memory between the workers (with it,
        // tcp over loopback)
        endpoint = sender.connect(UcpEndpoint.Params.worker(receiver.address())
                .peerErrorHandling(false).errorCallback(errorCallback));
        region = context.allocate(4096);
        rkey = endpoint.unpackRemoteKey(region.packRemoteKey());
        remote = region.address();
        arena = Arena.ofConfined();
        data = arena.allocate(8);
        operand = arena.allocate(JAVA_LONG);
        operand.set(JAVA_LONG, 0, 1);
        receiver.setAmHandler(AM_ID, message -> amReceived += message.dataLength() + 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        endpoint.closeForce();
        context.close();
        arena.close();
    }

    private void complete(long request) {
        while (!sender.poll(request)) {
            sender.progress();
            receiver.progress();
        }
    }

    /** An 8-byte active message with no header, until the handler has run. */
    @Benchmark
    public long amSend8() {
        long before = amReceived;
        long request = endpoint.sendAm(AM_ID, null, data, 0, 8, 0);
        complete(request);
        while (amReceived == before) {
            receiver.progress();
            sender.progress();
        }
        return amReceived;
    }

    /** An 8-byte put, until it completes locally. */
    @Benchmark
    public long put8() {
        complete(endpoint.put(data, 0, 8, remote, rkey));
        return remote;
    }

    /** An 8-byte get, until the data is here. */
    @Benchmark
    public long get8() {
        complete(endpoint.get(data, 0, 8, remote, rkey));
        return data.get(JAVA_LONG, 0);
    }

    /** A posted 64-bit atomic add, until it completes locally. */
    @Benchmark
    public long atomicAdd64() {
        complete(endpoint.atomic(UcpAtomicOp.ADD, operand, null, remote + 8, rkey));
        return remote;
    }
}
