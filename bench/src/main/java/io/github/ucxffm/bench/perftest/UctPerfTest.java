package io.github.ucxffm.bench.perftest;

import io.github.ucxffm.bindings.support.UctInline;
import io.github.ucxffm.bindings.ucx_h;
import io.github.ucxffm.bindings.uct_allocated_memory;
import io.github.ucxffm.bindings.uct_completion;
import io.github.ucxffm.bindings.uct_component_attr;
import io.github.ucxffm.bindings.uct_ep;
import io.github.ucxffm.bindings.uct_ep_params;
import io.github.ucxffm.bindings.uct_iface_attr;
import io.github.ucxffm.bindings.uct_iface_params;
import io.github.ucxffm.bindings.uct_iov;
import io.github.ucxffm.bindings.uct_md_attr;
import io.github.ucxffm.bindings.uct_md_resource_desc;
import io.github.ucxffm.bindings.uct_rkey_bundle;
import io.github.ucxffm.bindings.uct_tl_resource_desc;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The UCT tests of {@code ucx_perftest} on the raw bindings: {@code am_lat}, {@code put_lat}, {@code am_bw} and
 * {@code put_bw} over one transport and device ({@code -x TL -d DEV}), with the data layout of {@code -D}
 * ({@code short}, {@code bcopy}, {@code zcopy}). Nothing of the high-level API is used: the data path is
 * {@link UctInline}'s mirrors of {@code uct.h}'s {@code static inline} calls, and the AM handler and the pack
 * callback are upcall stubs made once, taking raw addresses so that a call allocates nothing.
 * <p>
 * As in {@code ucx_perftest}, the two processes exchange the test, then their device, interface and (for transports
 * that connect endpoint to endpoint) endpoint addresses, the packed remote key and the address of their receive
 * buffer, over a plain TCP socket; barriers go over that socket too. Each side opens the memory domain that offers
 * the transport and device, an interface on it, allocates its buffers with {@code uct_iface_mem_alloc} (which for
 * shared-memory transports is memory the peer can map), and connects one endpoint to the peer.
 * <p>
 * The tests, read from {@code ucx_perftest}'s behaviour:
 * <ul>
 *   <li>{@code am_lat}: a ping-pong of active messages whose 8-byte header is a sequence number; each side
 *       progresses until its handler has seen the number it waits for.</li>
 *   <li>{@code put_lat}: a ping-pong through memory, the sequence number in the last byte, as {@code ucp_put_lat}.</li>
 *   <li>{@code am_bw}: active messages with flow control: the receiver acknowledges (an active message carrying the
 *       last sequence number seen) every half window of {@value #FC_WINDOW}, and the sender stays within the
 *       window; the sender ends when the last message was acknowledged.</li>
 *   <li>{@code put_bw}: puts, then a sentinel put (first byte 2) the receiver waits for, progressing.</li>
 * </ul>
 * Sequence numbers are 64-bit here (the AM header, or the first 8 bytes of a bcopy or zcopy message) where
 * {@code ucx_perftest} keeps 8 bits; the messages have the same size. At the end the server checks what arrived:
 * the count and lengths of the active messages, the bytes of the puts; a mismatch fails the run.
 */
public final class UctPerfTest extends PerfRunner {

    /** The flow-control window of {@code am_bw}: {@code ucx_perftest}'s default {@code -W}. */
    static final int FC_WINDOW = 127;
    /** Sends between two progress calls when sends succeed at once, as in {@code ucx_perftest}. */
    private static final int SENDS_PER_PROGRESS = 16;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);
    private static final byte AM_ID = (byte) Handshake.AM_ID;
    private static final byte OK = (byte) ucx_h.UCS_OK();
    private static final byte INPROGRESS = (byte) ucx_h.UCS_INPROGRESS();
    private static final byte NO_RESOURCE = (byte) ucx_h.UCS_ERR_NO_RESOURCE();
    private static final byte SENTINEL = 2;
    private static final VarHandle BYTE = JAVA_BYTE.varHandle();
    private static final VarHandle INT = JAVA_INT.varHandle();
    private static final long COMPLETION_COUNT = uct_completion.count$offset();
    /** All of memory, to read and copy at the raw addresses the upcalls receive without making a segment. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /**
     * Room for structs UCX fills whole ({@code uct_iface_attr_t}, {@code uct_md_attr_t},
     * {@code uct_allocated_memory_t}): releases append fields (the allocated-memory descriptor grew from 40 to 48
     * bytes in UCX 1.23, past the generated 1.18 layout), so each is given this much, whatever the generated size.
     */
    private static final long OUT_STRUCT_ROOM = 1024;

    private final Arena arena = Arena.ofShared();
    private final Deque<Runnable> cleanups = new ArrayDeque<>();
    private final MemorySegment pointerOut;

    private SideChannel side;
    private DataInputStream in;
    private DataOutputStream outStream;

    // the transport, fixed once opened
    private MemorySegment worker;
    private MemorySegment component;
    private MemorySegment md;
    private MemorySegment iface;
    private MemorySegment ifaceAttr;
    private MemorySegment ep;
    private long capFlags;
    private String tl;
    private String dev;
    /** Whether AM sends may be critical downcalls: not over {@code self}, which delivers inside the send. */
    private boolean criticalAm;

    // the test
    private PerfTestType.Operation operation;
    private UctLayout layout;
    private int size;
    private int window;
    private MemorySegment send;
    private MemorySegment sendPayload;
    private MemorySegment recv;
    private MemorySegment sendMemh;
    /** The memory handle of the receive buffer, packed into the remote key the peer puts with. */
    private MemorySegment recvMemh;
    private long remoteAddress;
    private long rkey;
    private MemorySegment comp;
    private MemorySegment iov;
    private MemorySegment amHeader;
    private MemorySegment amStub;
    private MemorySegment packStub;

    // state of the loops, shared by warm-up and measured runs on each side
    /** The next sequence number this side sends (ping-pongs, and the sender of a stream). */
    private long sequence;
    /** The last sequence number the AM handler saw: the peer's message or acknowledgement. */
    private long amLast = -1;
    /** Active messages the handler saw, and how many had a length other than the message size. */
    private long amCount;
    private long amBadLength;
    /** The last sequence number the server of {@code am_bw} acknowledged, and the last one it waits for. */
    private long amAcked = -1;
    private long amTarget;
    private int sends;
    private Throwable upcallFailure;

    private UctPerfTest(PrintStream out, PrintStream err) {
        super(PerfTest.RUNNER, out, err);
        cleanups.push(arena::close);
        pointerOut = arena.allocate(ucx_h.C_POINTER);
    }

    /**
     * Makes a UCT runner; the transports argument of {@link PerfRunner.Factory} is not used: a UCT test names its
     * transport and device itself.
     *
     * @param out        where the table goes
     * @param err        where messages go
     * @param transports ignored
     * @param params     ignored: the session reads the command line
     * @return the runner
     */
    static PerfRunner create(PrintStream out, PrintStream err, String transports, PerfParams params) {
        return new UctPerfTest(out, err);
    }

    // ---- session ------------------------------------------------------------------------------------------------

    @Override
    protected void serve(PerfParams p) throws Exception {
        streams(SideChannel.awaitClient(p.port(), out));
        byte[] request = side.readFrame(runner + " UCT runner");
        Handshake.Request r = Handshake.parseRequest(request, request.length);
        String ctl = in.readUTF();
        String cdev = in.readUTF();
        UctLayout clayout = UctLayout.byName(in.readUTF());
        try {
            params = p.withRequest(r).withUct(ctl, cdev, clayout);
            open();
            prepare();
        } catch (RuntimeException e) {
            outStream.writeUTF(e.getMessage() == null ? e.toString() : e.getMessage());
            outStream.flush();
            throw e;
        }
        outStream.writeUTF("");
        outStream.flush();
        connect();
        printServerBox();
        runServer();
        verifyArrivals();
    }

    @Override
    protected void client(PerfParams p) throws Exception {
        params = p;
        open();
        prepare();
        try {
            streams(SideChannel.connect(p.host(), p.port(), CONNECT_TIMEOUT, runner + " server with -d"));
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        side.writeFrame(Handshake.request(p, new byte[0], 0));
        outStream.writeUTF(tl);
        outStream.writeUTF(dev);
        outStream.writeUTF(layout.label());
        outStream.flush();
        String refusal = in.readUTF();
        if (!refusal.isEmpty()) {
            throw new IllegalStateException("the server cannot run the test: " + refusal);
        }
        connect();
        PerfReport report = new PerfReport(out, p.test(), p.size(), p.percentile(), p.finalOnly());
        report.printHeader(p.test());
        runClient(report);
        report.printFinal();
        printRunNotes();
        err.println(runner + ": transports: " + tl + "/" + dev + " (" + layout.label() + ")");
        verifyArrivals();
    }

    private void streams(SideChannel channel) {
        side = channel;
        in = channel.in();
        outStream = channel.out();
    }

    private void printServerBox() {
        PerfReport.printServerInfo(out, "transport layer", "ucx-ffm (Java FFM API, raw UCT bindings)",
                params.test(), layout.label() + " (" + tl + "/" + dev + ")", params.size());
    }

    // ---- opening the transport ----------------------------------------------------------------------------------

    private static void check(byte status, String call) {
        if (status != OK) {
            throw new IllegalStateException(call + "(..) failed: " + statusText(status));
        }
    }

    private static String statusText(long status) {
        return ucx_h.ucs_status_string((byte) status).getString(0) + " (" + status + ")";
    }

    private MemorySegment pointer() {
        return pointerOut.get(ucx_h.C_POINTER, 0);
    }

    /** Opens the memory domain offering {@code -x}/{@code -d}, an interface on it, and checks the test's needs. */
    private void open() {
        tl = params.transports();
        dev = params.device();
        criticalAm = !"self".equals(tl);
        layout = params.effectiveLayout();
        MemorySegment count = arena.allocate(JAVA_INT);
        check(ucx_h.ucs_async_context_create(ucx_h.UCS_ASYNC_MODE_THREAD_SPINLOCK(), pointerOut),
                "ucs_async_context_create");
        MemorySegment async = pointer();
        cleanups.push(() -> ucx_h.ucs_async_context_destroy(async));
        check(ucx_h.uct_worker_create(async, ucx_h.UCS_THREAD_MODE_SINGLE(), pointerOut), "uct_worker_create");
        MemorySegment w = pointer();
        worker = w;
        cleanups.push(() -> ucx_h.uct_worker_destroy(w));

        check(ucx_h.uct_query_components(pointerOut, count), "uct_query_components");
        MemorySegment components = pointer().reinterpret(ucx_h.C_POINTER.byteSize()
                * Math.max(1, count.get(JAVA_INT, 0)));
        cleanups.push(() -> ucx_h.uct_release_component_list(components));
        List<String> available = new ArrayList<>();
        for (int c = 0; c < count.get(JAVA_INT, 0) && md == null; c++) {
            findMd(components.getAtIndex(ucx_h.C_POINTER, c), available);
        }
        if (md == null) {
            throw new UnsupportedOperationException("no UCT transport " + tl + "/" + dev + " here (-x " + tl + " -d "
                    + dev + "); available: " + String.join(", ", available));
        }

        check(ucx_h.uct_md_iface_config_read(md, arena.allocateFrom(tl), MemorySegment.NULL, MemorySegment.NULL,
                pointerOut), "uct_md_iface_config_read");
        MemorySegment config = pointer();
        cleanups.push(() -> ucx_h.uct_config_release(config));
        MemorySegment ip = uct_iface_params.allocate(arena);
        uct_iface_params.field_mask(ip, ucx_h.UCT_IFACE_PARAM_FIELD_OPEN_MODE() | ucx_h.UCT_IFACE_PARAM_FIELD_DEVICE()
                | ucx_h.UCT_IFACE_PARAM_FIELD_RX_HEADROOM() | ucx_h.UCT_IFACE_PARAM_FIELD_FEATURES());
        uct_iface_params.open_mode(ip, ucx_h.UCT_IFACE_OPEN_MODE_DEVICE());
        MemorySegment device = uct_iface_params.mode.device(uct_iface_params.mode(ip));
        uct_iface_params.mode.device.tl_name(device, arena.allocateFrom(tl));
        uct_iface_params.mode.device.dev_name(device, arena.allocateFrom(dev));
        uct_iface_params.rx_headroom(ip, 0);
        uct_iface_params.features(ip, ucx_h.UCT_IFACE_FEATURE_AM() | ucx_h.UCT_IFACE_FEATURE_PUT());
        check(ucx_h.uct_iface_open(md, worker, ip, config, pointerOut), "uct_iface_open");
        MemorySegment i = pointer();
        iface = i;
        cleanups.push(() -> ucx_h.uct_iface_close(i));
        ifaceAttr = arena.allocate(Math.max(OUT_STRUCT_ROOM, uct_iface_attr.sizeof()), 8);
        check(ucx_h.uct_iface_query(iface, ifaceAttr), "uct_iface_query");
        capFlags = uct_iface_attr.cap.flags(uct_iface_attr.cap(ifaceAttr));
        checkCapabilities();
    }

    /** Looks through one component's memory domains for the transport and device; opens the first that has them. */
    private void findMd(MemorySegment comp, List<String> available) {
        MemorySegment attr = uct_component_attr.allocate(arena);
        uct_component_attr.field_mask(attr, ucx_h.UCT_COMPONENT_ATTR_FIELD_NAME()
                | ucx_h.UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT());
        check(ucx_h.uct_component_query(comp, attr), "uct_component_query");
        int mdCount = uct_component_attr.md_resource_count(attr);
        if (mdCount == 0) {
            return;
        }
        MemorySegment mds = uct_md_resource_desc.allocateArray(mdCount, arena);
        uct_component_attr.md_resources(attr, mds);
        uct_component_attr.field_mask(attr, ucx_h.UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES());
        check(ucx_h.uct_component_query(comp, attr), "uct_component_query");
        MemorySegment count = arena.allocate(JAVA_INT);
        for (int m = 0; m < mdCount; m++) {
            MemorySegment mdName = uct_md_resource_desc.md_name(uct_md_resource_desc.asSlice(mds, m));
            if (ucx_h.uct_md_config_read(comp, MemorySegment.NULL, MemorySegment.NULL, pointerOut) != OK) {
                continue;
            }
            MemorySegment mdConfig = pointer();
            byte opened = ucx_h.uct_md_open(comp, mdName, mdConfig, pointerOut);
            ucx_h.uct_config_release(mdConfig);
            if (opened != OK) {
                continue;
            }
            MemorySegment candidate = pointer();
            boolean found = false;
            if (ucx_h.uct_md_query_tl_resources(candidate, pointerOut, count) == OK) {
                int n = count.get(JAVA_INT, 0);
                MemorySegment list = pointer();
                MemorySegment resources = uct_tl_resource_desc.reinterpret(list, Math.max(1, n), arena, null);
                for (int t = 0; t < n; t++) {
                    MemorySegment r = uct_tl_resource_desc.asSlice(resources, t);
                    String rtl = uct_tl_resource_desc.tl_name(r).getString(0);
                    String rdev = uct_tl_resource_desc.dev_name(r).getString(0);
                    available.add(rtl + "/" + rdev);
                    found |= rtl.equals(tl) && rdev.equals(dev);
                }
                ucx_h.uct_release_tl_resource_list(list);
            }
            if (found) {
                md = candidate;
                component = comp;
                cleanups.push(() -> ucx_h.uct_md_close(candidate));
                return;
            }
            ucx_h.uct_md_close(candidate);
        }
    }

    /** Refuses, as {@code ucx_perftest} does, an operation or a size the interface does not offer. */
    private void checkCapabilities() {
        PerfTestType.Operation op = params.test().operation();
        boolean am = op == PerfTestType.Operation.AM;
        MemorySegment cap = uct_iface_attr.cap(ifaceAttr);
        MemorySegment a = am ? uct_iface_attr.cap.am(cap) : uct_iface_attr.cap.put(cap);
        long[] flags = am
                ? new long[] {ucx_h.UCT_IFACE_FLAG_AM_SHORT(), ucx_h.UCT_IFACE_FLAG_AM_BCOPY(),
                        ucx_h.UCT_IFACE_FLAG_AM_ZCOPY()}
                : new long[] {ucx_h.UCT_IFACE_FLAG_PUT_SHORT(), ucx_h.UCT_IFACE_FLAG_PUT_BCOPY(),
                        ucx_h.UCT_IFACE_FLAG_PUT_ZCOPY()};
        long max = switch (layout) {
            case SHORT -> am ? uct_iface_attr.cap.am.max_short(a) : uct_iface_attr.cap.put.max_short(a);
            case BCOPY -> am ? uct_iface_attr.cap.am.max_bcopy(a) : uct_iface_attr.cap.put.max_bcopy(a);
            case ZCOPY -> am ? uct_iface_attr.cap.am.max_zcopy(a) : uct_iface_attr.cap.put.max_zcopy(a);
        };
        long min = layout != UctLayout.ZCOPY ? 0
                : am ? uct_iface_attr.cap.am.min_zcopy(a) : uct_iface_attr.cap.put.min_zcopy(a);
        String what = (am ? "am " : "put ") + layout.label();
        if ((capFlags & flags[layout.ordinal()]) == 0) {
            List<String> offered = new ArrayList<>();
            for (UctLayout l : UctLayout.values()) {
                if ((capFlags & flags[l.ordinal()]) != 0) {
                    offered.add(l.label());
                }
            }
            throw new UnsupportedOperationException(tl + "/" + dev + " does not support operation " + what
                    + (offered.isEmpty() ? " (" + tl + " has no " + (am ? "active messages" : "puts") + ")"
                    : " (it offers -D " + String.join(", -D ", offered) + ")"));
        }
        // size_t limits: "no limit" is SIZE_MAX (or just under), negative as a Java long
        if (Long.compareUnsigned(params.size(), max) > 0) {
            throw new UnsupportedOperationException("message size (" + params.size() + ") is larger than " + tl
                    + "/" + dev + " supports for " + what + " (" + Long.toUnsignedString(max) + ")");
        }
        if (Long.compareUnsigned(params.size(), min) < 0) {
            throw new UnsupportedOperationException("message size (" + params.size() + ") is smaller than " + tl
                    + "/" + dev + " supports for " + what + " (" + min + ")");
        }
        if (am && layout == UctLayout.ZCOPY && uct_iface_attr.cap.am.max_hdr(a) < Long.BYTES) {
            throw new UnsupportedOperationException(tl + "/" + dev + " takes no 8-byte header with am zcopy");
        }
        boolean connects = (capFlags & (ucx_h.UCT_IFACE_FLAG_CONNECT_TO_EP()
                | ucx_h.UCT_IFACE_FLAG_CONNECT_TO_IFACE())) != 0;
        if (!connects) {
            throw new UnsupportedOperationException(tl + "/" + dev + " connects neither to an interface nor to an "
                    + "endpoint");
        }
    }

    /** Allocates the buffers, the completion, the IOV and the upcall stubs the test uses. */
    private void prepare() throws ReflectiveOperationException {
        operation = params.test().operation();
        size = (int) params.size();
        window = params.effectiveWindow();
        long length = Math.max(size, 64);
        MemorySegment sendMem = allocate(length, "ucx-ffm perftest send");
        MemorySegment recvMem = allocate(length, "ucx-ffm perftest recv");
        send = uct_allocated_memory.address(sendMem).reinterpret(length);
        recv = uct_allocated_memory.address(recvMem).reinterpret(length);
        sendMemh = uct_allocated_memory.memh(sendMem);
        recvMemh = uct_allocated_memory.memh(recvMem);
        for (int k = 0; k < length; k++) {
            send.set(JAVA_BYTE, k, pattern(k));
        }
        recv.fill((byte) 0);
        if (operation == PerfTestType.Operation.PUT) {
            if (params.test().pattern() == PerfTestType.Pattern.PING_PONG) {
                recv.set(JAVA_BYTE, size - 1, (byte) 0xFF); // the sequence starts at 0: the last byte must differ
            } else {
                send.set(JAVA_BYTE, 0, (byte) 0);
            }
        }
        sendPayload = send.asSlice(Long.BYTES);
        amHeader = send;
        comp = uct_completion.allocate(arena);
        uct_completion.func(comp, MemorySegment.NULL);
        uct_completion.count(comp, 1);
        uct_completion.status(comp, OK);
        iov = uct_iov.allocate(arena);
        boolean amZcopy = operation == PerfTestType.Operation.AM;
        uct_iov.buffer(iov, amZcopy ? send.asSlice(Long.BYTES) : send);
        uct_iov.length(iov, amZcopy ? size - Long.BYTES : size);
        uct_iov.memh(iov, sendMemh);
        uct_iov.stride(iov, 0);
        uct_iov.count(iov, 1);

        MethodHandles.Lookup lookup = MethodHandles.lookup();
        Linker linker = Linker.nativeLinker();
        MethodHandle onAm = lookup.findVirtual(UctPerfTest.class, "onActiveMessage",
                MethodType.methodType(byte.class, long.class, long.class, long.class, int.class)).bindTo(this);
        amStub = linker.upcallStub(onAm, FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_INT), arena);
        MethodHandle pack = lookup.findVirtual(UctPerfTest.class, "pack",
                MethodType.methodType(long.class, long.class, long.class)).bindTo(this);
        packStub = linker.upcallStub(pack, FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG), arena);
        if ((capFlags & (ucx_h.UCT_IFACE_FLAG_AM_SHORT() | ucx_h.UCT_IFACE_FLAG_AM_BCOPY()
                | ucx_h.UCT_IFACE_FLAG_AM_ZCOPY())) != 0) {
            check(ucx_h.uct_iface_set_am_handler(iface, AM_ID, amStub, MemorySegment.NULL, 0),
                    "uct_iface_set_am_handler");
            cleanups.push(() -> ucx_h.uct_iface_set_am_handler(iface, AM_ID, MemorySegment.NULL, MemorySegment.NULL,
                    0));
        }
        int progressFlags = ucx_h.UCT_PROGRESS_SEND() | ucx_h.UCT_PROGRESS_RECV();
        UctInline.uct_iface_progress_enable(iface, progressFlags);
        cleanups.push(() -> UctInline.uct_iface_progress_disable(iface, progressFlags));
    }

    /** The bytes of the send buffer: what the receiver of a put checks. */
    static byte pattern(int k) {
        return (byte) (k * 31 + 7);
    }

    private MemorySegment allocate(long length, String name) {
        MemorySegment mem = arena.allocate(OUT_STRUCT_ROOM, 8);
        check(ucx_h.uct_iface_mem_alloc(iface, length, ucx_h.UCT_MD_MEM_ACCESS_ALL(), arena.allocateFrom(name), mem),
                "uct_iface_mem_alloc");
        cleanups.push(() -> ucx_h.uct_iface_mem_free(mem));
        return mem;
    }

    /**
     * Exchanges addresses with the peer over the socket and connects the endpoint: to the peer's endpoint when the
     * transport connects endpoint to endpoint, else to its interface; then flushes and meets at a barrier.
     */
    private void connect() throws IOException {
        long devLen = uct_iface_attr.device_addr_len(ifaceAttr);
        long ifaceLen = uct_iface_attr.iface_addr_len(ifaceAttr);
        long epLen = uct_iface_attr.ep_addr_len(ifaceAttr);
        boolean toEp = (capFlags & ucx_h.UCT_IFACE_FLAG_CONNECT_TO_EP()) != 0;
        MemorySegment devAddr = arena.allocate(Math.max(1, devLen));
        MemorySegment ifaceAddr = arena.allocate(Math.max(1, ifaceLen));
        check(ucx_h.uct_iface_get_device_address(iface, devAddr), "uct_iface_get_device_address");
        check(ucx_h.uct_iface_get_address(iface, ifaceAddr), "uct_iface_get_address");
        MemorySegment epAddr = arena.allocate(Math.max(1, epLen));
        MemorySegment epParams = uct_ep_params.allocate(arena);
        if (toEp) {
            uct_ep_params.field_mask(epParams, ucx_h.UCT_EP_PARAM_FIELD_IFACE());
            uct_ep_params.iface(epParams, iface);
            check(ucx_h.uct_ep_create(epParams, pointerOut), "uct_ep_create");
            setEndpoint(pointer());
            check(ucx_h.uct_ep_get_address(ep, epAddr), "uct_ep_get_address");
        }
        MemorySegment mdAttr = arena.allocate(Math.max(OUT_STRUCT_ROOM, uct_md_attr.sizeof()), 8);
        check(ucx_h.uct_md_query(md, mdAttr), "uct_md_query");
        long mdFlags = uct_md_attr.cap.flags(uct_md_attr.cap(mdAttr));
        long rkeyLen = (mdFlags & (ucx_h.UCT_MD_FLAG_ALLOC() | ucx_h.UCT_MD_FLAG_REG())) != 0
                ? uct_md_attr.rkey_packed_size(mdAttr) : 0;
        MemorySegment rkeyBuffer = arena.allocate(Math.max(1, rkeyLen));
        if (rkeyLen > 0) {
            check(ucx_h.uct_md_mkey_pack(md, recvMemh, rkeyBuffer),
                    "uct_md_mkey_pack");
        }

        outStream.writeLong(recv.address());
        writeBytes(rkeyBuffer, rkeyLen);
        writeBytes(devAddr, devLen);
        writeBytes(ifaceAddr, ifaceLen);
        writeBytes(epAddr, toEp ? epLen : 0);
        outStream.flush();

        remoteAddress = in.readLong();
        MemorySegment peerRkey = readBytes();
        MemorySegment peerDev = readBytes();
        MemorySegment peerIface = readBytes();
        MemorySegment peerEp = readBytes();
        if (ucx_h.uct_iface_is_reachable(iface, peerDev, peerIface.byteSize() > 0 ? peerIface
                : MemorySegment.NULL) == 0) {
            throw new IllegalStateException("the peer's " + tl + "/" + dev + " is unreachable from here");
        }
        if (peerRkey.byteSize() > 0) {
            MemorySegment bundle = arena.allocate(Math.max(OUT_STRUCT_ROOM, uct_rkey_bundle.sizeof()), 8);
            check(ucx_h.uct_rkey_unpack(component, peerRkey, bundle), "uct_rkey_unpack");
            MemorySegment c = component;
            cleanups.push(() -> ucx_h.uct_rkey_release(c, bundle));
            rkey = uct_rkey_bundle.rkey(bundle);
        } else {
            rkey = ucx_h.UCT_INVALID_RKEY();
        }
        if (toEp) {
            check(ucx_h.uct_ep_connect_to_ep(ep, peerDev, peerEp), "uct_ep_connect_to_ep");
        } else {
            uct_ep_params.field_mask(epParams, ucx_h.UCT_EP_PARAM_FIELD_IFACE() | ucx_h.UCT_EP_PARAM_FIELD_DEV_ADDR()
                    | ucx_h.UCT_EP_PARAM_FIELD_IFACE_ADDR());
            uct_ep_params.iface(epParams, iface);
            uct_ep_params.dev_addr(epParams, peerDev);
            uct_ep_params.iface_addr(epParams, peerIface);
            check(ucx_h.uct_ep_create(epParams, pointerOut), "uct_ep_create");
            setEndpoint(pointer());
        }
        flushIface();
        barrier(3, 0, params.isServer());
    }

    private void setEndpoint(MemorySegment e) {
        ep = e.reinterpret(uct_ep.sizeof());
        MemorySegment destroy = ep;
        cleanups.push(() -> ucx_h.uct_ep_destroy(destroy));
    }

    private void writeBytes(MemorySegment s, long length) throws IOException {
        side.writeFrame(s.asSlice(0, length).toArray(JAVA_BYTE));
    }

    private MemorySegment readBytes() throws IOException {
        byte[] b = side.readFrame(runner + " UCT runner");
        return b.length == 0 ? MemorySegment.NULL.reinterpret(0) : arena.allocateFrom(JAVA_BYTE, b);
    }

    @Override
    protected int barrier(int sequenceNumber, int value, boolean server) throws IOException {
        try {
            if (!server) {
                outStream.writeInt(sequenceNumber);
                outStream.writeInt(value);
                outStream.flush();
            }
            int seq = in.readInt();
            int peer = in.readInt();
            if (seq != sequenceNumber) {
                throw new IllegalStateException("barrier " + sequenceNumber + " met the peer at barrier " + seq);
            }
            if (server) {
                outStream.writeInt(sequenceNumber);
                outStream.writeInt(value);
                outStream.flush();
            }
            return peer;
        } catch (EOFException e) {
            throw new IllegalStateException("the peer closed the connection at barrier " + sequenceNumber, e);
        }
    }

    // ---- the data path --------------------------------------------------------------------------------------------

    private int progress() {
        return UctInline.uct_worker_progress(worker);
    }

    /** Outstanding zero-copy operations: the completion's count above its base of 1, as in ucx_perftest. */
    private int outstanding() {
        return (int) INT.getVolatile(comp, COMPLETION_COUNT) - 1;
    }

    private void waitWindow(int limit) {
        while (outstanding() >= limit) {
            progress();
        }
    }

    /**
     * One send of the test's operation and layout carrying {@code sn}; returns UCX's status. Short and zcopy sends are
     * critical downcalls ({@link UctInline.Critical}: the fence of a plain downcall's return would wait for every
     * send's stores into the peer's memory); bcopy runs the Java pack callback, so it stays a plain call. AM sends
     * over {@code self} stay plain too: {@code self} runs the handler, a Java upcall, inside the send.
     */
    private byte sendOnce(long sn) {
        if (operation == PerfTestType.Operation.AM) {
            switch (layout) {
                case SHORT -> {
                    return criticalAm
                            ? UctInline.Critical.uct_ep_am_short(ep, AM_ID, sn, sendPayload, size - Long.BYTES)
                            : UctInline.uct_ep_am_short(ep, AM_ID, sn, sendPayload, size - Long.BYTES);
                }
                case BCOPY -> {
                    send.set(JAVA_LONG_UNALIGNED, 0, sn);
                    long packed = UctInline.uct_ep_am_bcopy(ep, AM_ID, packStub, MemorySegment.NULL, 0);
                    return packed >= 0 ? OK : (byte) packed;
                }
                default -> {
                    send.set(JAVA_LONG_UNALIGNED, 0, sn);
                    return criticalAm
                            ? UctInline.Critical.uct_ep_am_zcopy(ep, AM_ID, amHeader, Long.BYTES, iov, 1, 0, comp)
                            : UctInline.uct_ep_am_zcopy(ep, AM_ID, amHeader, Long.BYTES, iov, 1, 0, comp);
                }
            }
        }
        switch (layout) {
            case SHORT -> {
                return UctInline.Critical.uct_ep_put_short(ep, send, size, remoteAddress, rkey);
            }
            case BCOPY -> {
                long packed = UctInline.uct_ep_put_bcopy(ep, packStub, MemorySegment.NULL, remoteAddress, rkey);
                return packed >= 0 ? OK : (byte) packed;
            }
            default -> {
                return UctInline.Critical.uct_ep_put_zcopy(ep, iov, 1, remoteAddress, rkey, comp);
            }
        }
    }

    /** Sends until the transport takes it, progressing while it has no resources ({@code send_b}). */
    private void sendBlocking(long sn) {
        while (true) {
            byte status = sendOnce(sn);
            if (status == OK) {
                if (sends++ % SENDS_PER_PROGRESS == 0) {
                    progress();
                }
                return;
            }
            if (status == INPROGRESS) {
                // cast: an unused result would be Object, boxed at every call
                int before = (int) INT.getAndAdd(comp, COMPLETION_COUNT, 1);
                assert before > 0;
                progress();
                return;
            }
            if (status != NO_RESOURCE) {
                throw new IllegalStateException("sending " + operation + " " + layout.label() + " failed: "
                        + statusText(status));
            }
            progress();
        }
    }

    private void awaitAm(long sn) {
        while (amLast < sn) {
            progress();
        }
        failIfUpcallFailed();
    }

    private void awaitByte(long offset, byte value) {
        while ((byte) BYTE.getVolatile(recv, offset) != value) {
            progress();
        }
    }

    @Override
    protected void ping() {
        long sn = sequence++;
        if (operation == PerfTestType.Operation.AM) {
            sendBlocking(sn);
            awaitAm(sn);
        } else {
            send.set(JAVA_BYTE, size - 1, (byte) sn);
            sendBlocking(sn);
            awaitByte(size - 1, (byte) sn);
        }
    }

    @Override
    protected void pong() {
        long sn = sequence++;
        if (operation == PerfTestType.Operation.AM) {
            awaitAm(sn);
            sendBlocking(sn);
        } else {
            awaitByte(size - 1, (byte) sn);
            send.set(JAVA_BYTE, size - 1, (byte) sn);
            sendBlocking(sn);
        }
    }

    @Override
    protected void issue(long i) {
        long sn = sequence;
        if (operation == PerfTestType.Operation.AM) {
            while (sn > amLast + FC_WINDOW) {
                progress();
            }
        }
        waitWindow(window);
        sendBlocking(sn);
        sequence = sn + 1;
    }

    @Override
    protected void drain() {
        if (operation == PerfTestType.Operation.AM && params.test().pattern() == PerfTestType.Pattern.STREAM
                && !params.isServer()) {
            awaitAm(sequence - 1); // the acknowledgement of the last message: nothing more is on its way
        }
        waitWindow(1);
        flushIface();
    }

    @Override
    protected void flush() {
        // put_bw ends with a sentinel in the first byte, which the receiver waits for
        waitWindow(1);
        send.set(JAVA_BYTE, 0, SENTINEL);
        sendBlocking(sequence);
        waitWindow(1);
        flushIface();
        send.set(JAVA_BYTE, 0, (byte) 0);
    }

    @Override
    protected void sink(long iterations) {
        if (operation == PerfTestType.Operation.AM) {
            amTarget += iterations;
            long last = amTarget - 1;
            while (amLast < last) {
                progress();
                long sn = amLast;
                if (sn > amAcked + FC_WINDOW / 2) {
                    acknowledge(sn);
                }
            }
            if (amLast > amAcked) {
                acknowledge(amLast);
            }
            failIfUpcallFailed();
        } else {
            awaitByte(0, SENTINEL);
            checkPutData(1, size);
            recv.set(JAVA_BYTE, 0, (byte) 0);
        }
        waitWindow(1);
        flushIface();
    }

    private void acknowledge(long sn) {
        waitWindow(window);
        sendBlocking(sn);
        amAcked = sn;
    }

    private void flushIface() {
        while (true) {
            byte status = UctInline.uct_iface_flush(iface, 0, MemorySegment.NULL);
            if (status == OK) {
                return;
            }
            if (status != INPROGRESS && status != NO_RESOURCE) {
                throw new IllegalStateException("uct_iface_flush failed: " + statusText(status));
            }
            progress();
        }
    }

    private long putMismatches;

    /** Compares received put data with the sender's pattern; counts differences (checked at the end). */
    private void checkPutData(int from, int to) {
        for (int k = from; k < to; k++) {
            if (recv.get(JAVA_BYTE, k) != pattern(k)) {
                putMismatches++;
                return;
            }
        }
    }

    // ---- upcalls --------------------------------------------------------------------------------------------------

    /** {@code uct_am_callback_t}: records the sequence number (the first 8 bytes: the header) and counts. */
    @SuppressWarnings("unused") // called by the upcall stub
    private byte onActiveMessage(long arg, long data, long length, int flags) {
        try {
            amLast = ALL.get(JAVA_LONG_UNALIGNED, data);
            amCount++;
            if (length != size) {
                amBadLength++;
            }
        } catch (Throwable t) {
            upcallFailure = t;
        }
        return OK;
    }

    /** {@code uct_pack_callback_t}: copies the send buffer into the transport's. */
    @SuppressWarnings("unused") // called by the upcall stub
    private long pack(long dest, long arg) {
        try {
            MemorySegment.copy(send, 0, ALL, dest, size);
            return size;
        } catch (Throwable t) {
            upcallFailure = t;
            return 0;
        }
    }

    private void failIfUpcallFailed() {
        Throwable t = upcallFailure;
        if (t != null) {
            throw new IllegalStateException("an upcall failed", t);
        }
    }

    /** After the run: says what arrived, and fails if it is not what was sent. */
    private void verifyArrivals() {
        failIfUpcallFailed();
        if (operation == PerfTestType.Operation.AM) {
            long expected = amLast + 1;
            err.println(runner + ": uct: received " + amCount + " active messages of " + size + " bytes"
                    + (amBadLength > 0 ? " (" + amBadLength + " of another length)" : ""));
            boolean countOk = params.isServer() && params.test().pattern() == PerfTestType.Pattern.STREAM
                    ? amCount == expected : amCount == sequence;
            if (amBadLength > 0 || params.isServer() && !countOk) {
                throw new IllegalStateException("active messages went missing or arrived wrong: " + amCount
                        + " received, " + (params.test().pattern() == PerfTestType.Pattern.STREAM ? expected
                        : sequence) + " expected, " + amBadLength + " of a wrong length");
            }
        } else {
            if (params.test().pattern() == PerfTestType.Pattern.PING_PONG) {
                checkPutData(0, size - 1);
            }
            if (params.isServer() || params.test().pattern() == PerfTestType.Pattern.PING_PONG) {
                err.println(runner + ": uct: put data " + (putMismatches == 0 ? "verified" : "DIFFER") + " ("
                        + size + " bytes)");
            }
            if (putMismatches > 0) {
                throw new IllegalStateException("the put data that arrived differ from what was sent");
            }
        }
    }

    @Override
    public void close() {
        Throwable first = null;
        while (!cleanups.isEmpty()) {
            try {
                cleanups.pop().run();
            } catch (Throwable t) {
                if (first == null) {
                    first = t;
                }
            }
        }
        try {
            if (side != null) {
                side.close();
            }
        } catch (IOException e) {
            // closing
        }
        if (first != null) {
            err.println(runner + ": closing: " + first);
        }
    }
}
