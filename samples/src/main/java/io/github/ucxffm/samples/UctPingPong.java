package io.github.ucxffm.samples;

import io.github.ucxffm.bindings.support.UctInline;
import io.github.ucxffm.bindings.ucx_h;
import io.github.ucxffm.bindings.uct_am_callback_t;
import io.github.ucxffm.bindings.uct_component_attr;
import io.github.ucxffm.bindings.uct_ep_params;
import io.github.ucxffm.bindings.uct_iface_attr;
import io.github.ucxffm.bindings.uct_iface_params;
import io.github.ucxffm.bindings.uct_md_resource_desc;
import io.github.ucxffm.bindings.uct_tl_resource_desc;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Ping-pong latency on UCT, the transport layer under UCP, through the raw bindings: one transport and device
 * ({@code --transport posix --device memory}, {@code --transport tcp --device lo}; tcp and its first device by
 * default), no protocol layer.
 * <p>
 * Steps, as UCX's own {@code uct_hello_world} takes them: an async context and a UCT worker; the memory domain
 * (md) that offers the transport and device, and an interface (iface) opened on it; an active-message handler for
 * id {@value #AM_ID}, an upcall that UCT calls from inside {@code uct_worker_progress}; the interface's device and
 * interface addresses (and an endpoint address, for transports that connect endpoint to endpoint) sent to the peer
 * over a plain TCP socket, since UCT has no connection establishment of its own here; an endpoint (ep) connected to
 * the peer's; then {@code uct_ep_am_short} (a {@code static inline} call of {@code uct.h}, made through
 * {@link UctInline}) and progress.
 * <p>
 * Wire protocol. The socket carries the addresses (each a 4-byte big-endian length and the bytes) and, at the end,
 * the client's count of round trips (8 bytes). The pings and pongs are short active messages: the 8-byte UCT
 * header holds the round number (warm-up rounds count too), the payload {@code --size} bytes, byte {@code i} being
 * {@code (byte) (i + round)}. The server answers each ping, from its main loop, with a pong carrying the same
 * header and payload; both sides check every payload. The handler copies the message out: UCT lends the data for
 * the call only.
 */
public final class UctPingPong {

    /** The active-message id of pings and pongs. */
    public static final byte AM_ID = 9;
    private static final byte OK = (byte) ucx_h.UCS_OK();
    private static final byte NO_RESOURCE = (byte) ucx_h.UCS_ERR_NO_RESOURCE();

    private final SampleOptions o;
    private final String tl;
    private final String dev;
    private final Arena arena = Arena.ofShared();
    private final Deque<Runnable> cleanups = new ArrayDeque<>();
    private final MemorySegment out = arena.allocate(ucx_h.C_POINTER);
    private MemorySegment worker;
    private MemorySegment md;
    private MemorySegment iface;
    private MemorySegment attr;
    private MemorySegment ep;
    private long capFlags;
    /** The payload size: {@code --size} on the client, which tells the server. */
    private long size;

    /** What the handler saw last: the round, the length, and a copy of the message (header and payload). */
    private MemorySegment received;
    private long receivedRound = -1;
    private long receivedLength;
    private long handled;
    private Throwable handlerFailure;

    private UctPingPong(SampleOptions o, String dev) {
        this.o = o;
        this.tl = o.transport() == null ? "tcp" : o.transport();
        this.dev = dev != null ? dev : tl.equals("tcp") ? "lo" : "memory";
        cleanups.push(arena::close);
    }

