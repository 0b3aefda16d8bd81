package io.github.ucxffm;

import io.github.ucxffm.peer.Integrity;
import io.github.ucxffm.peer.IntegrityReceiver;
import io.github.ucxffm.peer.IntegritySender;

import java.util.ArrayList;
import java.util.List;

/**
 * The data-integrity oracle (RELIABILITY.md b.0): compares what one side of a channel saw acknowledged with what
 * the other side verified. Each method returns the violations, empty when the channel is sound; the callers assert
 * on them (the soak collects them over many channels).
 */
final class IntegrityAudit {

    private IntegrityAudit() {
    }

    private static void subset(List<String> out, String what, Integrity.SeqSet part, Integrity.SeqSet whole) {
        Integrity.SeqSet missing = part.minus(whole);
        if (!missing.isEmpty()) {
            out.add(what + ": " + missing.sample(6));
        }
    }

    private static void problems(List<String> out, String side, List<String> problems) {
        for (String p : problems) {
            out.add(side + " saw: " + p);
        }
    }

    /**
     * A channel on which the peer sent and the hub (this process) received, both ending cleanly: every message the
     * peer started was verified here exactly once and acknowledged to it, nothing else arrived.
     */
    static List<String> cleanPeerSender(IntegrityReceiver hub, Integrity.Lines.Channel peer) {
        List<String> out = new ArrayList<>();
        problems(out, "hub receiver", hub.problems);
        problems(out, "peer sender", peer.problems);
        long sent = hub.endCount;
        if (sent <= 0) {
            out.add("no end message, or nothing sent (end " + sent + ")");
        }
        if (!hub.received.isPrefix(sent)) {
            out.add("received " + hub.received.sample(6) + " instead of exactly 0-" + (sent - 1));
        }
        if (!peer.acked().isPrefix(sent)) {
            out.add("peer saw acknowledged " + peer.acked().sample(6) + " instead of 0-" + (sent - 1));
        }
        subset(out, "acknowledged by sync send but not received", peer.sync, hub.received);
        subset(out, "acknowledged by flush but not received", peer.flush, hub.received);
        if (hub.duplicates != 0) {
            out.add(hub.duplicates + " duplicates");
        }
        if (!hub.recovered.isEmpty()) {
            out.add("puts recovered from slots although no one died: " + hub.recovered);
        }
        if (!"DONE".equals(peer.report.get("state"))) {
            out.add("peer sender ended " + peer.report);
        }
        return out;
    }

    /**
     * A channel on which the hub sent and the peer received, both ending cleanly: the peer verified every message
     * exactly once, and the hub saw each acknowledged.
     */
    static List<String> cleanPeerReceiver(IntegritySender hub, Integrity.Lines.Channel peer) {
        List<String> out = new ArrayList<>();
        problems(out, "hub sender", hub.problems);
        problems(out, "peer receiver", peer.problems);
        long sent = hub.sent();
        if (sent <= 0) {
            out.add("nothing sent");
        }
        if (!peer.got.isPrefix(sent)) {
            out.add("peer verified " + peer.got.sample(6) + " instead of exactly 0-" + (sent - 1));
        }
        if (!peer.gotTwice.isEmpty()) {
            out.add("peer verified twice: " + peer.gotTwice);
        }
        if (!hub.appAcked.isPrefix(sent)) {
            out.add("hub saw acknowledged " + hub.appAcked.sample(6) + " instead of 0-" + (sent - 1));
        }
        subset(out, "acknowledged by sync send but not verified", hub.syncAcked, peer.got);
        subset(out, "acknowledged by flush but not verified", hub.flushAcked, peer.got);
        if (!"DONE".equals(peer.report.get("state")) || !Long.toString(sent).equals(peer.report.get("end"))) {
            out.add("peer receiver ended " + peer.report);
        }
        return out;
    }

