package io.github.ucxffm.peer;

import io.github.ucxffm.UcpAmData;
import io.github.ucxffm.UcpAmMessage;
import io.github.ucxffm.UcpEndpoint;
import io.github.ucxffm.UcpMemory;
import io.github.ucxffm.UcpWorker;
import io.github.ucxffm.UcxCanceledException;
import io.github.ucxffm.UcxException;
import io.github.ucxffm.UcxTruncatedException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static io.github.ucxffm.peer.Integrity.HEADER;
import static io.github.ucxffm.peer.Integrity.INT;
import static io.github.ucxffm.peer.Integrity.LONG;

/**
 * The receiving side of a channel: keeps tag receives posted, reads the stream, takes active messages (from the
 * worker's {@link IntegrityHub.AmRouter}), checks the put slots it is told about, and verifies every message before
 * it records it and sends the application acknowledgement. A message that fails its check is a problem and is not
 * acknowledged; one that arrives twice is a duplicate.
 * <p>
 * Its region (key sent to the sender first) holds the reference bytes gets read, the counter atomics add to, and the
 * put slots. It is allocated by UCX, or given and registered: a peer maps it from a file, so that the test can read
 * what the puts left in it after the peer was killed.
 */
public final class IntegrityReceiver extends IntegrityChannel {

    private static final int NOTIFY_RECEIVES = 8;
    private static final int ACK_BUFFERS = 16;

    /** Where the data of a rendezvous active message is being fetched to. */
    private static final class Rndv {
        final MemorySegment buffer;
        final long length;
        long token;

        Rndv(MemorySegment buffer, long length) {
            this.buffer = buffer;
            this.length = length;
        }
    }

    private final MemorySegment regionMemory;
    private final UcpMemory region;
    private final MemorySegment keyBuffer;
    private long keyToken;
    private final MemorySegment[] tagBuffers;
    private final long[] tagTokens;
    private final MemorySegment[] noteBuffers = new MemorySegment[NOTIFY_RECEIVES];
    private final long[] noteTokens = new long[NOTIFY_RECEIVES];
    private final MemorySegment endBuffer;
    private long endToken;
    private final MemorySegment streamBuffer;
    private long streamToken = NONE;
    private int streamLength = -1;
    private boolean streamOpen = true;
    private final List<Rndv> rndv = new ArrayList<>();
    private final ArrayDeque<MemorySegment> spare = new ArrayDeque<>();
    private final ArrayDeque<Long> pendingAcks = new ArrayDeque<>();
    private final Integrity.SeqSet unreported = new Integrity.SeqSet();
    private final MemorySegment[] ackBuffers = new MemorySegment[ACK_BUFFERS];
    private final long[] ackTokens = new long[ACK_BUFFERS];
    private final MemorySegment finBuffer;
    private long finToken = NONE;
    private boolean finSent;

    /** Messages verified (and, for puts found intact after the sender died, recovered). */
    public final Integrity.SeqSet received = new Integrity.SeqSet();
    /** Puts found intact in their slots by {@link #recoverPuts()} that no notification had announced. */
    public final Integrity.SeqSet recovered = new Integrity.SeqSet();
    /** The sender's count from its end message; {@code -1} until it arrives. */
    public long endCount = -1;
    /** Messages that arrived a second time. */
    public int duplicates;
    /** Slots found neither empty nor intact by {@link #recoverPuts()}. */
    public int torn;
    /** Receives that ended with a peer failure (the sender died with them half done). */
    public long failedReceives;
    /**
     * Messages whose receive had matched but failed, by the sequence number in the header that had arrived: a
     * rendezvous whose sender died before all of its data came. The receiver knows it did not get them.
     */
    public final Integrity.SeqSet failedAfterMatch = new Integrity.SeqSet();

