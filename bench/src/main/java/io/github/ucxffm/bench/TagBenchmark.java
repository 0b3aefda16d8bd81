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

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

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

    // the plain FFM twin of tagSendReceive8: the same UCX calls through downcalls, raw addresses, no binding code
    private static final Linker LINKER = Linker.nativeLinker();
    private static final byte INPROGRESS = (byte) ucx_h.UCS_INPROGRESS();
    private static final MethodHandle CHECK = LINKER.downcallHandle(ucx_h.ucp_request_check_status$address(),
            FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG), Linker.Option.critical(false));
    private static final MethodHandle TAG_RECV_TEST = LINKER.downcallHandle(
            ucx_h.ucp_tag_recv_request_test$address(), FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG, JAVA_LONG),
            Linker.Option.critical(false));
    private static final MethodHandle FREE = LINKER.downcallHandle(ucx_h.ucp_request_free$address(),
            FunctionDescriptor.ofVoid(JAVA_LONG), Linker.Option.critical(false));
    private MethodHandle progress;
    private MethodHandle send;
    private MethodHandle receive;
    private long senderAddress;
    private long receiverAddress;
    private long endpointAddress;
    private long outAddress;
    private long inAddress;
    private long plainParam;
    private long tagInfo;

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
        // critical exactly when the binding makes its calls critical: when nothing can call back
        Linker.Option[] critical = errorCallback ? new Linker.Option[0]
                : new Linker.Option[] {Linker.Option.critical(false)};
        progress = LINKER.downcallHandle(ucx_h.ucp_worker_progress$address(),
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG), critical);
        send = LINKER.downcallHandle(ucx_h.ucp_tag_send_nbx$address(), FunctionDescriptor.of(JAVA_LONG, JAVA_LONG,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), critical);
        receive = LINKER.downcallHandle(ucx_h.ucp_tag_recv_nbx$address(), FunctionDescriptor.of(JAVA_LONG,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), critical);
        senderAddress = sender.nativeHandle().address();
        receiverAddress = receiver.nativeHandle().address();
        endpointAddress = endpoint.nativeHandle().address();
        outAddress = out.address();
        inAddress = in.address();
        plainParam = io.github.ucxffm.bindings.ucp_request_param_t.allocate(arena).address();
        tagInfo = io.github.ucxffm.bindings.ucp_tag_recv_info.allocate(arena).address();
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

    /**
     * The C loop of {@link #tagSendReceive8} ({@code bench/native/ucp_loops.c}), call for call, through plain
     * downcalls with none of the binding's code (raw addresses; critical when the binding's are): the floor any Java
     * binding stands on, so that the difference to {@link #tagSendReceive8} is the binding's own work. On UCX 1.13
     * the binding takes an arrived message with a probe first (its receive information), which this loop, reading
     * no tag, does not need.
     *
     * @return the receive's status
     * @throws Throwable from a downcall
     */
    @Benchmark
    public int plainFfmTagSendReceive8() throws Throwable {
        long recv = (long) receive.invokeExact(receiverAddress, inAddress, 8L, 42L, -1L, plainParam);
        long sent = (long) send.invokeExact(endpointAddress, outAddress, 8L, 42L, plainParam);
        byte sendStatus = sent == 0 ? 0 : INPROGRESS;
        byte recvStatus = recv == 0 ? 0 : INPROGRESS;
        while (sendStatus == INPROGRESS || recvStatus == INPROGRESS) {
            int a = (int) progress.invokeExact(senderAddress);
            int b = (int) progress.invokeExact(receiverAddress);
            if (sendStatus == INPROGRESS && (sendStatus = (byte) CHECK.invokeExact(sent)) != INPROGRESS) {
                FREE.invokeExact(sent);
            }
            if (recvStatus == INPROGRESS && (recvStatus = (byte) TAG_RECV_TEST.invokeExact(recv, tagInfo))
                    != INPROGRESS) {
                FREE.invokeExact(recv);
            }
        }
        return recvStatus;
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
