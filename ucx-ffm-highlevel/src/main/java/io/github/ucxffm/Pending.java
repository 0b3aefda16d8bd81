package io.github.ucxffm;

import java.util.concurrent.CompletableFuture;

/**
 * Book-keeping for one operation in flight: what it keeps alive and how its completion is delivered. Instances are
 * pooled per worker, so that starting and completing operations allocates nothing.
 */
final class Pending {

    /** Kinds, for the receive information to collect and the name in error messages. */
    static final byte SEND = 0;
    static final byte TAG_RECV = 1;
    static final byte STREAM_RECV = 2;
    static final byte AM_RECV = 3;
    static final byte OTHER = 4;
    /** A receive that completed when posted; its result waits for poll() (no UCX request). */
    static final byte DONE = 5;

    final int id;
    /** The UCX request of a polled operation in flight; 0 otherwise. */
    long request;
    /**
     * The token the application polls this slot with: even for a polled operation in flight, odd for a receive
     * that completed when posted; 0 for a free slot or a callback or future operation.
     */
    long token;
    byte kind;
    /** The native call that started the operation, for error messages. */
    String op;
    /** Buffers and objects the operation uses; strongly reachable until completion. */
    Object keep1;
    Object keep2;
    UcpMemory memory;
    UcpEndpoint endpoint;
    UcpCallback callback;
    CompletableFuture<Long> future;
    /** Whether UCX was given an upcall stub for this operation (counted by {@code RequestTable.quiet()}). */
    boolean upcall;
    /** Set by the completion upcall when the application polls instead (callback ops polled for cancel). */
    boolean completed;
    int status;
    long length;
    long tag;

    Pending(int id) {
        this.id = id;
    }

    void clear() {
        request = 0;
        token = 0;
        kind = SEND;
        op = null;
        keep1 = null;
        keep2 = null;
        memory = null;
        endpoint = null;
        callback = null;
        future = null;
        upcall = false;
        completed = false;
        status = 0;
        length = 0;
        tag = 0;
    }
}
