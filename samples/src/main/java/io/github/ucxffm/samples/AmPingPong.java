package io.github.ucxffm.samples;

import io.github.ucxffm.UcpAmData;
import io.github.ucxffm.UcpAmHandler;
import io.github.ucxffm.UcpAmMessage;
import io.github.ucxffm.UcpAmSendFlags;
import io.github.ucxffm.UcpCallback;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcxException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.function.BooleanSupplier;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Ping-pong latency with active messages: the server answers from its handler, as an RPC server would.
 * <p>
 * Wire protocol. Integers are big-endian.
 * <ol>
 * <li>The client sends active messages with id {@value #AM_PING}, flag {@code UCP_AM_SEND_FLAG_REPLY}, a user
 *     header of {@value #HEADER} bytes holding the round number (0, 1, 2, ...: warm-up rounds count too) and
 *     {@code --size} bytes of data, byte {@code i} being {@code (byte) i}. It sends the next ping only when it has
 *     the whole pong of the previous one.</li>
 * <li>For each ping the server sends an active message with id {@value #AM_PONG}, no flag, the ping's header and
 *     the ping's data. It answers eager pings from its handler on the reply endpoint
 *     ({@code UcpAmMessage.replyEndpoint()}), sending straight from the data it kept, with no copy. A large ping
 *     arrives by rendezvous (the size at which UCX switches depends on the transport): the handler keeps it, and
 *     the main loop fetches the data ({@code UcpAmData.receive}) and then answers on the accepted endpoint. The
 *     server needs no {@code --size}; it echoes whatever size comes.</li>
 * <li>The client checks that each pong carries its round number and {@code --size} bytes, and that the last pong's
 *     data equals the ping's. Then it sends an active message with id {@value #AM_BYE}, no header and 8 bytes of
 *     data: the number of round trips. The server checks that it answered that many pings, reports, and both
 *     close.</li>
 * </ol>
 */
public final class AmPingPong {

    /** Client to server: a ping, answered with a pong. */
    public static final int AM_PING = 1;
    /** Server to client: the answer to a ping. */
    public static final int AM_PONG = 2;
    /** Client to server: the end of the run. */
    public static final int AM_BYE = 3;
    /** Length of the user header of a ping and a pong: the round number. */
    public static final int HEADER = 8;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private AmPingPong() {
    }

    static void run(String[] args) {
        SampleOptions o = SampleOptions.parse(args);
        // The arena outlives the session: no operation can still use a buffer when it is freed.
        try (Arena arena = Arena.ofConfined();
             Session s = Session.open("am-pingpong", o, UcpContext.Feature.AM)) {
            if (o.server()) {
                new Server(s, arena).serve();
            } else {
                new Client(s, arena).ping();
            }
        }
    }

    /** What a handler saw that the main loop must report: handlers cannot throw to the application. */
    private static SampleException failure(Session s, String what, RuntimeException e) {
        if (e instanceof UcxException u) {
            return s.lost(what, u);
        }
        return SampleException.failed(what + " failed: " + e.getMessage());
    }

    /**
     * The server. Its handlers and callbacks run inside progress on the main thread, so plain fields are enough.
     */
    private static final class Server {

        private record Large(long round, UcpAmData data) {
        }

        private final Session s;
        private final Arena arena;
        /** Rendezvous pings kept by the handler, answered by the main loop. */
        private final ArrayDeque<Large> large = new ArrayDeque<>();
        /** Reply slots free for reuse: a pong in flight owns its slot (header, and the ping's data) until sent. */
        private final ArrayDeque<Reply> freeReplies = new ArrayDeque<>();
        private final MemorySegment largeHeader;
        /** A ping's header, copied out of UCX's memory in the handler (copyHeader allocates nothing). */
        private final MemorySegment pingHeader;
        private MemorySegment largeBuffer = MemorySegment.NULL;
        private int repliesInFlight;
        private long served;
        private long servedAtLastLook;
        private long byRendezvous;
        private long byeCount = -1;
        private String broken;
        private RuntimeException failure;
        private final BooleanSupplier somethingToDo = () -> served != servedAtLastLook || !large.isEmpty()
                || broken != null || failure != null || byeCount >= 0 && repliesInFlight == 0;

        Server(Session s, Arena arena) {
            this.s = s;
            this.arena = arena;
            this.largeHeader = arena.allocate(HEADER, 8);
            this.pingHeader = arena.allocate(HEADER, 8);
        }

        /** One pong in flight: its header, and the ping's data, which it sends back without a copy. */
        private final class Reply implements UcpCallback {
            final MemorySegment header = arena.allocate(HEADER, 8);
            UcpAmData data;

            @Override
            public void onComplete(int status, long length, long tag) {
                UcpAmData d = data;
                data = null;
                repliesInFlight--;
                freeReplies.push(this);
                RuntimeException f = status < 0 ? UcxException.of("ucp_am_send_nbx (pong)", status) : null;
                try {
                    if (d != null) {
                        d.release();
                    }
                } catch (RuntimeException e) {
                    f = f == null ? e : f;
                }
                if (f != null && failure == null) {
                    failure = f; // a callback must not throw either
                }
            }
        }

        void serve() {
            // Registered before the first progress call: UCX delivers messages only inside progress, so no ping
            // can arrive before its handler. PERSISTENT_DATA lets the handler keep even small pings, and answer
            // from UCX's copy of them.
            s.worker.setAmHandler(AM_PING, this::onPing, UcpAmHandler.WHOLE_MESSAGE | UcpAmHandler.PERSISTENT_DATA);
            s.worker.setAmHandler(AM_BYE, this::onBye);
            String step = "waiting for the first ping";
            try {
                while (true) {
                    servedAtLastLook = served;
                    s.awaitCondition(somethingToDo, step);
                    step = "waiting for a ping";
                    if (broken != null) {
                        throw SampleException.failed(broken);
                    }
                    if (failure != null) {
                        throw failure(s, "answering a ping", failure);
                    }
                    Large l = large.poll();
                    if (l != null) {
                        answer(l);
                    } else if (byeCount >= 0 && repliesInFlight == 0) {
                        break;
                    }
                }
            } catch (UcxException e) {
                throw s.lost(step, e);
            }
            if (byeCount != served) {
                throw SampleException.failed("the client reports " + byeCount + " round trips, the server answered "
                        + served + " pings");
            }
            System.out.println("am-pingpong: served " + served + " round trips (" + byRendezvous
                    + " by rendezvous)");
        }

        /** A handler must not throw (the worker would rethrow from progress): failures go to the main loop. */
        private void onPing(UcpAmMessage m) {
            try {
                ping(m);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                }
            }
        }

        private void ping(UcpAmMessage m) {
            if (m.headerLength() != HEADER) {
                broken = "a ping came with a header of " + m.headerLength() + " bytes instead of " + HEADER
                        + ": the client does not speak am-pingpong";
                return;
            }
            m.copyHeader(0, pingHeader, 0, HEADER);
            long round = pingHeader.get(LONG, 0);
            if (m.isRendezvous()) {
                // The data is still at the client; fetching it takes progress, which a handler must not call.
                large.add(new Large(round, m.keep()));
                return;
            }
            Reply r = freeReplies.isEmpty() ? new Reply() : freeReplies.pop();
            r.header.set(LONG, 0, round);
            long length = m.dataLength();
            r.data = length == 0 ? null : m.keep();
            UcpEndpoint ep = m.replyEndpoint() != null ? m.replyEndpoint() : s.endpoint;
            repliesInFlight++;
            try {
                ep.sendAm(AM_PONG, r.header, r.data == null ? MemorySegment.NULL : r.data.data(), 0, length,
                        UcpAmSendFlags.NONE, r);
                served++;
            } catch (RuntimeException e) {
                // The send never started: the callback will not run.
                r.onComplete(0, 0, 0);
                if (failure == null) {
                    failure = e;
                }
            }
        }

        private void onBye(UcpAmMessage m) {
            if (m.isRendezvous() || m.dataLength() != 8) {
                broken = "the goodbye came with " + m.dataLength() + " bytes instead of 8";
            } else {
                byeCount = m.data().get(LONG, 0);
            }
        }

        private void answer(Large l) {
            long length = l.data().length();
            if (largeBuffer.byteSize() < length) {
                largeBuffer = arena.allocate(length, 64);
            }
            s.await(l.data().receive(largeBuffer, 0), "receiving a large ping");
            largeHeader.set(LONG, 0, l.round());
            s.await(s.endpoint.sendAm(AM_PONG, largeHeader, largeBuffer, 0, length, UcpAmSendFlags.NONE),
                    "answering a large ping");
            served++;
            byRendezvous++;
        }
    }

    /** The client: pings, and waits for each pong. */
    private static final class Client {

        private final Session s;
        private final long size;
        private final MemorySegment out;
        private final MemorySegment in;
        private final MemorySegment header;
        /** A pong's header, copied out of UCX's memory in the handler. */
        private final MemorySegment pongHeader;
        private final MemorySegment bye;
        private boolean arrived;
        private long pongRound;
        private UcpAmData largePong;
        private long byRendezvous;
        private String broken;
        private RuntimeException failure;
        private final BooleanSupplier pongArrived = () -> arrived;

        Client(Session s, Arena arena) {
            this.s = s;
            this.size = s.options.size();
            this.out = arena.allocate(Math.max(1, size), 64);
            this.in = arena.allocate(Math.max(1, size), 64);
            this.header = arena.allocate(HEADER, 8);
            this.pongHeader = arena.allocate(HEADER, 8);
            this.bye = arena.allocate(8, 8);
            for (long i = 0; i < size; i++) {
                out.set(JAVA_BYTE, i, (byte) i);
            }
        }

        /** A handler must not throw (the worker would rethrow from progress): failures go to the main loop. */
        private void onPong(UcpAmMessage m) {
            arrived = true;
            try {
                pong(m);
            } catch (RuntimeException e) {
                failure = e;
            }
        }

        private void pong(UcpAmMessage m) {
            if (m.headerLength() != HEADER || m.dataLength() != size) {
                broken = "a pong came with a header of " + m.headerLength() + " bytes and " + m.dataLength()
                        + " bytes of data instead of " + HEADER + " and " + size;
                return;
            }
            m.copyHeader(0, pongHeader, 0, HEADER);
            pongRound = pongHeader.get(LONG, 0);
            if (m.isRendezvous()) {
                largePong = m.keep();
            } else if (size > 0) {
                m.copyData(0, in, 0, size);
            }
        }

        void ping() {
            s.worker.setAmHandler(AM_PONG, this::onPong);
            UcpEndpoint ep = s.endpoint;
            LatencyReport report = new LatencyReport();
            long warmup = s.options.warmup();
            long total = warmup + s.options.iterations();
            String step = "sending a ping";
            try {
                for (long i = 0; i < total; i++) {
                    if (i == warmup) {
                        report.start();
                    }
                    long t0 = System.nanoTime();
                    header.set(LONG, 0, i);
                    arrived = false;
                    step = "sending a ping";
                    s.await(ep.sendAm(AM_PING, header, out, 0, size, UcpAmSendFlags.REPLY), step);
                    step = "waiting for a pong";
                    s.awaitCondition(pongArrived, step);
                    if (broken != null) {
                        throw SampleException.failed(broken);
                    }
                    if (failure != null) {
                        throw failure(s, "taking a pong", failure);
                    }
                    if (largePong != null) {
                        UcpAmData d = largePong;
                        largePong = null;
                        step = "receiving a large pong";
                        s.await(d.receive(in, 0), step);
                        byRendezvous++;
                    }
                    if (pongRound != i) {
                        throw SampleException.failed("the pong of round " + i + " carries round " + pongRound);
                    }
                    if (i >= warmup) {
                        report.record(System.nanoTime() - t0);
                    }
                }
                report.stop();
                Session.checkEcho(in, out, size);
                step = "saying goodbye";
                bye.set(LONG, 0, total);
                s.await(ep.sendAm(AM_BYE, null, bye, 0, 8, UcpAmSendFlags.NONE), step);
            } catch (UcxException e) {
                throw s.lost(step, e);
            }
            report.print("am-pingpong", size, s.transports());
            System.out.println("am-pingpong: " + byRendezvous + " of " + total + " pongs came by rendezvous");
        }
    }
}