    /**
     * Starts the channel: registers the region, sends its key, posts the receives.
     *
     * @param worker       the endpoint's worker, on its thread
     * @param ep           the endpoint to the sender
     * @param channel      the channel number
     * @param cfg          the configuration (the sender's)
     * @param reporter     told of verified messages before they are acknowledged
     * @param regionMemory the region to register, at least {@link Integrity#regionBytes} bytes, or {@code null} for
     *                     one UCX allocates
     */
    public IntegrityReceiver(UcpWorker worker, UcpEndpoint ep, int channel, Integrity.Config cfg,
                             Integrity.Reporter reporter, MemorySegment regionMemory) {
        super(worker, ep, channel, cfg, reporter);
        long size = Integrity.regionBytes(cfg);
        if (regionMemory != null) {
            this.regionMemory = regionMemory.asSlice(0, size);
            region = worker.context().register(this.regionMemory);
        } else {
            // UCX's own memory: over shared memory peers then reach it directly (mapped), not through UCP's software
            // RMA, whose target side UCX 1.13.1 aborts on when a reply cannot go out to a dead peer
            region = worker.context().allocate(size);
            this.regionMemory = region.segment();
        }
        Integrity.fillReference(this.regionMemory);
        this.regionMemory.asSlice(Integrity.COUNTER_AT).fill((byte) 0);
        byte[] key = region.packRemoteKey();
        keyBuffer = arena.allocate(key.length);
        keyBuffer.copyFrom(MemorySegment.ofArray(key));
        tagBuffers = new MemorySegment[cfg.tagReceives];
        tagTokens = new long[cfg.tagReceives];
        for (int i = 0; i < cfg.tagReceives; i++) {
            tagBuffers[i] = arena.allocate(HEADER + cfg.maxPayload, 64);
            tagTokens[i] = postTag(i);
        }
        for (int i = 0; i < NOTIFY_RECEIVES; i++) {
            noteBuffers[i] = arena.allocate(16, 8);
            noteTokens[i] = postNote(i);
        }
        endBuffer = arena.allocate(8, 8);
        endToken = worker.receiveTag(endBuffer, 0, 8, Integrity.tag(Integrity.T_END, channel), -1L);
        finBuffer = arena.allocate(8, 8);
        for (int i = 0; i < ACK_BUFFERS; i++) {
            ackBuffers[i] = arena.allocate(8 + 8L * Integrity.ACK_BATCH, 8);
            ackTokens[i] = NONE;
        }
        streamBuffer = arena.allocate(HEADER + cfg.maxPayload, 64);
        keyToken = ep.sendTag(keyBuffer, 0, key.length, Integrity.tag(Integrity.T_KEY, channel));
        state = State.RUNNING;
    }

    private long postTag(int i) {
        tagBuffers[i].asSlice(0, HEADER).fill((byte) 0); // so that a failed receive shows whose header had come
        return worker.receiveTag(tagBuffers[i], 0, tagBuffers[i].byteSize(), Integrity.tag(Integrity.T_DATA, channel),
                -1L);
    }

    private long postNote(int i) {
        return worker.receiveTag(noteBuffers[i], 0, 16, Integrity.tag(Integrity.T_NOTIFY, channel), -1L);
    }

    /** The registered region's memory (reference bytes, counter, put slots). */
    public MemorySegment region() {
        return regionMemory;
    }

    /** Whether receives are posted again after they complete: while running, and while draining a failed sender. */
    private boolean reposting() {
        return state == State.RUNNING || state == State.FAILED;
    }

    @Override
    public boolean step() {
        boolean work = false;
        if (keyToken != NONE && outcome(keyToken) != 0) {
            keyToken = NONE;
            work = true;
        }
        work |= pollTags();
        work |= pollNotes();
        work |= pollStream();
        work |= pollRndv();
        work |= pollEnd();
        work |= pollAckSends();
        work |= sendAcks();
        if (state == State.ENDING && !finSent && pendingAcks.isEmpty() && noAckInFlight()) {
            finSent = true;
            try {
                finToken = ep.sendTag(finBuffer, 0, 8, Integrity.tag(Integrity.T_FIN, channel));
            } catch (RuntimeException e) {
                fail(e);
            }
        }
        if (finSent && finToken != NONE) {
            int r = outcome(finToken);
            if (r != 0) {
                finToken = NONE;
                if (r > 0 && state == State.ENDING) {
                    state = State.DONE;
                }
            }
        }
        if (ep.isFailed()) {
            fail("endpoint failed: " + ep.failureStatus());
        }
        return work;
    }