    /**
     * The peer sent and was killed (or failed); the hub received, drained and recovered the puts left in its slots:
     * everything the peer printed as acknowledged by the application or by a flush was verified here, exactly once
     * and intact; a synchronous send's completion only says that a receive matched it, so such a message was either
     * received or its receive failed here (its data cut off by the death), never silently lost.
     */
    static List<String> killedPeerSender(IntegrityReceiver hub, Integrity.Lines.Channel peer) {
        List<String> out = new ArrayList<>();
        problems(out, "hub receiver", hub.problems);
        problems(out, "peer sender", peer.problems);
        subset(out, "acknowledged by the application but not received", peer.app, hub.received);
        // A synchronous send completes when the receive matched ("remote tag match"), not when its data arrived: a
        // rendezvous whose sender pushed its data and died at once can fail at the receiver, which then knows it
        Integrity.SeqSet matched = hub.received.copy();
        matched.addAll(hub.failedAfterMatch);
        subset(out, "acknowledged by sync send but neither received nor failed after its match", peer.sync, matched);
        subset(out, "acknowledged by flush but not received", peer.flush, hub.received);
        if (hub.duplicates != 0) {
            out.add(hub.duplicates + " duplicates");
        }
        return out;
    }

    /**
     * The hub sent; the peer received and was killed. {@code atKill} is what the hub had seen acknowledged just before
     * it sent the SIGKILL: an acknowledgement that comes later is not from a live peer, and is not audited (UCX 1.13
     * completes a flush with success once the endpoint of a dead peer has failed, see docs/RELIABILITY.md). The peer
     * printed each message it verified before it sent the application acknowledgement, and its region is a file the
     * test read afterwards, so:
     * <ul>
     *   <li>every application-acknowledged message was printed as verified;</li>
     *   <li>every flush-acknowledged put was verified or is intact in its slot;</li>
     *   <li>a synchronous send completes when a posted receive matched it, before the application looks at it: at
     *   most {@code postedReceives} of them (those matched in the peer's last moments) may be unprinted;</li>
     *   <li>nothing was printed twice, nothing the hub never sent, and no message arrived corrupted.</li>
     * </ul>
     */
    static List<String> killedPeerReceiver(IntegritySender hub, IntegritySender.Acked atKill,
                                           Integrity.Lines.Channel peer, Integrity.SlotScan slots,
                                           int postedReceives) {
        List<String> out = new ArrayList<>();
        problems(out, "hub sender", hub.problems);
        problems(out, "peer receiver", peer.problems);
        subset(out, "verified but never sent", peer.got, hub.issued);
        subset(out, "found in a slot but never sent", slots.intact(), hub.issued);
        if (!peer.gotTwice.isEmpty()) {
            out.add("verified twice: " + peer.gotTwice);
        }
        subset(out, "acknowledged by the application but not verified", atKill.app(), peer.got);
        Integrity.SeqSet lost = atKill.flush().minus(delivered(peer, slots));
        if (!lost.isEmpty()) {
            StringBuilder where = new StringBuilder();
            for (long seq : lost.toArray()) {
                where.append(" seq ").append(seq).append(" went to slot ").append(hub.putSlots.get(seq)).append(';');
            }
            out.add("acknowledged by flush but neither verified nor in its slot: " + lost.sample(6) + ";" + where
                    + " the slots hold " + slots.slots());
        }
        Integrity.SeqSet unprinted = atKill.sync().minus(peer.got);
        if (unprinted.size() > postedReceives) {
            out.add(unprinted.size() + " sync-acknowledged messages were never verified (at most " + postedReceives
                    + " may have been matched just before the kill): " + unprinted.sample(6));
        }
        return out;
    }

    /** What reached the killed receiver: verified, or intact in a slot. */
    static Integrity.SeqSet delivered(Integrity.Lines.Channel peer, Integrity.SlotScan slots) {
        Integrity.SeqSet in = peer.got.copy();
        in.addAll(slots.intact());
        return in;
    }

    /**
     * Flush acknowledgements the hub saw only after the kill, for puts that never reached the peer: not a violation
     * (the peer was dead), but what UCX reported as flushed. Counted for the record.
     */
    static Integrity.SeqSet flushedAfterKillButLost(IntegritySender hub, IntegritySender.Acked atKill,
                                                    Integrity.Lines.Channel peer, Integrity.SlotScan slots) {
        return hub.flushAcked.minus(atKill.flush()).minus(delivered(peer, slots));
    }
}
