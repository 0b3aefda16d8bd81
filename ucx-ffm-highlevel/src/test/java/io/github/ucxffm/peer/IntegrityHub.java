package io.github.ucxffm.peer;

import io.github.ucxffm.UcpAmHandler;
import io.github.ucxffm.UcpAmMessage;
import io.github.ucxffm.UcpConnectionRequest;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpListener;
import io.github.ucxffm.UcpWorker;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.github.ucxffm.peer.Integrity.INT;

/**
 * The listening side of the integrity harness, on one worker: accepts the {@link IntegrityPeer}s' endpoints, reads
 * each one's hello (channel and direction) and runs the other end of the channel, a receiver where the peer sends and
 * a sender where it receives. Everything runs on the worker's thread, in {@link #step()}.
 * <p>
 * A peer's worker carries its client id: bit 0 says whether it uses peer error handling (tcp) or not (shared memory,
 * which UCX 1.13 offers only to endpoints without it), and the hub accepts with the same mode.
 */
public final class IntegrityHub implements AutoCloseable {

    /** Sends each active message to the receiver of the channel its header names. */
    public static final class AmRouter implements UcpAmHandler {
        private final Map<Integer, IntegrityReceiver> receivers = new HashMap<>();
        /** Messages for no known channel (a channel already given up), dropped. */
        public long orphans;

        /** Routes the channel's messages to {@code r}. */
        public void add(IntegrityReceiver r) {
            receivers.put(r.channel(), r);
        }

        /** Stops routing to channel {@code channel}. */
        public void remove(int channel) {
            receivers.remove(channel);
        }

        @Override
        public void onMessage(UcpAmMessage m) {
            if (m.headerLength() < 8) {
                orphans++;
                return;
            }
            IntegrityReceiver r = receivers.get(m.header().get(INT, 4));
            if (r == null) {
                orphans++;
                return;
            }
            r.onActiveMessage(m);
        }
    }

    /**
     * Sends the hello that opens an endpoint's stream.
     *
     * @param ep        the new endpoint
     * @param buffer    16 bytes that stay untouched until the returned token completes
     * @param channel   the channel number
     * @param peerSends whether the side that connected sends on this channel
     * @return the stream send's token
     */
    public static long sendHello(UcpEndpoint ep, MemorySegment buffer, int channel, boolean peerSends) {
        buffer.set(INT, 0, Integrity.HELLO_MAGIC);
        buffer.set(INT, 4, peerSends ? 'S' : 'R');
        buffer.set(INT, 8, channel);
        buffer.set(INT, 12, 0);
        return ep.sendStream(buffer, 0, Integrity.HELLO_BYTES);
    }

    /** One accepted endpoint and the channel it carries, once its hello arrived. */
    public final class Connection {
        /** The peer worker's client id. */
        public final long clientId;
        /** The accepted endpoint. */
        public final UcpEndpoint ep;
        private final Arena arena = Arena.ofConfined();
        private final MemorySegment hello = arena.allocate(Integrity.HELLO_BYTES, 8);
        private long helloToken;
        private IntegrityChannel engine;
        private int channel = -1;
        private boolean peerSends;
        private boolean ended;

        Connection(long clientId, UcpEndpoint ep) {
            this.clientId = clientId;
            this.ep = ep;
            this.helloToken = ep.receiveStream(hello, 0, Integrity.HELLO_BYTES, true);
        }

        /** The channel number, {@code -1} before the hello. */
        public int channel() {
            return channel;
        }

        /** Whether the peer sends on this channel (the hub receives). */
        public boolean peerSends() {
            return peerSends;
        }

        /** The hub's side of the channel; {@code null} before the hello. */
        public IntegrityChannel engine() {
            return engine;
        }

        /** The hub's receiver, when the peer sends. */
        public IntegrityReceiver receiver() {
            return engine instanceof IntegrityReceiver r ? r : null;
        }

        /** The hub's sender, when the peer receives. */
        public IntegritySender sender() {
            return engine instanceof IntegritySender s ? s : null;
        }

