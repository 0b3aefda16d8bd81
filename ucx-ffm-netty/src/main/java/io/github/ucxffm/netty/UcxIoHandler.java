package io.github.ucxffm.netty;

import io.github.ucxffm.UcpAmMessage;
import io.github.ucxffm.UcpCallback;
import io.github.ucxffm.UcpContext;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.ThreadAwareExecutor;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A Netty {@link IoHandler} that drives one UCX worker per event loop:
 * {@code new MultiThreadIoEventLoopGroup(n, UcxIoHandler.newFactory())} makes {@code n} event loops for
 * {@link UcxSocketChannel} and {@link UcxServerSocketChannel}.
 * <p>
 * <b>Resources.</b> Each event loop's handler creates its {@code UcpWorker} on the loop's own thread (in
 * {@link #initialize()}, which Netty 4.2 runs there) and closes it in {@link #destroy()}. The handlers of one
 * {@link UcxTransportConfig} (same UCX options and name) share one {@code UcpContext}, counted by reference and
 * closed with the last of them. Shut the event loop groups down ({@code shutdownGracefully()} and wait for
 * termination) before the JVM exits: a loop still inside UCX while the exiting process runs UCX's library
 * destructors (daemon loop threads at {@code System.exit}) can make the JVM abort at exit.
 * <p>
 * <b>Running.</b> {@link #run(IoHandlerContext)} progresses the worker while it has work, completes the operations
 * in flight and lets channels act on what arrived (UCX callbacks only record; pipelines run outside them). When idle
 * and Netty allows blocking, it spins for {@link UcxTransportConfig#spinNanos()}, then arms the worker and sleeps on
 * its event descriptor ({@code UcpWorker.armAndWait}), no longer than the time to the next scheduled task. {@link #wakeup()},
 * from any thread, signals the worker ({@code ucp_worker_signal}) only when the loop sleeps or is about to.
 */
public final class UcxIoHandler implements IoHandler {

    private static final InternalLogger LOG = InternalLoggerFactory.getInstance(UcxIoHandler.class);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final long CLOSE_FLUSH_NANOS = TimeUnit.SECONDS.toNanos(2);

    private static final Map<Object, SharedContext> CONTEXTS = new HashMap<>();

    private static final int AWAKE = 0;
    private static final int SLEEPING = 1;
    private static final int WOKEN = 2;

    private final UcxTransportConfig config;
    private final ThreadAwareExecutor executor;
    private final AtomicInteger state = new AtomicInteger(AWAKE);
    /** Held while signalling the worker and while closing it, so that a signal never meets a destroyed worker. */
    private final Object signalLock = new Object();
    private final IntObjectHashMap<UcxSocketChannel> connections = new IntObjectHashMap<>();
    /** Accepted channels by endpoint until their client's hello names them. */
    private final Map<UcpEndpoint, UcxSocketChannel> accepted = new IdentityHashMap<>();
    private final ArrayDeque<Ready> ready = new ArrayDeque<>();
    /** Operations in flight that are polled after each progress (control messages, endpoint closes). */
    private final ArrayList<Op> ops = new ArrayList<>();
    /** Operations in flight that complete through their callback; each knows its place here. */
    private final ArrayList<Op> awaited = new ArrayList<>();
    /** Operations whose callback came, to be finished after progress, outside UCX's callbacks. */
    private final ArrayDeque<Op> completed = new ArrayDeque<>();
    private final List<Registration> registrations = new ArrayList<>();
    /** The header of the active message being handled, copied out of UCX's memory; used on the loop's thread only. */
    private final MemorySegment header = Arena.ofAuto().allocate(Math.max(Wire.DATA_HEADER, Wire.CONTROL_HEADER), 8);
    private SharedContext shared;
    private volatile UcpWorker worker;
    private boolean destroyed;
    private int lastId;
    /** Times the loop armed the worker and slept: written by the loop only, read by tests. */
    private volatile long sleeps;

    private UcxIoHandler(UcxTransportConfig config, ThreadAwareExecutor executor) {
        this.config = config;
        this.executor = executor;
    }

    /**
     * A factory of handlers with {@link UcxTransportConfig#defaults()}.
     *
     * @return the factory, for {@code MultiThreadIoEventLoopGroup}
     */
    public static IoHandlerFactory newFactory() {
        return newFactory(UcxTransportConfig.defaults());
    }

    /**
     * A factory of handlers with the given settings.
     *
     * @param config the transport settings
     * @return the factory, for {@code MultiThreadIoEventLoopGroup}
     */
    public static IoHandlerFactory newFactory(UcxTransportConfig config) {
        Objects.requireNonNull(config, "config");
        return executor -> new UcxIoHandler(config, executor);
    }

    /**
     * The transport settings of this handler.
     *
     * @return the config
     */
    public UcxTransportConfig config() {
        return config;
    }

    // ---- life cycle ---------------------------------------------------------------------------------------------

    @Override
    public void initialize() {
        worker();
    }

    /** The loop's worker, created on first use on the loop's thread. */
    UcpWorker worker() {
        UcpWorker w = worker;
        if (w == null) {
            if (destroyed) {
                throw new IllegalStateException("the UCX event loop is shut down");
            }
            shared = acquire(config);
            boolean done = false;
            try {
                w = shared.context.newWorker();
                w.setAmHandler(Wire.AM_DATA, this::onData);
                w.setAmHandler(Wire.AM_CONTROL, this::onControl);
                worker = w;
                done = true;
            } finally {
                if (!done) {
                    if (w != null) {
                        w.close();
                    }
                    release(shared);
                    shared = null;
                }
            }
        }
        return w;
    }

    @Override
    public void prepareToDestroy() {
        closeAll();
    }

    private void closeAll() {
        for (Registration r : new ArrayList<>(registrations)) {
            try {
                r.handle.close();
            } catch (Exception e) {
                LOG.warn("closing {} failed", r.handle, e);
            }
        }
    }

    @Override
    public void destroy() {
        destroyed = true;
        UcpWorker w = worker;
        if (w == null) {
            return;
        }
        // Netty's loop may end without prepareToDestroy() (a shutdown that starts just after its check, with no
        // quiet period): close what is still registered, so that channels free what they hold.
        closeAll();
        // Endpoint closes and sends started by the channels' close get a bounded time to finish.
        long deadline = System.nanoTime() + CLOSE_FLUSH_NANOS;
        while (inFlight() && System.nanoTime() - deadline < 0) {
            drive();
        }
        try {
            synchronized (signalLock) {
                worker = null;
                w.close();
            }
        } finally {
            // The worker released their requests (and called back those with a callback, as canceled): what they
            // hold is ours to free.
            for (Op op : ops) {
                op.abandon();
            }
            for (Op op : awaited) {
                op.abandon();
            }
            for (Op op : completed) {
                op.abandon();
            }
            ops.clear();
            awaited.clear();
            completed.clear();
            ready.clear();
            release(shared);
            shared = null;
        }
    }

    static UcpContext newContext(UcxTransportConfig config) {
        UcpContext.Builder b = UcpContext.builder().features(UcpContext.Feature.AM, UcpContext.Feature.WAKEUP);
        config.contextOptions().forEach(b::config);
        if (config.name() != null) {
            b.name(config.name());
        }
        return b.build();
    }

    private static SharedContext acquire(UcxTransportConfig config) {
        synchronized (CONTEXTS) {
            SharedContext s = CONTEXTS.get(config.contextKey());
            if (s == null) {
                s = new SharedContext(config.contextKey(), newContext(config));
                CONTEXTS.put(s.key, s);
            }
            s.users++;
            return s;
        }
    }

    private static void release(SharedContext s) {
        synchronized (CONTEXTS) {
            if (--s.users == 0) {
                CONTEXTS.remove(s.key);
                s.context.close();
            }
        }
    }

    /** How many times this loop has gone to sleep on its worker, for tests. */
    long sleeps() {
        return sleeps;
    }

    /** Contexts in use by event loops, for tests. */
    static int openContexts() {
        synchronized (CONTEXTS) {
            return CONTEXTS.size();
        }
    }

    // ---- running ------------------------------------------------------------------------------------------------

    @Override
    public int run(IoHandlerContext context) {
        worker();
        int work = drive();
        if (work > 0 || !context.canBlock()) {
            return work;
        }
        long spin = config.spinNanos();
        if (spin > 0) {
            long end = System.nanoTime() + spin;
            while (state.get() != WOKEN && System.nanoTime() - end < 0) {
                work = drive();
                if (work > 0) {
                    return work;
                }
                Thread.onSpinWait();
            }
        }
        if (state.compareAndSet(AWAKE, SLEEPING)) {
            try {
                // No sleep past the next scheduled task; none either when arm() finds events, or a signal, that
                // came since the last progress (the next run() progresses them).
                long delay = context.delayNanos(System.nanoTime());
                if (ready.isEmpty() && delay > 0) {
                    sleeps++;
                    worker.armAndWait((int) Math.min(Integer.MAX_VALUE, (delay + 999_999) / 1_000_000));
                }
            } finally {
                state.set(AWAKE);
            }
        } else {
            state.set(AWAKE); // woken since Netty decided it could block
        }
        return drive();
    }

    /**
     * One progress call, completions, then the channels that have something to do; the amount of work done. One
     * call, not a loop until one finds nothing: over UCX's tcp transport every progress call is an
     * {@code epoll_wait}, and a loop that did work is run again at once (Netty calls {@link #run} again).
     */
    private int drive() {
        UcpWorker w = worker;
        int work;
        try {
            work = w.progress();
        } catch (RuntimeException e) {
            LOG.warn("a UCX callback failed", e);
            work = 1;
        }
        if (!completed.isEmpty()) {
            work += finishCompleted();
        }
        if (!ops.isEmpty()) {
            work += pollOps(w);
        }
        int n = ready.size();
        for (int i = 0; i < n; i++) {
            Ready r = ready.poll();
            r.queued(false);
            try {
                r.process();
            } catch (RuntimeException e) {
                LOG.warn("processing {} failed", r, e);
            }
        }
        return work + n;
    }

    private boolean inFlight() {
        return !ops.isEmpty() || !awaited.isEmpty() || !completed.isEmpty();
    }

    /** Finishes the operations whose callback came during progress. */
    private int finishCompleted() {
        int done = 0;
        Op op;
        while ((op = completed.poll()) != null) {
            done++;
            try {
                op.done(op.failure);
            } catch (RuntimeException e) {
                LOG.warn("completing {} failed", op, e);
            }
        }
        return done;
    }

    private int pollOps(UcpWorker w) {
        int done = 0;
        for (int i = 0; i < ops.size(); ) {
            Op op = ops.get(i);
            boolean finished;
            Throwable failure = null;
            try {
                finished = w.poll(op.token);
            } catch (RuntimeException e) {
                finished = true;
                failure = e;
            }
            if (finished) {
                Op last = ops.removeLast();
                if (last != op) {
                    ops.set(i, last);
                }
                done++;
                try {
                    op.done(failure);
                } catch (RuntimeException e) {
                    LOG.warn("completing {} failed", op, e);
                }
            } else {
                op.check();
                i++;
            }
        }
        return done;
    }

    @Override
    public void wakeup() {
        if (!executor.isExecutorThread(Thread.currentThread()) && state.getAndSet(WOKEN) == SLEEPING) {
            synchronized (signalLock) {
                UcpWorker w = worker;
                if (w != null) {
                    w.signal();
                }
            }
        }
    }

    // ---- registration -------------------------------------------------------------------------------------------

    @Override
    public IoRegistration register(IoHandle handle) {
        worker();
        Registration r = new Registration(handle);
        registrations.add(r);
        handle.registered();
        return r;
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return UcxIoHandle.class.isAssignableFrom(handleType);
    }

    /** Whether a channel of this transport can be registered with {@code loop}. */
    static boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop io && io.isCompatible(UcxIoHandle.class);
    }

    /**
     * Registers a channel's handle with its event loop; {@code registered} gets the registration (whose attachment
     * is the loop's handler) on the loop, and the promise fails if it throws.
     */
    static void register(Channel channel, UcxIoHandle handle, ChannelPromise promise,
                         Consumer<IoRegistration> registered) {
        ((IoEventLoop) channel.eventLoop()).register(handle).addListener(f -> {
            if (!f.isSuccess()) {
                promise.setFailure(f.cause());
                return;
            }
            try {
                registered.accept((IoRegistration) f.getNow());
            } catch (Throwable t) {
                promise.setFailure(t);
                return;
            }
            promise.setSuccess();
        });
    }

    /** The handles of UCX channels. */
    interface UcxIoHandle extends IoHandle {
        @Override
        void close(); // closing a channel throws nothing
    }

    /** A channel's registration; its attachment is this handler. */
    private final class Registration implements IoRegistration {
        final IoHandle handle;
        boolean valid = true;

        Registration(IoHandle handle) {
            this.handle = handle;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T attachment() {
            return (T) UcxIoHandler.this;
        }

        @Override
        public long submit(IoOps ops) {
            return 0;
        }

        @Override
        public boolean isValid() {
            return valid;
        }

        @Override
        public boolean cancel() {
            if (!valid) {
                return false;
            }
            valid = false;
            registrations.remove(this);
            handle.unregistered();
            return true;
        }
    }

    // ---- what channels ask of the loop -------------------------------------------------------------------------

    /** Something that acts on the loop after progress: a channel with data, credit, a connection or a failure. */
    interface Ready {
        void process();

        boolean queued();

        void queued(boolean queued);
    }

    void markReady(Ready r) {
        if (!r.queued()) {
            r.queued(true);
            ready.add(r);
        }
    }

    /**
     * An operation in flight: polled after each progress ({@link #addOp}, with its token), or completed through
     * itself as its callback ({@link #beginCallback}, {@link #endCallback}).
     */
    abstract static class Op implements UcpCallback {
        /** {@link #endCallback}: the operation is in flight. */
        static final int IN_FLIGHT = 1;

        long token;
        /** The handler awaiting the callback, and the place in its list; while the operation is in flight. */
        private UcxIoHandler awaitedBy;
        private int index;
        /** Inside the call that starts the operation: a callback now is its immediate completion. */
        private boolean starting;
        private int startStatus;
        private Throwable failure;

        /** Completed (with {@code failure}, or {@code null}); the token, or the callback, is over. */
        abstract void done(Throwable failure);

        /** The UCX call the operation started with, for error messages. */
        String operation() {
            return "UCX operation";
        }

        @Override
        public final void onComplete(int status, long length, long tag) {
            if (starting) {
                startStatus = status;
                return;
            }
            UcxIoHandler h = awaitedBy;
            if (h != null) {
                h.callbackCame(this, status);
            }
        }

        /** The worker closed first: free what the operation held, without touching UCX. */
        abstract void abandon();

        /** Still in flight after a progress call; an operation with a deadline reads the clock here. */
        void check() {
        }
    }

    void addOp(Op op) {
        ops.add(op);
    }

    /** Call right before starting an operation with {@code op} as its callback. */
    static void beginCallback(Op op) {
        op.starting = true;
        op.startStatus = Op.IN_FLIGHT;
    }

    /**
     * Call once the start of {@code op}'s operation returned. Returns the status the operation completed with during
     * the call (0, or a negative {@code ucs_status_t}), the operation then over and never to call back; or
     * {@link Op#IN_FLIGHT}, the operation then awaited here and finished by {@code op.done} after the progress that
     * completes it. A start that threw needs neither this nor anything else: {@code op} is not tracked.
     */
    int endCallback(Op op) {
        op.starting = false;
        if (op.startStatus != Op.IN_FLIGHT) {
            return op.startStatus;
        }
        op.awaitedBy = this;
        op.index = awaited.size();
        awaited.add(op);
        return Op.IN_FLIGHT;
    }

    /** The callback of an operation awaited here: it came after the start returned, on this loop, inside progress. */
    private void callbackCame(Op op, int status) {
        int i = op.index;
        Op last = awaited.removeLast();
        if (last != op) {
            awaited.set(i, last);
            last.index = i;
        }
        op.awaitedBy = null;
        op.failure = status < 0 ? UcxException.of(op.operation(), status) : null;
        completed.add(op);
    }

    int register(UcxSocketChannel channel) {
        int id;
        do {
            id = ++lastId;
            if (id <= 0) {
                lastId = 0;
                id = ++lastId;
            }
        } while (connections.containsKey(id));
        connections.put(id, channel);
        return id;
    }

    void accepted(UcpEndpoint ep, UcxSocketChannel channel) {
        accepted.put(ep, channel);
    }

    void forget(int id, UcpEndpoint ep) {
        connections.remove(id);
        if (ep != null) {
            accepted.remove(ep);
        }
    }

    /** Closes an endpoint after what was sent on it completed (bounded), without blocking the loop. */
    void closeEndpoint(UcpEndpoint ep) {
        long token;
        try {
            token = ep.isFailed() ? UcpWorker.COMPLETED : ep.flush();
        } catch (RuntimeException e) {
            token = UcpWorker.COMPLETED;
        }
        if (token == UcpWorker.COMPLETED) {
            closeForce(ep);
            return;
        }
        CloseOp op = new CloseOp(ep, System.nanoTime() + CLOSE_FLUSH_NANOS);
        op.token = token;
        addOp(op);
    }

    static void closeForce(UcpEndpoint ep) {
        try {
            ep.closeForce();
        } catch (RuntimeException e) {
            LOG.debug("closing {} failed", ep, e);
        }
    }

    private static final class CloseOp extends Op {
        final UcpEndpoint ep;
        final long deadline;

        CloseOp(UcpEndpoint ep, long deadline) {
            this.ep = ep;
            this.deadline = deadline;
        }

        @Override
        void done(Throwable failure) {
            closeForce(ep);
        }

        @Override
        void abandon() {
        }

        @Override
        void check() {
            if (System.nanoTime() - deadline > 0) {
                closeForce(ep); // the peer does not answer: the flush then completes with an error
            }
        }
    }

    // ---- active messages ----------------------------------------------------------------------------------------

    private void onData(UcpAmMessage m) {
        if (m.headerLength() < Wire.DATA_HEADER) {
            return;
        }
        MemorySegment h = header;
        m.copyHeader(0, h, 0, Wire.DATA_HEADER); // no segment of UCX's memory: nothing allocated per message
        UcxSocketChannel ch = connections.get(h.get(INT, 0));
        if (ch != null) {
            ch.onData(m, h.get(INT, 4), h.get(LONG, 8));
        } // else: the channel closed; a rendezvous message not kept is dropped by UCX
    }

    private void onControl(UcpAmMessage m) {
        if (m.headerLength() < Wire.CONTROL_HEADER) {
            return;
        }
        MemorySegment h = header;
        m.copyHeader(0, h, 0, Wire.CONTROL_HEADER);
        int type = h.get(INT, 4);
        long value = h.get(LONG, 8);
        int src = h.get(INT, 16);
        int window = h.get(INT, 20);
        if (type == Wire.HELLO) {
            UcpEndpoint ep = m.replyEndpoint();
            UcxSocketChannel ch = ep == null ? null : accepted.remove(ep);
            if (ch != null) {
                ch.onHello(src, window, value);
            }
            return;
        }
        UcxSocketChannel ch = connections.get(h.get(INT, 0));
        if (ch == null) {
            return;
        }
        if (type == Wire.HELLO_ACK) {
            ch.onHelloAck(src, window, value);
        } else if (type == Wire.CREDIT) {
            ch.onCredit(value);
        }
    }

    private static final class SharedContext {
        final Object key;
        final UcpContext context;
        int users;

        SharedContext(Object key, UcpContext context) {
            this.key = key;
            this.context = context;
        }
    }
}
