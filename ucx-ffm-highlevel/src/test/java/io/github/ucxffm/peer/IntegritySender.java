package io.github.ucxffm.peer;

import io.github.ucxffm.UcpAmSendFlags;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpRemoteKey;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.zip.CRC32C;

import static io.github.ucxffm.peer.Integrity.HEADER;
import static io.github.ucxffm.peer.Integrity.INT;
import static io.github.ucxffm.peer.Integrity.LONG;

/**
 * The sending side of a channel: keeps up to {@code window} messages in flight, of every configured kind and size,
 * and records what was acknowledged, and how. Also reads the receiver's reference bytes back (get) and adds to its
 * counter (fetching atomic add), checking both.
 */
public final class IntegritySender extends IntegrityChannel {

    private static final byte SENDING = 1;
    private static final byte PUTTING = 2;
    private static final byte NOTIFYING = 3;
    private static final int ACK_RECEIVES = 8;
    private static final long REFERENCE_CRC = Integrity.referenceCrc();

    /** One message in flight, with its buffer. */
    private final class Op {
        final MemorySegment buffer = arena.allocate(HEADER + cfg.maxPayload, 64);
        final MemorySegment note = arena.allocate(16, 8);
        Integrity.Kind kind;
        long seq;
        int length;
        int slot = -1;
        byte stage;
        long token = NONE;
        long flushToken = NONE;
        boolean failed;
    }

    private final ArrayDeque<Op> idle = new ArrayDeque<>();
    private final List<Op> busy = new ArrayList<>();
    private final long[] slotSeq;
    private final MemorySegment[] ackBuffers = new MemorySegment[ACK_RECEIVES];
    private final long[] ackTokens = new long[ACK_RECEIVES];
    private final MemorySegment keyBuffer;
    private long keyToken;
    private UcpRemoteKey rkey;
    private final MemorySegment endBuffer;
    private final MemorySegment finBuffer;
    private long endToken = NONE;
    private long finToken;
    private final MemorySegment getBuffer;
    private long getToken = NONE;
    private CompletableFuture<Long> atomic;
    private long atomicsDone;
    private long nextSeq;
    private long runUntil;
    private long sideDue;

    /** Sequence numbers started. */
    public final Integrity.SeqSet issued = new Integrity.SeqSet();
    /** Application acknowledgements received. */
    public final Integrity.SeqSet appAcked = new Integrity.SeqSet();
    /** Synchronous sends completed. */
    public final Integrity.SeqSet syncAcked = new Integrity.SeqSet();
    /** Puts whose flush completed. */
    public final Integrity.SeqSet flushAcked = new Integrity.SeqSet();
    /** Operations that completed with an error. */
    public long failedOps;
    /** The most messages in flight at once. */
    public int maxInFlight;
    /** The slot each put went to, by sequence number. */
    public final java.util.Map<Long, Integer> putSlots = new java.util.HashMap<>();

    private final Integrity.SeqSet newApp = new Integrity.SeqSet();
    private final Integrity.SeqSet newSync = new Integrity.SeqSet();
    private final Integrity.SeqSet newFlush = new Integrity.SeqSet();

    /**
     * Starts the channel: posts the receives for the key, the acknowledgements and the end's answer.
     *
     * @param worker   the endpoint's worker, on its thread
     * @param ep       the endpoint to the receiver
     * @param channel  the channel number both sides agreed on (the hello)
     * @param cfg      the configuration
     * @param reporter told of new acknowledgements
     */
    public IntegritySender(UcpWorker worker, UcpEndpoint ep, int channel, Integrity.Config cfg,
                           Integrity.Reporter reporter) {
        super(worker, ep, channel, cfg, reporter);
        slotSeq = new long[cfg.slots];
        Arrays.fill(slotSeq, -1);
        for (int i = 0; i < cfg.window; i++) {
            idle.add(new Op());
        }
        keyBuffer = arena.allocate(8192);
        endBuffer = arena.allocate(8, 8);
        finBuffer = arena.allocate(8, 8);
        getBuffer = arena.allocate(Integrity.REF_BYTES, 64);
        keyToken = worker.receiveTag(keyBuffer, 0, keyBuffer.byteSize(), Integrity.tag(Integrity.T_KEY, channel), -1L);
        finToken = worker.receiveTag(finBuffer, 0, 8, Integrity.tag(Integrity.T_FIN, channel), -1L);
        for (int i = 0; i < ACK_RECEIVES; i++) {
            ackBuffers[i] = arena.allocate(8 + 8L * Integrity.ACK_BATCH, 8);
            ackTokens[i] = postAck(i);
        }
    }

