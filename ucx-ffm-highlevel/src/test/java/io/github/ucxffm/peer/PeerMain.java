package io.github.ucxffm.peer;

import io.github.ucxffm.UcpAmData;
import io.github.ucxffm.UcpAmSendFlags;
import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpListener;
import io.github.ucxffm.UcpMemory;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;

import io.github.ucxffm.testsupport.BytePattern;
import io.github.ucxffm.testsupport.ChildProcess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The other process of the cross-process tests. Roles:
 * <ul>
 *   <li>{@code tag-echo TLS}: listens on 127.0.0.1 (port printed as {@code LISTENING port}), accepts one client,
 *   and answers each tag message of tag {@code t} with the same bytes under tag {@code t | 1<<62}; a message with
 *   tag {@link #BYE} ends it.</li>
 *   <li>{@code stream-echo TLS}: as above, echoing stream bytes until the client closes.</li>
 *   <li>{@code am-echo TLS}: answers each active message of id {@link #AM_REQUEST} (sent with
 *   {@code UcpAmSendFlags.REPLY}) on its {@code replyEndpoint()} with the same header and data under id
 *   {@link #AM_REPLY}; rendezvous data is kept and received into a buffer first. Prints {@code AM length rndv|eager}
 *   per message. Ends on a tag message {@link #BYE}, or when the client's endpoint fails (tcp).</li>
 *   <li>{@code rma TLS MODE}: a region filled with the {@link BytePattern} of {@link #SEED}, of
 *   {@link #RMA_REGION} bytes registered from the JVM's native memory ({@code MODE register}) or allocated by UCX
 *   ({@code MODE allocate}); or of {@link #ATOMIC_REGION} bytes allocated by UCX ({@code MODE atomics}) or
 *   registered ({@code MODE atomics-register}), with a 64-bit counter {@link #INIT64} at {@link #COUNTER64} and a
 *   32-bit counter {@link #INIT32} at {@link #COUNTER32}. Sends the packed remote key (it carries address and
 *   length) as a tag message {@link #KEY}, then serves, progressing, the tag requests {@link #CRC} (answer: CRC-32
 *   of the whole region as 8 bytes, tag {@code CRC | REPLY}), {@link #FILL} (payload offset, length, seed as 3
 *   longs: fills that range with the pattern of that seed, answers 8 zero bytes, tag {@code FILL | REPLY}) and
 *   {@link #BYE}. Ends on BYE or when the client's endpoint fails (tcp).</li>
 *   <li>{@code address-echo TLS DRIVER}: no listener; connects to the worker address {@code DRIVER} (hex of the
 *   test's {@code UcpWorker.address()}, checked format; peer error handling on tcp only), sends its own
 *   {@code address()} as a tag message {@link #HELLO}, then echoes tag messages as {@code tag-echo} does.</li>
 *   <li>{@code stall TLS}: registers {@link #STALL_REGION} bytes, sends their packed key as tag {@link #KEY},
 *   answers one tag message {@link #GO} with tag {@code GO | REPLY}, prints {@code STALLED} and then sleeps without
 *   ever progressing again: the client's operations stay pending until it kills this process.</li>
 *   <li>{@code rndv-send TLS SIZE}: on a tag message {@link #GO}, prints {@code SENDING} and sends {@code SIZE} bytes
 *   of the {@link BytePattern} of {@link #SEED} as tag {@link #DATA}.</li>
 *   <li>{@code rndv-recv TLS SIZE}: posts a receive of {@code SIZE} bytes for tag {@link #DATA}, answers a tag
 *   message {@link #GO} with {@code GO | REPLY}, and SIGKILLs itself as soon as the byte at {@code SIZE / 8} has
 *   arrived: it dies in the middle of the transfer, at a precise point.</li>
 * </ul>
 * {@code TLS} is passed to UCX as {@code UCX_TLS} (e.g. {@code tcp}, {@code posix,sysv,cma,self}). Every role stops
 * by itself after 60 s.
 */
public final class PeerMain {

    /** Tag that ends an echo role. */
    public static final long BYE = 0x0FFF_FFFF_FFFF_FFFFL;
    /** Bit set on echoed tags. */
    public static final long REPLY = 1L << 62;

    /** Active-message id the {@code am-echo} role serves. */
    public static final int AM_REQUEST = 7;
    /** Active-message id of its replies. */
    public static final int AM_REPLY = 8;
    /** Tag of the packed remote key sent by the {@code rma} role. */
    public static final long KEY = 0x4B45_5900L;
    /** Tag of a request for the CRC-32 of the {@code rma} region. */
    public static final long CRC = 0x4352_4300L;
    /** Tag of a request to fill a range of the {@code rma} region with a pattern. */
    public static final long FILL = 0x4649_4C00L;
    /** Tag of the {@code address-echo} role's first message: its own worker address. */
    public static final long HELLO = 0x4845_4C00L;
    /** Tag of the message that starts the {@code stall}, {@code rndv-send} and {@code rndv-recv} roles. */
    public static final long GO = 0x474F_0000L;
    /** Tag of the large message of the {@code rndv-send} and {@code rndv-recv} roles. */
    public static final long DATA = 0x4441_5400L;
    /** Size of the {@code stall} role's region. */
    public static final long STALL_REGION = 1L << 20;
    /** Seed of the pattern the {@code rma} region starts with. */
    public static final int SEED = 0x5A;
    /** Size of the {@code rma} region in modes {@code register} and {@code allocate}. */
    public static final long RMA_REGION = 8L << 20;
    /** Size of the {@code rma} region in mode {@code atomics}. */
    public static final long ATOMIC_REGION = 4096;
    /** Offset of the 64-bit counter in mode {@code atomics}. */
    public static final long COUNTER64 = 64;
    /** Offset of the 32-bit counter in mode {@code atomics} (4- but not 8-aligned). */
    public static final long COUNTER32 = 76;
    /** Initial value of the 64-bit counter. */
    public static final long INIT64 = 0x0123_4567_89AB_CDEFL;
    /** Initial value of the 32-bit counter. */
    public static final int INIT32 = 0x89AB_CDEF;

    private static final long LIFETIME_NANOS = 60_000_000_000L;

    private PeerMain() {
    }

    public static void main(String[] args) throws Exception {
        String role = args[0];
        String tls = args.length > 1 ? args[1] : "tcp";
        long deadline = System.nanoTime() + LIFETIME_NANOS;
        try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG, UcpContext.Feature.STREAM,
                UcpContext.Feature.AM, UcpContext.Feature.RMA, UcpContext.Feature.AMO32, UcpContext.Feature.AMO64)
                .config("TLS", tls.contains("tcp") ? tls : tls + ",tcp").build();
             UcpWorker worker = context.newWorker();
             Arena arena = Arena.ofConfined()) {
            if (role.equals("address-echo")) {
                addressEcho(worker, arena, HexFormat.of().parseHex(args[2]), !tls.equals("tcp"), deadline);
                System.out.println("DONE");
                return;
            }
            UcpListener listener = worker.listen(new InetSocketAddress("127.0.0.1", 0));
            System.out.println("LISTENING " + listener.address().getPort());
            // Shared memory needs UCP_ERR_HANDLING_MODE_NONE on UCX 1.13 (peer error handling excludes it).
            boolean shm = !tls.equals("tcp");
            UcpConnectionRequest request = null;
            UcpEndpoint ep = null;
            while (ep == null) {
                while ((request = listener.poll()) == null) {
                    worker.progress();
                    checkDeadline(deadline);
                }
                try {
                    ep = request.accept(null, !shm);
                } catch (UcxException e) {
                    // UCX 1.14+ hand a connection whose header is not a UCP address to the application, and its
                    // accept fails (UCX rejected it): wait for the next client, as a server should
                    System.out.println("ACCEPT-FAILED " + e.getMessage());
                    continue;
                }
            }
            System.out.println("ACCEPTED " + request.clientAddress());
            try {
                switch (role) {
                    case "tag-echo" -> tagEcho(worker, ep, arena, deadline);
                    case "stream-echo" -> streamEcho(worker, ep, arena, deadline);
                    case "am-echo" -> amEcho(worker, ep, arena, deadline);
                    case "rma" -> rma(context, worker, ep, arena, args.length > 2 ? args[2] : "register", deadline);
                    case "stall" -> stall(context, worker, ep, arena, deadline);
                    case "rndv-send" -> rndvSend(worker, ep, arena, Long.parseLong(args[2]), deadline);
                    case "rndv-recv" -> rndvReceive(worker, ep, arena, Long.parseLong(args[2]), deadline);
                    default -> throw new IllegalArgumentException("unknown role " + role);
                }
            } catch (ClientGone e) {
                System.out.println("CLIENT-GONE " + e.getMessage());
            }
            System.out.println("DONE");
        }
    }

    private static void checkDeadline(long deadline) {
        if (System.nanoTime() - deadline > 0) {
            System.out.println("TIMEOUT");
            System.exit(3);
        }
    }

    private static void tagEcho(UcpWorker worker, UcpEndpoint ep, Arena arena, long deadline) {
        MemorySegment buffer = arena.allocate(8 << 20);
        while (true) {
            long recv = worker.receiveTag(buffer, 0, buffer.byteSize(), 0, 0);
            while (!worker.poll(recv)) {
                worker.progress();
                checkDeadline(deadline);
            }
            long tag = worker.receivedTag();
            long length = worker.receivedLength();
            if (tag == BYE) {
                return;
            }
            long send = ep.sendTag(buffer, 0, length, tag | REPLY);
            while (!worker.poll(send)) {
                worker.progress();
                checkDeadline(deadline);
            }
        }
    }

    private static void streamEcho(UcpWorker worker, UcpEndpoint ep, Arena arena, long deadline) {
        MemorySegment buffer = arena.allocate(1 << 20);
        while (!ep.isFailed()) {
            long recv;
            try {
                recv = ep.receiveStream(buffer, 0, buffer.byteSize(), false);
                while (!worker.poll(recv)) {
                    worker.progress();
                    checkDeadline(deadline);
                }
            } catch (RuntimeException e) {
                System.out.println("STREAM-END " + e.getClass().getSimpleName());
                return;
            }
            long n = worker.receivedLength();
            long send = ep.sendStream(buffer, 0, n);
            while (!worker.poll(send)) {
                worker.progress();
                checkDeadline(deadline);
            }
        }
    }

    private static void await(UcpWorker worker, UcpEndpoint ep, long request, long deadline) {
        while (!worker.poll(request)) {
            worker.progress();
            checkDeadline(deadline);
            if (ep.isFailed()) {
                throw new ClientGone(ep);
            }
        }
    }

    /** The client's endpoint failed (it closed or died): the role ends. */
    private static final class ClientGone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ClientGone(UcpEndpoint ep) {
            super("client endpoint failed: " + ep.failureStatus());
        }
    }

    /** A reply waiting for rendezvous data to arrive, or for its send to complete. */
    private static final class PendingReply {
        final MemorySegment header;
        final MemorySegment data;
        final UcpEndpoint reply;
        long receive;
        long send = -1;

        PendingReply(MemorySegment header, MemorySegment data, UcpEndpoint reply) {
            this.header = header;
            this.data = data;
            this.reply = reply;
        }
    }

    private static void amEcho(UcpWorker worker, UcpEndpoint ep, Arena arena, long deadline) {
        List<PendingReply> pending = new ArrayList<>();
        ArrayDeque<RuntimeException> errors = new ArrayDeque<>();
        worker.setAmHandler(AM_REQUEST, m -> {
            UcpEndpoint reply = m.replyEndpoint();
            if (reply == null) {
                errors.add(new IllegalStateException("an active message without REPLY flag"));
                return;
            }
            MemorySegment header = arena.allocate(Math.max(1, m.headerLength())).asSlice(0, m.headerLength());
            if (m.headerLength() > 0) {
                header.copyFrom(m.header());
            }
            long length = m.dataLength();
            MemorySegment data = arena.allocate(Math.max(1, length)).asSlice(0, length);
            boolean rndv = m.isRendezvous();
            System.out.println("AM " + length + (rndv ? " rndv" : " eager") + (reply == ep ? "" : " borrowed-reply"));
            PendingReply r = new PendingReply(header, data, reply);
            if (rndv) {
                if (reply != ep) {
                    // A borrowed reply endpoint is valid during this call only: the reply must wait for the data.
                    errors.add(new IllegalStateException("rendezvous message with a borrowed reply endpoint"));
                    return;
                }
                UcpAmData kept = m.keep();
                r.receive = kept.receive(data, 0);
            } else {
                if (length > 0) {
                    data.copyFrom(m.data());
                }
                r.receive = UcpWorker.COMPLETED;
                r.send = reply.sendAm(AM_REPLY, header, data, 0, length, UcpAmSendFlags.NONE);
            }
            pending.add(r);
        });
        MemorySegment bye = arena.allocate(8);
        long byeRecv = worker.receiveTag(bye, 0, 8, BYE, -1L);
        while (true) {
            worker.progress();
            checkDeadline(deadline);
            if (!errors.isEmpty()) {
                throw errors.remove();
            }
            for (var it = pending.iterator(); it.hasNext(); ) {
                PendingReply r = it.next();
                if (r.send == -1) {
                    if (worker.poll(r.receive)) {
                        r.send = r.reply.sendAm(AM_REPLY, r.header, r.data, 0, r.data.byteSize(),
                                UcpAmSendFlags.NONE);
                    }
                } else if (worker.poll(r.send)) {
                    it.remove();
                }
            }
            if (pending.isEmpty() && worker.poll(byeRecv)) {
                return;
            }
            if (ep.isFailed()) {
                throw new ClientGone(ep);
            }
        }
    }

    private static void rma(UcpContext context, UcpWorker worker, UcpEndpoint ep, Arena arena, String mode,
                            long deadline) {
        boolean atomics = mode.startsWith("atomics");
        long size = atomics ? ATOMIC_REGION : RMA_REGION;
        UcpMemory memory = switch (mode) {
            case "register", "atomics-register" -> context.register(arena.allocate(size, 4096));
            case "allocate", "atomics" -> context.allocate(size);
            default -> throw new IllegalArgumentException("unknown rma mode " + mode);
        };
        MemorySegment region = memory.segment();
        BytePattern.fill(region.asSlice(0, size), SEED);
        if (atomics) {
            region.set(JAVA_LONG, COUNTER64, INIT64);
            region.set(JAVA_INT, COUNTER32, INIT32);
        }
        byte[] key = memory.packRemoteKey();
        MemorySegment keyBuffer = arena.allocate(key.length);
        keyBuffer.copyFrom(MemorySegment.ofArray(key));
        await(worker, ep, ep.sendTag(keyBuffer, 0, key.length, KEY), deadline);
        System.out.println("KEY " + mode + " " + key.length + " bytes, region 0x" + Long.toHexString(memory.address())
                + " +" + size);
        MemorySegment command = arena.allocate(64, 8);
        MemorySegment answer = arena.allocate(8, 8);
        while (true) {
            await(worker, ep, worker.receiveTag(command, 0, command.byteSize(), 0, 0), deadline);
            long tag = worker.receivedTag();
            if (tag == BYE) {
                return;
            } else if (tag == CRC) {
                CRC32 crc = new CRC32();
                crc.update(region.asByteBuffer());
                answer.set(JAVA_LONG, 0, crc.getValue());
            } else if (tag == FILL) {
                long offset = command.get(JAVA_LONG, 0);
                long length = command.get(JAVA_LONG, 8);
                BytePattern.fill(region.asSlice(offset, length), command.get(JAVA_LONG, 16), offset);
                answer.set(JAVA_LONG, 0, 0);
            } else {
                throw new IllegalStateException("unknown request tag 0x" + Long.toHexString(tag));
            }
            await(worker, ep, ep.sendTag(answer, 0, 8, tag | REPLY), deadline);
        }
    }

    private static void addressEcho(UcpWorker worker, Arena arena, byte[] driver, boolean shm, long deadline) {
        // checked address format; shared memory needs UCP_ERR_HANDLING_MODE_NONE on UCX 1.13
        UcpEndpoint ep = worker.connect(UcpEndpoint.Params.worker(driver).peerErrorHandling(!shm));
        byte[] mine = worker.address();
        MemorySegment hello = arena.allocate(mine.length);
        hello.copyFrom(MemorySegment.ofArray(mine));
        await(worker, ep, ep.sendTag(hello, 0, mine.length, HELLO), deadline);
        System.out.println("HELLO " + mine.length + " bytes");
        tagEcho(worker, ep, arena, deadline);
    }

    /** Receives the tag message {@link #GO} and answers it, so that both directions are wired up. */
    private static void go(UcpWorker worker, UcpEndpoint ep, Arena arena, long deadline) {
        MemorySegment go = arena.allocate(64, 8);
        await(worker, ep, worker.receiveTag(go, 0, go.byteSize(), GO, -1L), deadline);
        await(worker, ep, ep.sendTag(go, 0, 8, GO | REPLY), deadline);
    }

    private static void stall(UcpContext context, UcpWorker worker, UcpEndpoint ep, Arena arena, long deadline)
            throws InterruptedException {
        UcpMemory memory = context.register(arena.allocate(STALL_REGION, 4096));
        BytePattern.fill(memory.segment().asSlice(0, STALL_REGION), SEED);
        byte[] key = memory.packRemoteKey();
        MemorySegment keyBuffer = arena.allocate(key.length);
        keyBuffer.copyFrom(MemorySegment.ofArray(key));
        await(worker, ep, ep.sendTag(keyBuffer, 0, key.length, KEY), deadline);
        go(worker, ep, arena, deadline);
        System.out.println("STALLED");
        while (true) {
            Thread.sleep(20); // never progresses again: what the client started stays pending until it kills us
            checkDeadline(deadline);
        }
    }

    private static void rndvSend(UcpWorker worker, UcpEndpoint ep, Arena arena, long size, long deadline) {
        MemorySegment data = arena.allocate(size, 4096);
        BytePattern.fill(data.asSlice(0, size), SEED);
        MemorySegment go = arena.allocate(64, 8);
        await(worker, ep, worker.receiveTag(go, 0, go.byteSize(), GO, -1L), deadline);
        System.out.println("SENDING " + size);
        await(worker, ep, ep.sendTag(data, 0, size, DATA), deadline);
        System.out.println("SENT");
    }

    private static void rndvReceive(UcpWorker worker, UcpEndpoint ep, Arena arena, long size, long deadline) {
        MemorySegment data = arena.allocate(size, 4096);
        long watch = size / 8;
        byte expected = BytePattern.at(SEED, watch);
        data.set(JAVA_BYTE, watch, (byte) ~expected);
        long receive = worker.receiveTag(data, 0, size, DATA, -1L);
        go(worker, ep, arena, deadline);
        System.out.println("RECEIVING " + size);
        while (true) {
            worker.progress();
            if (data.get(JAVA_BYTE, watch) == expected) {
                // dies here, mid-transfer, as a crash would: no close, no goodbye
                ChildProcess.signal(ProcessHandle.current().pid(), ChildProcess.SIGKILL);
            }
            if (worker.poll(receive)) {
                System.out.println("RECEIVED"); // only if the byte watched never changed: a test failure
                return;
            }
            checkDeadline(deadline);
        }
    }

    static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
