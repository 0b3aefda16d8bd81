package io.github.ucxffm.peer;

import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpListener;
import io.github.ucxffm.UcpWorker;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.HexFormat;

/**
 * The other process of the cross-process tests. Roles:
 * <ul>
 *   <li>{@code tag-echo TLS}: listens on 127.0.0.1 (port printed as {@code LISTENING port}), accepts one client,
 *   and answers each tag message of tag {@code t} with the same bytes under tag {@code t | 1<<62}; a message with
 *   tag {@link #BYE} ends it.</li>
 *   <li>{@code stream-echo TLS}: as above, echoing stream bytes until the client closes.</li>
 * </ul>
 * {@code TLS} is passed to UCX as {@code UCX_TLS} (e.g. {@code tcp}, {@code posix,sysv,cma,self}). Every role stops
 * by itself after 60 s.
 */
public final class PeerMain {

    /** Tag that ends an echo role. */
    public static final long BYE = 0x0FFF_FFFF_FFFF_FFFFL;
    /** Bit set on echoed tags. */
    public static final long REPLY = 1L << 62;

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
            UcpListener listener = worker.listen(new InetSocketAddress("127.0.0.1", 0));
            System.out.println("LISTENING " + listener.address().getPort());
            UcpConnectionRequest request;
            while ((request = listener.poll()) == null) {
                worker.progress();
                checkDeadline(deadline);
            }
            // Shared memory needs UCP_ERR_HANDLING_MODE_NONE on UCX 1.13 (peer error handling excludes it).
            boolean shm = !tls.equals("tcp");
            UcpEndpoint ep = request.accept(null, !shm);
            System.out.println("ACCEPTED " + request.clientAddress());
            switch (role) {
                case "tag-echo" -> tagEcho(worker, ep, arena, deadline);
                case "stream-echo" -> streamEcho(worker, ep, arena, deadline);
                default -> throw new IllegalArgumentException("unknown role " + role);
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

    static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