        boolean step() {
            if (ended) {
                return false;
            }
            if (engine != null) {
                return engine.step();
            }
            if (helloToken == IntegrityChannel.NONE) {
                return false;
            }
            boolean done;
            try {
                done = worker.poll(helloToken);
            } catch (RuntimeException e) {
                helloToken = IntegrityChannel.NONE; // the peer died before its hello: nothing to run
                return true;
            }
            if (!done) {
                return false;
            }
            helloToken = IntegrityChannel.NONE;
            if (hello.get(INT, 0) != Integrity.HELLO_MAGIC) {
                throw new IllegalStateException("bad hello from client " + Long.toHexString(clientId));
            }
            peerSends = hello.get(INT, 4) == 'S';
            channel = hello.get(INT, 8);
            if (peerSends) {
                IntegrityReceiver r = new IntegrityReceiver(worker, ep, channel, cfg, Integrity.QUIET, null);
                router.add(r);
                engine = r;
            } else {
                engine = new IntegritySender(worker, ep, channel, senderConfig.apply(clientId), Integrity.QUIET);
            }
            return true;
        }

        /**
         * Ends the connection: a {@link IntegrityChannel.State#DONE} channel is finished (endpoint flushed and
         * closed), any other is abandoned (receives canceled, endpoint force-closed, tokens resolved by the deadline).
         * The memory stays until {@link #free}: a receiver's region can still be read.
         *
         * @param deadlineNanos bound for resolving the tokens
         * @return tokens left unresolved
         */
        public int end(long deadlineNanos) {
            if (ended) {
                return engine == null ? 0 : engine.unresolved();
            }
            ended = true;
            connections.remove(this);
            if (engine instanceof IntegrityReceiver r) {
                router.remove(r.channel());
            }
            if (engine == null) {
                ep.closeForce();
                while (helloToken != IntegrityChannel.NONE && System.nanoTime() - deadlineNanos < 0) {
                    worker.progress();
                    try {
                        if (worker.poll(helloToken)) {
                            helloToken = IntegrityChannel.NONE;
                        }
                    } catch (RuntimeException e) {
                        helloToken = IntegrityChannel.NONE;
                    }
                }
                return helloToken == IntegrityChannel.NONE ? 0 : 1;
            }
            if (engine.state() == IntegrityChannel.State.DONE) {
                return engine.finish(deadlineNanos);
            }
            int left = engine.abandon(deadlineNanos);
            given.add(channel);
            swept += sweep(channel, deadlineNanos);
            return left;
        }

        /**
         * Frees the connection's memory; if operations are still in flight, only once the worker closed
         * ({@link IntegrityHub#freeDeferred()}).
         */
        public void free() {
            int left = (engine == null ? 0 : engine.unresolved()) + (helloToken == IntegrityChannel.NONE ? 0 : 1);
            if (left > 0) {
                deferred.add(this);
                return;
            }
            release(false);
        }

        void release(boolean workerClosed) {
            if (engine != null) {
                engine.freeMemory(workerClosed);
            }
            arena.close();
        }

        @Override
        public String toString() {
            return "Connection[client " + Long.toHexString(clientId) + ", " + (engine == null ? "no hello" : engine)
                    + "]";
        }
    }

    private final UcpWorker worker;
    private final UcpListener listener;
    private final Integrity.Config cfg;
    /** The worker's active-message handler for {@link Integrity#AM_ID}. */
    public final AmRouter router = new AmRouter();
    private final List<Connection> connections = new ArrayList<>();
    private final List<Connection> deferred = new ArrayList<>();
    /** Connections accepted so far. */
    public int accepted;
    private java.util.function.LongFunction<Integrity.Config> senderConfig;
    /** Messages of given-up channels taken out of the worker's unexpected queue. */
    public int swept;
    private final java.util.Set<Integer> given = new java.util.TreeSet<>();
    private final Arena scratchArena = Arena.ofConfined();
    private MemorySegment scratch = scratchArena.allocate(64 * 1024, 64);
    private static final int[] TYPES = {Integrity.T_DATA, Integrity.T_NOTIFY, Integrity.T_ACK, Integrity.T_KEY,
        Integrity.T_END, Integrity.T_FIN};