    private boolean noAckInFlight() {
        for (long t : ackTokens) {
            if (t != NONE) {
                return false;
            }
        }
        return true;
    }

    /**
     * Polls a receive: its length when it completed OK, {@code -1} while in flight, {@code -2} when it was canceled
     * or failed, {@code -3} when it failed with the peer (data cut off).
     */
    private long received(long token, String what) {
        try {
            return worker.poll(token) ? worker.receivedLength() : -1;
        } catch (UcxCanceledException e) {
            return -2;
        } catch (UcxTruncatedException e) {
            problem(what + " truncated: " + e.getMessage());
            return -2;
        } catch (UcxException e) {
            failedReceives++;
            return -3;
        }
    }

    /** A receive of a message failed after it matched: note the message, if its header had arrived. */
    private void failedAfterMatch(MemorySegment header) {
        if (header.get(INT, 0) == Integrity.MAGIC && header.get(INT, 4) == channel) {
            failedAfterMatch.add(Integrity.seqOf(header));
        }
    }

    private boolean pollTags() {
        boolean work = false;
        for (int i = 0; i < tagTokens.length; i++) {
            if (tagTokens[i] == NONE) {
                continue;
            }
            long length = received(tagTokens[i], "tag message");
            if (length == -1) {
                continue;
            }
            work = true;
            tagTokens[i] = NONE;
            if (length >= 0) {
                accept(tagBuffers[i], length, Integrity.Kind.TAG);
            } else if (length == -3) {
                failedAfterMatch(tagBuffers[i]);
            }
            if (reposting()) {
                tagTokens[i] = postTag(i);
            }
        }
        return work;
    }

    private boolean pollNotes() {
        boolean work = false;
        for (int i = 0; i < NOTIFY_RECEIVES; i++) {
            if (noteTokens[i] == NONE) {
                continue;
            }
            long length = received(noteTokens[i], "put notification");
            if (length == -1) {
                continue;
            }
            work = true;
            noteTokens[i] = NONE;
            if (length == 16) {
                checkSlot(noteBuffers[i].get(LONG, 0), noteBuffers[i].get(LONG, 8));
            } else if (length >= 0) {
                problem("put notification of " + length + " bytes");
            }
            if (reposting()) {
                noteTokens[i] = postNote(i);
            }
        }
        return work;
    }

    private void checkSlot(long seq, long slot) {
        if (slot < 0 || slot >= cfg.slots) {
            problem("put notification of seq " + seq + " names slot " + slot);
            return;
        }
        MemorySegment s = regionMemory.asSlice(Integrity.slotOffset((int) slot, cfg.maxPayload),
                Integrity.slotBytes(cfg.maxPayload));
        int length = s.get(INT, 16);
        if (length < 0 || length > cfg.maxPayload) {
            problem("BAD put: seq " + seq + " in slot " + slot + ": header length " + length);
            return;
        }
        String why = Integrity.check(s, HEADER + length, channel);
        if (why == null && Integrity.seqOf(s) != seq) {
            why = "slot " + slot + " holds seq " + Integrity.seqOf(s) + ", notified " + seq;
        }
        if (why != null) {
            problem("BAD put: " + why);
            return;
        }
        if (Integrity.kindOf(s) != Integrity.Kind.PUT) {
            problem("BAD put: seq " + seq + " was written as " + Integrity.kindOf(s));
            return;
        }
        record(seq, Integrity.Kind.PUT, length);
    }