    private long postAck(int i) {
        return worker.receiveTag(ackBuffers[i], 0, ackBuffers[i].byteSize(), Integrity.tag(Integrity.T_ACK, channel),
                -1L);
    }

    /** What the sender had seen acknowledged at one moment, by how. */
    public record Acked(Integrity.SeqSet app, Integrity.SeqSet sync, Integrity.SeqSet flush) {
        /** All of them. */
        public Integrity.SeqSet all() {
            Integrity.SeqSet a = app.copy();
            a.addAll(sync);
            a.addAll(flush);
            return a;
        }
    }

    /** A copy of what has been acknowledged so far: taken just before a peer is killed. */
    public Acked acknowledged() {
        return new Acked(appAcked.copy(), syncAcked.copy(), flushAcked.copy());
    }

    /** Messages started so far. */
    public long sent() {
        return nextSeq;
    }

    /** Stops starting new messages; the channel then drains, ends, and waits for the receiver's answer. */
    public void stop() {
        if (state == State.RUNNING || state == State.STARTING) {
            runUntil = System.nanoTime();
            if (state == State.RUNNING) {
                state = State.DRAINING;
            }
        }
    }

    @Override
    public boolean step() {
        boolean work = false;
        if (keyToken != NONE && state == State.STARTING) {
            work |= pollKey();
        }
        work |= pollAcks();
        work |= pollOps();
        work |= pollSide();
        if (state == State.RUNNING) {
            if (System.nanoTime() - runUntil >= 0 || nextSeq >= cfg.maxMessages) {
                state = State.DRAINING;
            } else {
                work |= issue();
            }
        }
        if (state == State.DRAINING && busy.isEmpty() && getToken == NONE && atomic == null
                && appAcked.size() == issued.size()) {
            endBuffer.set(LONG, 0, nextSeq);
            try {
                endToken = ep.sendTag(endBuffer, 0, 8, Integrity.tag(Integrity.T_END, channel));
                state = State.ENDING;
            } catch (RuntimeException e) {
                fail(e);
            }
            work = true;
        }
        if (state == State.ENDING) {
            if (endToken != NONE && resolved(endToken)) {
                endToken = NONE;
            }
            if (finToken != NONE && resolved(finToken)) {
                finToken = NONE;
            }
            if (endToken == NONE && finToken == NONE && state == State.ENDING) {
                state = State.DONE;
                cancelReceives();
            }
        }
        if (ep.isFailed()) {
            fail("endpoint failed: " + ep.failureStatus());
        }
        report();
        return work;
    }