    /**
     * Listens on 127.0.0.1 and registers the active-message router.
     *
     * @param worker the worker, used on its thread only
     * @param cfg    the configuration of every channel
     */
    public IntegrityHub(UcpWorker worker, Integrity.Config cfg) {
        this.worker = worker;
        this.cfg = cfg;
        this.listener = worker.listen(new InetSocketAddress("127.0.0.1", 0));
        this.senderConfig = id -> cfg;
        worker.setAmHandler(Integrity.AM_ID, router);
    }

    /**
     * Chooses the configuration of the hub's senders by the peer's client id (the same slots and sizes as the hub's,
     * other kinds of operations, say).
     *
     * @param byClient the configuration for a client id
     */
    public void senderConfig(java.util.function.LongFunction<Integrity.Config> byClient) {
        this.senderConfig = java.util.Objects.requireNonNull(byClient);
    }

    /** The listener's port. */
    public int port() {
        return listener.address().getPort();
    }

    /** The worker. */
    public UcpWorker worker() {
        return worker;
    }

    /** Progresses the worker once, accepts new endpoints and steps every channel; {@code true} if anything happened. */
    public boolean step() {
        boolean work = worker.progress() != 0;
        UcpConnectionRequest r;
        while ((r = listener.poll()) != null) {
            long id = r.clientId();
            UcpEndpoint ep = r.accept(null, (id & 1) != 0);
            ep.closeTimeout(Duration.ofSeconds(2));
            connections.add(new Connection(id, ep));
            accepted++;
            work = true;
        }
        for (Connection c : List.copyOf(connections)) {
            work |= c.step();
        }
        return work;
    }

    /** The connections not yet ended. */
    public List<Connection> connections() {
        return List.copyOf(connections);
    }

    /** The connections of one peer worker. */
    public List<Connection> of(long clientId) {
        return connections.stream().filter(c -> c.clientId == clientId).toList();
    }

    /** Connections whose memory waits for the worker to close. */
    public int deferredCount() {
        return deferred.size();
    }

    /** Frees the memory of connections that had operations in flight; call after the worker closed. */
    public void freeDeferred() {
        for (Connection c : deferred) {
            c.release(true);
        }
        deferred.clear();
        if (scratchArena.scope().isAlive()) {
            scratchArena.close();
        }
    }

    /**
     * Takes the messages of a given-up channel out of the worker's unexpected queue: those that arrived after its
     * receives were canceled (a dead peer's last sends) would otherwise sit there until the worker is destroyed, and
     * UCX would warn about each ("unexpected tag-receive descriptor ... was not matched").
     *
     * @param channel       the channel given up
     * @param deadlineNanos bound for each message's receive
     * @return how many were taken
     */
    public int sweep(int channel, long deadlineNanos) {
        int n = 0;
        for (int type : TYPES) {
            long message;
            while ((message = worker.probeTag(Integrity.tag(type, channel), -1L, true)) != 0) {
                long length = worker.receivedLength();
                if (scratch.byteSize() < length) {
                    scratch = scratchArena.allocate(length, 64);
                }
                long token = worker.receiveMessage(message, scratch, 0, length);
                n++;
                while (true) {
                    try {
                        if (worker.poll(token)) {
                            break;
                        }
                    } catch (RuntimeException e) {
                        break; // a rendezvous message of a dead sender: it fails, and is gone all the same
                    }
                    if (System.nanoTime() - deadlineNanos > 0) {
                        break; // left in flight; the scratch memory stays until the worker closed
                    }
                    worker.progress();
                }
            }
        }
        return n;
    }

    /**
     * Ends every connection (abandoning what is not done), sweeps the given-up channels once more, closes the listener
     * and unregisters the router.
     */
    @Override
    public void close() {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        for (Connection c : List.copyOf(connections)) {
            c.end(deadline);
            c.free();
        }
        for (int channel : given) {
            swept += sweep(channel, deadline);
        }
        listener.close();
        worker.setAmHandler(Integrity.AM_ID, null);
    }
}