    private boolean pollStream() {
        if (!streamOpen || state == State.DONE || state == State.ABANDONED || state == State.ENDING) {
            return false;
        }
        if (streamToken == NONE) {
            try {
                streamToken = ep.receiveStream(streamBuffer, 0, HEADER, true);
                streamLength = -1;
            } catch (RuntimeException e) {
                streamOpen = false; // a failed or closed endpoint
                return false;
            }
        }
        long length = received(streamToken, "stream");
        if (length == -1) {
            return false;
        }
        streamToken = NONE;
        if (length < 0) {
            if (length == -3 && streamLength >= 0) {
                failedAfterMatch(streamBuffer);
            }
            streamOpen = false;
            return true;
        }
        if (streamLength < 0) {
            int magic = streamBuffer.get(INT, 0);
            int payload = streamBuffer.get(INT, 16);
            if (magic != Integrity.MAGIC || payload < 0 || payload > cfg.maxPayload) {
                problem("BAD stream: out of step, header magic 0x" + Integer.toHexString(magic) + " length "
                        + payload);
                streamOpen = false;
                return true;
            }
            streamLength = payload;
            try {
                streamToken = ep.receiveStream(streamBuffer, HEADER, payload, true);
            } catch (RuntimeException e) {
                streamOpen = false;
            }
        } else {
            accept(streamBuffer, HEADER + streamLength, Integrity.Kind.STREAM);
            streamLength = -1;
        }
        return true;
    }

    /**
     * Takes an active message of this channel; called by the router inside the worker's progress.
     *
     * @param m the message, valid during the call
     */
    void onActiveMessage(UcpAmMessage m) {
        if (state == State.DONE || state == State.ABANDONED) {
            return; // dropped: UCX completes a rendezvous sender all the same
        }
        MemorySegment header = m.header();
        if (m.headerLength() != HEADER) {
            problem("BAD am: header of " + m.headerLength() + " bytes");
            return;
        }
        long length = m.dataLength();
        if (length > cfg.maxPayload) {
            problem("BAD am: " + length + " data bytes");
            return;
        }
        if (!m.isRendezvous()) {
            MemorySegment data = length == 0 ? MemorySegment.NULL : m.data();
            String why = Integrity.check(header, data, channel);
            if (why != null) {
                problem("BAD am: " + why);
            } else if (Integrity.kindOf(header) != Integrity.Kind.AM) {
                problem("BAD am: seq " + Integrity.seqOf(header) + " was written as " + Integrity.kindOf(header));
            } else {
                record(Integrity.seqOf(header), Integrity.Kind.AM, length);
            }
            return;
        }
        MemorySegment buffer = spare.isEmpty() ? arena.allocate(HEADER + cfg.maxPayload, 64) : spare.pop();
        MemorySegment.copy(header, 0, buffer, 0, HEADER);
        UcpAmData data = m.keep();
        Rndv r = new Rndv(buffer, length);
        r.token = data.receive(buffer, HEADER);
        rndv.add(r);
    }

    private boolean pollRndv() {
        boolean work = false;
        for (Iterator<Rndv> it = rndv.iterator(); it.hasNext(); ) {
            Rndv r = it.next();
            long length = received(r.token, "active-message data");
            if (length == -1) {
                continue;
            }
            work = true;
            it.remove();
            if (length >= 0) {
                accept(r.buffer, HEADER + r.length, Integrity.Kind.AM);
            } else if (length == -3) {
                failedAfterMatch(r.buffer);
            }
            spare.push(r.buffer); // the receive completed, either way: UCX no longer writes into the buffer
        }
        return work;
    }

    private boolean pollEnd() {
        if (endToken == NONE) {
            return false;
        }
        long length = received(endToken, "end");
        if (length == -1) {
            return false;
        }
        endToken = NONE;
        if (length == 8) {
            endCount = endBuffer.get(LONG, 0);
            if (state == State.RUNNING) {
                state = State.ENDING;
            }
        } else if (length >= 0) {
            problem("end message of " + length + " bytes");
        }
        return true;
    }

    /** Verifies a contiguous message that came by {@code path} (TAG stands for both tag kinds) and records it. */
    private void accept(MemorySegment m, long length, Integrity.Kind path) {
        String why = Integrity.check(m, length, channel);
        if (why != null) {
            problem("BAD " + path + ": " + why);
            return;
        }
        Integrity.Kind kind = Integrity.kindOf(m);
        boolean fits = path == Integrity.Kind.TAG ? kind == Integrity.Kind.TAG || kind == Integrity.Kind.TAG_SYNC
                : kind == path;
        if (!fits) {
            problem("BAD " + path + ": seq " + Integrity.seqOf(m) + " was written as " + kind);
            return;
        }
        record(Integrity.seqOf(m), kind, length - HEADER);
    }