    static void run(String[] args) {
        List<String> rest = new ArrayList<>();
        String dev = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--device")) {
                if (i + 1 >= args.length) {
                    throw SampleException.usage("--device needs a value, such as lo or memory");
                }
                dev = args[++i];
            } else {
                rest.add(args[i]);
            }
        }
        SampleOptions o = SampleOptions.parse(rest.toArray(String[]::new));
        if (o.transport() != null && o.transport().contains(",")) {
            throw SampleException.usage("uct-pingpong runs on one UCT transport: --transport posix, tcp, sysv...");
        }
        UctPingPong p = new UctPingPong(o, dev);
        try {
            p.open();
            if (o.server()) {
                p.serve();
            } else {
                p.ping();
            }
        } catch (IOException e) {
            throw SampleException.failed("the address socket failed: " + e.getMessage());
        } finally {
            p.close();
        }
    }

    // ---- opening a transport --------------------------------------------------------------------------------------

    private static void check(byte status, String call) {
        if (status != OK) {
            throw SampleException.failed(call + " failed: " + ucx_h.ucs_status_string(status).getString(0));
        }
    }

    private MemorySegment result() {
        return out.get(ucx_h.C_POINTER, 0);
    }

    private void open() {
        check(ucx_h.ucs_async_context_create(ucx_h.UCS_ASYNC_MODE_THREAD_SPINLOCK(), out), "ucs_async_context_create");
        MemorySegment async = result();
        cleanups.push(() -> ucx_h.ucs_async_context_destroy(async));
        check(ucx_h.uct_worker_create(async, ucx_h.UCS_THREAD_MODE_SINGLE(), out), "uct_worker_create");
        MemorySegment w = result();
        worker = w;
        cleanups.push(() -> ucx_h.uct_worker_destroy(w));

        MemorySegment count = arena.allocate(JAVA_INT);
        check(ucx_h.uct_query_components(out, count), "uct_query_components");
        int n = count.get(JAVA_INT, 0);
        MemorySegment components = result().reinterpret(ucx_h.C_POINTER.byteSize() * Math.max(1, n));
        cleanups.push(() -> ucx_h.uct_release_component_list(components));
        List<String> available = new ArrayList<>();
        for (int c = 0; c < n && md == null; c++) {
            findMd(components.getAtIndex(ucx_h.C_POINTER, c), available);
        }
        if (md == null) {
            throw SampleException.usage("no UCT transport " + tl + " on device " + dev + " here; available: "
                    + String.join(", ", available) + " (--transport TL --device DEV)");
        }

        MemorySegment tlName = arena.allocateFrom(tl);
        check(ucx_h.uct_md_iface_config_read(md, tlName, MemorySegment.NULL, MemorySegment.NULL, out),
                "uct_md_iface_config_read");
        MemorySegment config = result();
        cleanups.push(() -> ucx_h.uct_config_release(config));
        MemorySegment params = uct_iface_params.allocate(arena);
        // a field the mask does not name is ignored: the struct may be longer in newer releases
        uct_iface_params.field_mask(params, ucx_h.UCT_IFACE_PARAM_FIELD_OPEN_MODE()
                | ucx_h.UCT_IFACE_PARAM_FIELD_DEVICE() | ucx_h.UCT_IFACE_PARAM_FIELD_RX_HEADROOM()
                | ucx_h.UCT_IFACE_PARAM_FIELD_FEATURES());
        uct_iface_params.open_mode(params, ucx_h.UCT_IFACE_OPEN_MODE_DEVICE());
        MemorySegment device = uct_iface_params.mode.device(uct_iface_params.mode(params));
        uct_iface_params.mode.device.tl_name(device, tlName);
        uct_iface_params.mode.device.dev_name(device, arena.allocateFrom(dev));
        uct_iface_params.rx_headroom(params, 0);
        uct_iface_params.features(params, ucx_h.UCT_IFACE_FEATURE_AM());
        check(ucx_h.uct_iface_open(md, worker, params, config, out), "uct_iface_open");
        MemorySegment i = result();
        iface = i;
        cleanups.push(() -> ucx_h.uct_iface_close(i));
        // room to spare: UCX fills the whole struct of its own release
        attr = arena.allocate(Math.max(1024, uct_iface_attr.sizeof()), 8);
        check(ucx_h.uct_iface_query(iface, attr), "uct_iface_query");
        capFlags = uct_iface_attr.cap.flags(uct_iface_attr.cap(attr));
        if ((capFlags & ucx_h.UCT_IFACE_FLAG_AM_SHORT()) == 0) {
            throw SampleException.usage(tl + "/" + dev + " has no short active messages (cma, for one, has no "
                    + "active messages at all)");
        }
        received = arena.allocate(Math.max(Long.BYTES, maxShort()), 8);
        if (!o.server()) {
            useSize(o.size());
        }
        MemorySegment handler = uct_am_callback_t.allocate(this::onMessage, arena);
        check(ucx_h.uct_iface_set_am_handler(iface, AM_ID, handler, MemorySegment.NULL, 0),
                "uct_iface_set_am_handler");
        int progress = ucx_h.UCT_PROGRESS_SEND() | ucx_h.UCT_PROGRESS_RECV();
        UctInline.uct_iface_progress_enable(iface, progress);
        cleanups.push(() -> UctInline.uct_iface_progress_disable(iface, progress));
    }

    private long maxShort() {
        return uct_iface_attr.cap.am.max_short(uct_iface_attr.cap.am(uct_iface_attr.cap(attr)));
    }

    private void useSize(long bytes) {
        if (Long.BYTES + bytes > maxShort()) {
            throw SampleException.usage("--size " + bytes + " is too large for " + tl + "/" + dev + ": a short "
                    + "active message takes " + (maxShort() - Long.BYTES) + " bytes besides its 8-byte header");
        }
        size = bytes;
    }

    private void findMd(MemorySegment component, List<String> available) {
        MemorySegment cattr = uct_component_attr.allocate(arena);
        uct_component_attr.field_mask(cattr, ucx_h.UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT());
        check(ucx_h.uct_component_query(component, cattr), "uct_component_query");
        int mdCount = uct_component_attr.md_resource_count(cattr);
        if (mdCount == 0) {
            return;
        }
        MemorySegment mds = uct_md_resource_desc.allocateArray(mdCount, arena);
        uct_component_attr.md_resources(cattr, mds);
        uct_component_attr.field_mask(cattr, ucx_h.UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES());
        check(ucx_h.uct_component_query(component, cattr), "uct_component_query");
        MemorySegment count = arena.allocate(JAVA_INT);
        for (int m = 0; m < mdCount && md == null; m++) {
            MemorySegment mdName = uct_md_resource_desc.md_name(uct_md_resource_desc.asSlice(mds, m));
            if (ucx_h.uct_md_config_read(component, MemorySegment.NULL, MemorySegment.NULL, out) != OK) {
                continue;
            }
            MemorySegment mdConfig = result();
            byte opened = ucx_h.uct_md_open(component, mdName, mdConfig, out);
            ucx_h.uct_config_release(mdConfig);
            if (opened != OK) {
                continue;
            }
            MemorySegment candidate = result();
            boolean found = false;
            if (ucx_h.uct_md_query_tl_resources(candidate, out, count) == OK) {
                int n = count.get(JAVA_INT, 0);
                MemorySegment list = result();
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
                cleanups.push(() -> ucx_h.uct_md_close(candidate));
            } else {
                ucx_h.uct_md_close(candidate);
            }
        }
    }

    /**
     * Sends this side's addresses over the socket, reads the peer's and connects the endpoint: to the peer's
     * endpoint for transports that connect endpoint to endpoint (tcp, for one), else to its interface.
     */
    private void connect(DataInputStream in, DataOutputStream os) throws IOException {
        boolean toEp = (capFlags & ucx_h.UCT_IFACE_FLAG_CONNECT_TO_EP()) != 0;
        MemorySegment devAddr = arena.allocate(Math.max(1, uct_iface_attr.device_addr_len(attr)));
        MemorySegment ifaceAddr = arena.allocate(Math.max(1, uct_iface_attr.iface_addr_len(attr)));
        MemorySegment epAddr = arena.allocate(Math.max(1, uct_iface_attr.ep_addr_len(attr)));
        check(ucx_h.uct_iface_get_device_address(iface, devAddr), "uct_iface_get_device_address");
        check(ucx_h.uct_iface_get_address(iface, ifaceAddr), "uct_iface_get_address");
        MemorySegment epParams = uct_ep_params.allocate(arena);
        uct_ep_params.field_mask(epParams, ucx_h.UCT_EP_PARAM_FIELD_IFACE());
        uct_ep_params.iface(epParams, iface);
        if (toEp) {
            check(ucx_h.uct_ep_create(epParams, out), "uct_ep_create");
            setEp(result());
            check(ucx_h.uct_ep_get_address(ep, epAddr), "uct_ep_get_address");
        }
        write(os, devAddr, uct_iface_attr.device_addr_len(attr));
        write(os, ifaceAddr, uct_iface_attr.iface_addr_len(attr));
        write(os, epAddr, toEp ? uct_iface_attr.ep_addr_len(attr) : 0);
        os.flush();
        MemorySegment peerDev = read(in);
        MemorySegment peerIface = read(in);
        MemorySegment peerEp = read(in);
        if (ucx_h.uct_iface_is_reachable(iface, peerDev, peerIface.byteSize() == 0 ? MemorySegment.NULL
                : peerIface) == 0) {
            throw SampleException.failed("the peer's " + tl + "/" + dev + " cannot be reached from here");
        }
        if (toEp) {
            check(ucx_h.uct_ep_connect_to_ep(ep, peerDev, peerEp), "uct_ep_connect_to_ep");
        } else {
            uct_ep_params.field_mask(epParams, ucx_h.UCT_EP_PARAM_FIELD_IFACE() | ucx_h.UCT_EP_PARAM_FIELD_DEV_ADDR()
                    | ucx_h.UCT_EP_PARAM_FIELD_IFACE_ADDR());
            uct_ep_params.dev_addr(epParams, peerDev);
            uct_ep_params.iface_addr(epParams, peerIface);
            check(ucx_h.uct_ep_create(epParams, out), "uct_ep_create");
            setEp(result());
        }
    }

    private void setEp(MemorySegment e) {
        ep = e;
        cleanups.push(() -> ucx_h.uct_ep_destroy(e));
    }

    private static void write(DataOutputStream os, MemorySegment s, long length) throws IOException {
        os.writeInt((int) length);
        os.write(s.asSlice(0, length).toArray(JAVA_BYTE));
    }

    private MemorySegment read(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > 4096) {
            throw SampleException.failed("the peer sent an address of " + n + " bytes: it does not speak "
                    + "uct-pingpong");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return n == 0 ? MemorySegment.NULL : arena.allocateFrom(JAVA_BYTE, b);
    }

    // ---- the ping-pong --------------------------------------------------------------------------------------------

    /** The AM handler, called by UCT inside uct_worker_progress: copies the message out (UCT lends it). */
    private byte onMessage(MemorySegment arg, MemorySegment data, long length, int flags) {
        try {
            MemorySegment message = data.reinterpret(length);
            long n = Math.min(length, received.byteSize());
            MemorySegment.copy(message, 0, received, 0, n);
            receivedLength = length;
            receivedRound = message.get(JAVA_LONG_UNALIGNED, 0);
            handled++;
        } catch (Throwable t) {
            handlerFailure = t; // an exception escaping an upcall would end the JVM
        }
        return OK;
    }

    /** Progresses until the handler has seen {@code round}, within the step timeout. */
    private void await(long round, String what) {
        long deadline = System.nanoTime() + SampleConfig.STEP_TIMEOUT_MILLIS * 1_000_000L;
        int spins = 0;
        while (receivedRound < round) {
            UctInline.uct_worker_progress(worker);
            if (++spins == 1024) {
                spins = 0;
                if (System.nanoTime() - deadline > 0) {
                    throw SampleException.failed("no " + what + " " + round + " within "
                            + SampleConfig.STEP_TIMEOUT_MILLIS / 1000 + " s: is the peer gone?");
                }
            }
        }
        if (handlerFailure != null) {
            throw SampleException.failed("the AM handler failed: " + handlerFailure);
        }
    }

    /** Sends one short active message, progressing while the transport has no room for it. */
    private void send(long round, MemorySegment payload) {
        while (true) {
            byte status = UctInline.uct_ep_am_short(ep, AM_ID, round, payload, (int) size);
            if (status == OK) {
                return;
            }
            if (status != NO_RESOURCE) {
                throw SampleException.failed("uct_ep_am_short failed: " + ucx_h.ucs_status_string(status)
                        .getString(0));
            }
            UctInline.uct_worker_progress(worker);
        }
    }

    private static void fill(MemorySegment payload, long round) {
        for (int i = 0; i < payload.byteSize(); i++) {
            payload.set(JAVA_BYTE, i, (byte) (i + round));
        }
    }

    /** Whether the message the handler copied has {@code round}'s length and payload. */
    private boolean payloadOk(long round) {
        if (receivedLength != Long.BYTES + size) {
            return false;
        }
        for (int i = 0; i < size; i++) {
            if (received.get(JAVA_BYTE, Long.BYTES + i) != (byte) (i + round)) {
                return false;
            }
        }
        return true;
    }

    private void ping() throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(o.serverAddress(), (int) SampleConfig.STEP_TIMEOUT_MILLIS);
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            DataOutputStream os = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
            os.writeLong(size);
            connect(in, os);
            MemorySegment payload = arena.allocate(Math.max(1, size));
            LatencyReport report = new LatencyReport();
            long round = 0;
            for (long i = 0; i < o.warmup(); i++, round++) {
                roundTrip(round, payload);
            }
            report.start();
            for (long i = 0; i < o.iterations(); i++, round++) {
                long t0 = System.nanoTime();
                roundTrip(round, payload);
                report.record(System.nanoTime() - t0);
            }
            report.stop();
            os.writeLong(round);
            os.flush();
            in.readLong(); // the server's count: it has checked and is done with the endpoint
            report.print("uct-pingpong", size, tl + "/" + dev);
            System.out.println("uct-pingpong: " + round + " pongs, payload verified");
        }
    }

    private void roundTrip(long round, MemorySegment payload) {
        fill(payload, round); // outside the timing would be fairer; it is a few bytes
        send(round, payload);
        await(round, "pong");
        if (!payloadOk(round)) {
            throw SampleException.failed("pong " + round + " came back with other bytes than its ping");
        }
    }

    private void serve() throws IOException {
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(o.host(), o.port()));
            System.out.println("uct-pingpong: " + tl + "/" + dev + " listening on " + o.host() + ":"
                    + listener.getLocalPort());
            System.out.flush();
            listener.setSoTimeout((int) SampleConfig.ACCEPT_TIMEOUT_MILLIS);
            Socket socket;
            try {
                socket = listener.accept();
            } catch (SocketTimeoutException e) {
                throw SampleException.failed("no client connected within "
                        + SampleConfig.ACCEPT_TIMEOUT_MILLIS / 1000 + " s");
            }
            try (Socket s = socket) {
                DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
                DataOutputStream os = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
                useSize(in.readLong()); // the server echoes what the client sends
                connect(in, os);
                System.out.println("uct-pingpong: client " + s.getRemoteSocketAddress() + " connected");
                long served = 0;
                long bad = 0;
                int idle = 0;
                // the client's count arrives on the socket once it is done; pings until then
                while (true) {
                    if (receivedRound >= served) {
                        if (!payloadOk(served)) {
                            bad++;
                        }
                        send(served, received.asSlice(Long.BYTES, Math.max(1, size)));
                        served++;
                        continue;
                    }
                    UctInline.uct_worker_progress(worker);
                    // a look at the socket (a system call) only now and then, not between a ping and its pong
                    if (++idle == 4096) {
                        idle = 0;
                        if (handled == served && in.available() >= Long.BYTES) {
                            break;
                        }
                    }
                }
                long count = in.readLong();
                os.writeLong(served);
                os.flush();
                if (count != served || bad > 0) {
                    throw SampleException.failed("the client counted " + count + " round trips; the server answered "
                            + served + ", " + bad + " with a wrong payload");
                }
                System.out.println("uct-pingpong: served " + served + " round trips, payload verified");
            }
        }
    }

    private void close() {
        while (!cleanups.isEmpty()) {
            try {
                cleanups.pop().run();
            } catch (RuntimeException e) {
                System.err.println("uct-pingpong: closing: " + e);
            }
        }
    }
}