    private boolean pollKey() {
        int r = outcome(keyToken);
        if (r == 0) {
            return false;
        }
        keyToken = NONE;
        if (r < 0 || state != State.STARTING) {
            return true;
        }
        try {
            rkey = ep.unpackRemoteKey(keyBuffer.asSlice(0, worker.receivedLength())
                    .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            state = State.RUNNING;
            long now = System.nanoTime();
            runUntil = runUntil != 0 ? runUntil : now + cfg.runMillis * 1_000_000L;
        } catch (RuntimeException e) {
            fail(e);
        }
        return true;
    }

    private boolean pollAcks() {
        boolean work = false;
        for (int i = 0; i < ACK_RECEIVES; i++) {
            if (ackTokens[i] == NONE) {
                continue;
            }
            boolean done;
            try {
                done = worker.poll(ackTokens[i]);
            } catch (UcxException e) {
                ackTokens[i] = NONE;
                if (state != State.ABANDONED && state != State.DONE) {
                    fail(e);
                }
                continue;
            }
            if (!done) {
                continue;
            }
            work = true;
            ackTokens[i] = NONE;
            long length = worker.receivedLength();
            MemorySegment b = ackBuffers[i];
            int n = b.get(INT, 0);
            if (n < 0 || n > Integrity.ACK_BATCH || length != 8 + 8L * n) {
                problem("malformed ack message: count " + n + ", " + length + " bytes");
            } else {
                for (int j = 0; j < n; j++) {
                    acknowledge(b.get(LONG, 8 + 8L * j));
                }
            }
            if (state != State.DONE && state != State.ABANDONED) {
                ackTokens[i] = postAck(i);
            }
        }
        return work;
    }

    private void acknowledge(long seq) {
        if (!issued.contains(seq)) {
            problem("acknowledgement of seq " + seq + ", which was never sent");
            return;
        }
        if (!appAcked.add(seq)) {
            problem("second acknowledgement of seq " + seq);
            return;
        }
        newApp.add(seq);
        for (int s = 0; s < slotSeq.length; s++) {
            if (slotSeq[s] == seq) {
                slotSeq[s] = -1; // the receiver verified the put: the slot may be written again
            }
        }
    }

    private int freeSlot() {
        for (int s = 0; s < slotSeq.length; s++) {
            if (slotSeq[s] == -1) {
                return s;
            }
        }
        return -1;
    }

    private boolean issue() {
        boolean work = false;
        while (!idle.isEmpty() && nextSeq - appAcked.size() < cfg.maxUnacked && nextSeq < cfg.maxMessages
                && state == State.RUNNING) {
            long seq = nextSeq;
            Integrity.Kind kind = Integrity.kindOf(seq, cfg.kinds);
            int slot = -1;
            if (kind == Integrity.Kind.PUT && (slot = freeSlot()) < 0) {
                break; // head of line: wait for a slot
            }
            Op op = idle.poll();
            op.seq = seq;
            op.kind = kind;
            op.length = Integrity.payloadSize(seq, cfg.maxPayload);
            op.failed = false;
            op.slot = slot;
            Integrity.write(op.buffer, channel, seq, kind, op.length);
            long total = HEADER + op.length;
            long tag = Integrity.tag(Integrity.T_DATA, channel);
            try {
                op.stage = SENDING;
                switch (kind) {
                    case TAG -> op.token = ep.sendTag(op.buffer, 0, total, tag);
                    case TAG_SYNC -> op.token = ep.sendTagSync(op.buffer, 0, total, tag);
                    case STREAM -> op.token = ep.sendStream(op.buffer, 0, total);
                    case AM -> op.token = ep.sendAm(Integrity.AM_ID, op.buffer.asSlice(0, HEADER), op.buffer, HEADER,
                            op.length, UcpAmSendFlags.NONE);
                    case PUT -> {
                        op.stage = PUTTING;
                        op.token = ep.put(op.buffer, 0, total, rkey.base() + Integrity.slotOffset(slot,
                                cfg.maxPayload), rkey);
                        slotSeq[slot] = seq;
                        putSlots.put(seq, slot);
                    }
                    default -> throw new IllegalStateException(kind.name());
                }
            } catch (RuntimeException e) {
                op.token = NONE;
                idle.push(op);
                fail(e);
                return true;
            }
            issued.add(seq);
            nextSeq++;
            busy.add(op);
            maxInFlight = Math.max(maxInFlight, busy.size());
            work = true;
            if (kind == Integrity.Kind.PUT) {
                try {
                    op.flushToken = ep.flush();
                } catch (RuntimeException e) {
                    op.failed = true;
                    fail(e);
                    return true;
                }
            }
            if (seq >= sideDue) {
                sideDue = seq + cfg.sideEvery;
                startSide();
            }
        }
        return work;
    }

    private void startSide() {
        try {
            if (cfg.gets && getToken == NONE) {
                getBuffer.fill((byte) 0);
                getToken = ep.get(getBuffer, 0, Integrity.REF_BYTES, rkey.base(), rkey);
            }
            if (cfg.atomics && atomic == null) {
                atomic = ep.fetchAdd64Async(1, rkey.base() + Integrity.COUNTER_AT, rkey);
            }
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private boolean pollSide() {
        boolean work = false;
        if (getToken != NONE) {
            int r = outcome(getToken);
            if (r != 0) {
                getToken = NONE;
                work = true;
                if (r > 0) {
                    CRC32C crc = new CRC32C();
                    crc.update(getBuffer.asByteBuffer());
                    if (crc.getValue() != REFERENCE_CRC) {
                        problem("get returned other bytes than the receiver's reference (CRC-32C 0x"
                                + Long.toHexString(crc.getValue()) + ")");
                    } else {
                        counts.op("get");
                        counts.bytesVerified += Integrity.REF_BYTES;
                    }
                } else {
                    failedOps++;
                }
            }
        }
        if (atomic != null && atomic.isDone()) {
            work = true;
            try {
                long old = atomic.get();
                if (old != atomicsDone) {
                    problem("fetching add returned " + old + ", expected " + atomicsDone);
                }
                atomicsDone++;
                counts.op("atomic");
                counts.bytesVerified += 8;
            } catch (ExecutionException e) {
                failedOps++;
                if (state != State.ABANDONED && state != State.DONE) {
                    fail(e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            atomic = null;
        }
        return work;
    }

    private boolean pollOps() {
        boolean work = false;
        for (Iterator<Op> it = busy.iterator(); it.hasNext(); ) {
            Op op = it.next();
            boolean finished = false;
            switch (op.stage) {
                case SENDING -> {
                    int r = outcome(op.token);
                    if (r != 0) {
                        op.token = NONE;
                        finished = true;
                        if (r > 0) {
                            counts.op(op.kind.name().toLowerCase(java.util.Locale.ROOT));
                            if (op.kind == Integrity.Kind.TAG_SYNC) {
                                syncAcked.add(op.seq);
                                newSync.add(op.seq);
                            }
                        } else {
                            failedOps++;
                        }
                    }
                }
                case PUTTING -> {
                    if (op.token != NONE) {
                        int r = outcome(op.token);
                        if (r != 0) {
                            op.token = NONE;
                            count(op, r, "put");
                        }
                    }
                    if (op.flushToken != NONE) {
                        int r = outcome(op.flushToken);
                        if (r != 0) {
                            op.flushToken = NONE;
                            count(op, r, "flush");
                        }
                    }
                    if (op.token == NONE && op.flushToken == NONE) {
                        if (op.failed) {
                            finished = true;
                        } else {
                            flushAcked.add(op.seq);
                            newFlush.add(op.seq);
                            op.note.set(LONG, 0, op.seq);
                            op.note.set(LONG, 8, op.slot);
                            try {
                                op.token = ep.sendTag(op.note, 0, 16, Integrity.tag(Integrity.T_NOTIFY, channel));
                                op.stage = NOTIFYING;
                            } catch (RuntimeException e) {
                                fail(e);
                                finished = true;
                            }
                        }
                    }
                }
                case NOTIFYING -> {
                    int r = outcome(op.token);
                    if (r != 0) {
                        op.token = NONE;
                        finished = true;
                        count(op, r, "notify");
                    }
                }
                default -> throw new IllegalStateException("stage " + op.stage);
            }
            if (finished) {
                work = true;
                it.remove();
                idle.push(op);
            }
        }
        return work;
    }

    private void count(Op op, int outcome, String name) {
        if (outcome > 0) {
            counts.op(name);
        } else {
            op.failed = true;
            failedOps++;
        }
    }

    private void report() {
        if (!newApp.isEmpty() || !newSync.isEmpty() || !newFlush.isEmpty()) {
            reporter.acked(channel, newApp, newSync, newFlush);
            newApp.clear();
            newSync.clear();
            newFlush.clear();
        }
    }

    @Override
    public boolean isFinished() {
        return state == State.DONE || ((state == State.FAILED || state == State.ABANDONED) && busy.isEmpty()
                && getToken == NONE && atomic == null && endToken == NONE);
    }

    @Override
    public int unresolved() {
        int n = 0;
        for (Op op : busy) {
            n += (op.token != NONE ? 1 : 0) + (op.flushToken != NONE ? 1 : 0);
        }
        for (long t : ackTokens) {
            n += t != NONE ? 1 : 0;
        }
        n += (keyToken != NONE ? 1 : 0) + (finToken != NONE ? 1 : 0) + (endToken != NONE ? 1 : 0);
        n += (getToken != NONE ? 1 : 0) + (atomic != null ? 1 : 0);
        return n;
    }

    @Override
    void cancelReceives() {
        for (long t : ackTokens) {
            if (t != NONE) {
                worker.cancel(t);
            }
        }
        if (keyToken != NONE) {
            worker.cancel(keyToken);
        }
        if (finToken != NONE) {
            worker.cancel(finToken);
        }
    }

    @Override
    void pollAll() {
        pollAcks();
        if (keyToken != NONE && resolved(keyToken)) {
            keyToken = NONE;
        }
        if (finToken != NONE && resolved(finToken)) {
            finToken = NONE;
        }
        if (endToken != NONE && resolved(endToken)) {
            endToken = NONE;
        }
        pollOps();
        pollSide();
        report();
    }

    @Override
    public String toString() {
        return super.toString() + "{sent " + nextSeq + ", app " + appAcked.size() + ", sync " + syncAcked.size()
                + ", flush " + flushAcked.size() + ", in flight " + busy.size() + "}";
    }
}