    private void record(long seq, Integrity.Kind kind, long payload) {
        if (!received.add(seq)) {
            duplicates++;
            problem("DUP seq " + seq + " (" + kind + ") arrived again");
            return;
        }
        counts.verified(kind, HEADER + payload);
        pendingAcks.add(seq);
        unreported.add(seq);
    }

    private boolean pollAckSends() {
        boolean work = false;
        for (int i = 0; i < ACK_BUFFERS; i++) {
            if (ackTokens[i] != NONE && outcome(ackTokens[i]) != 0) {
                ackTokens[i] = NONE;
                work = true;
            }
        }
        return work;
    }

    private boolean sendAcks() {
        if (!unreported.isEmpty()) {
            reporter.verified(channel, unreported); // before the acknowledgements leave
            unreported.clear();
        }
        boolean work = false;
        while (!pendingAcks.isEmpty() && state != State.ABANDONED) {
            int free = -1;
            for (int i = 0; i < ACK_BUFFERS && free < 0; i++) {
                if (ackTokens[i] == NONE) {
                    free = i;
                }
            }
            if (free < 0) {
                break;
            }
            int n = Math.min(Integrity.ACK_BATCH, pendingAcks.size());
            MemorySegment b = ackBuffers[free];
            b.set(INT, 0, n);
            b.set(INT, 4, 0);
            for (int j = 0; j < n; j++) {
                b.set(LONG, 8 + 8L * j, pendingAcks.poll());
            }
            work = true;
            try {
                ackTokens[free] = ep.sendTag(b, 0, 8 + 8L * n, Integrity.tag(Integrity.T_ACK, channel));
            } catch (RuntimeException e) {
                fail(e);
                pendingAcks.clear(); // the endpoint is gone: these are verified but never acknowledged
                break;
            }
        }
        return work;
    }

    /**
     * After the sender died: reads the put slots and records intact puts no notification announced (a put whose flush
     * completed is acknowledged even if the sender died before it could say so). Torn slots are counted.
     *
     * @return the scan
     */
    public Integrity.SlotScan recoverPuts() {
        Integrity.SlotScan scan = Integrity.scanSlots(regionMemory, cfg, channel);
        for (long seq : scan.intact().toArray()) {
            if (received.add(seq)) {
                recovered.add(seq);
            }
        }
        torn = scan.torn();
        return scan;
    }

    @Override
    public boolean isFinished() {
        return state == State.DONE || state == State.FAILED || state == State.ABANDONED;
    }

    @Override
    public int unresolved() {
        int n = 0;
        for (long t : tagTokens) {
            n += t != NONE ? 1 : 0;
        }
        for (long t : noteTokens) {
            n += t != NONE ? 1 : 0;
        }
        for (long t : ackTokens) {
            n += t != NONE ? 1 : 0;
        }
        n += rndv.size();
        n += (keyToken != NONE ? 1 : 0) + (endToken != NONE ? 1 : 0) + (streamToken != NONE ? 1 : 0)
                + (finToken != NONE ? 1 : 0);
        return n;
    }

    @Override
    void cancelReceives() {
        for (long t : tagTokens) {
            if (t != NONE) {
                worker.cancel(t);
            }
        }
        for (long t : noteTokens) {
            if (t != NONE) {
                worker.cancel(t);
            }
        }
        if (endToken != NONE) {
            worker.cancel(endToken);
        }
    }

    @Override
    void pollAll() {
        if (keyToken != NONE && outcome(keyToken) != 0) {
            keyToken = NONE;
        }
        pollTags();
        pollNotes();
        pollStream();
        if (streamToken != NONE && received(streamToken, "stream") != -1) {
            streamToken = NONE;
        }
        pollRndv();
        pollEnd();
        pollAckSends();
        if (finToken != NONE && outcome(finToken) != 0) {
            finToken = NONE;
        }
    }

    @Override
    void releaseRegion() {
        region.close();
    }

    @Override
    public String toString() {
        return super.toString() + "{received " + received.size() + ", duplicates " + duplicates + ", problems "
                + problems.size() + ", end " + endCount + "}";
    }
}
