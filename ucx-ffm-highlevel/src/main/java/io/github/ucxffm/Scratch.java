package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucp_tag_recv_info;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_FLAGS;
import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_RECV_INFO;
import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
import static io.github.ucxffm.bindings.ucx_h.UCP_STREAM_RECV_FLAG_WAITALL;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Per-thread scratch of one worker: the request parameters and receive-information structs every operation reuses
 * so that starting one allocates nothing, and the results ({@link #receivedTag}, {@link #receivedLength}) of the
 * last receive the thread completed. A worker has one (non-MULTI) or one per thread (MULTI); see {@link Source}.
 */
final class Scratch {

    final MemorySegment param;
    final MemorySegment tagInfo;
    final MemorySegment length;
    /** Raw addresses of the above, and of parameter structs filled once and never written again. */
    final long tagInfoAddress;
    final long lengthAddress;
    /** No field set: a polled operation without flags. */
    final long plainParam;
    /** No immediate completion: a polled tag receive posted when no matching message had arrived. */
    final long tagRecvParam;
    /**
     * Receive information into {@link #tagInfo}: a polled tag receive on a UCX that reports it on immediate
     * completion ({@link UcxVersion.Capability#TAG_RECV_INFO_ON_IMMEDIATE_COMPLETION}).
     */
    final long tagRecvInfoParam;
    /** Flags 0, and {@code UCP_STREAM_RECV_FLAG_WAITALL}: polled stream receives. */
    final long streamRecvParam;
    final long streamRecvAllParam;
    /** Flags only; the flags field is written per call: polled active-message sends. */
    final MemorySegment amSendParam;
    /** A {@code struct pollfd} for sleeping on the worker's event fd ({@code Idle.BLOCK}). */
    final MemorySegment pollFd;
    long receivedTag;
    long receivedLength;

    Scratch(Arena arena) {
        param = ucp_request_param_t.allocate(arena);
        tagInfo = ucp_tag_recv_info.allocate(arena);
        length = arena.allocate(JAVA_LONG);
        tagInfoAddress = tagInfo.address();
        lengthAddress = length.address();
        plainParam = ucp_request_param_t.allocate(arena).address();
        MemorySegment tagRecv = ucp_request_param_t.allocate(arena);
        ucp_request_param_t.op_attr_mask(tagRecv, UCP_OP_ATTR_FLAG_NO_IMM_CMPL());
        tagRecvParam = tagRecv.address();
        MemorySegment tagRecvInfo = ucp_request_param_t.allocate(arena);
        ucp_request_param_t.op_attr_mask(tagRecvInfo, UCP_OP_ATTR_FIELD_RECV_INFO());
        tagRecvInfo.set(ADDRESS, ucp_request_param_t.recv_info$offset(), tagInfo);
        tagRecvInfoParam = tagRecvInfo.address();
        streamRecvParam = flagsParam(arena, 0).address();
        streamRecvAllParam = flagsParam(arena, UCP_STREAM_RECV_FLAG_WAITALL()).address();
        amSendParam = flagsParam(arena, 0);
        pollFd = Libc.pollFd(arena);
    }

    private static MemorySegment flagsParam(Arena arena, int flags) {
        MemorySegment p = ucp_request_param_t.allocate(arena);
        ucp_request_param_t.op_attr_mask(p, UCP_OP_ATTR_FIELD_FLAGS());
        ucp_request_param_t.flags(p, flags);
        return p;
    }

    /** The parameter struct for the next operation, with every field this layer uses cleared. */
    MemorySegment clearedParam() {
        param.fill((byte) 0);
        return param;
    }

    /** Records what the receive just completed delivered, for {@link UcpWorker#receivedTag()} and length. */
    void received(long tag, long bytes) {
        receivedTag = tag;
        receivedLength = bytes;
    }

    /**
     * Where a worker's threads find their scratch: one shared instance when one thread at a time uses the worker,
     * one per thread for a MULTI worker. The structs live in the worker's arena and go with it.
     */
    static final class Source {
        private final Scratch single;
        private final ThreadLocal<Scratch> perThread;

        Source(Arena arena, boolean perThread) {
            this.single = new Scratch(arena);
            this.perThread = perThread ? ThreadLocal.withInitial(() -> new Scratch(arena)) : null;
        }

        Scratch get() {
            return perThread == null ? single : perThread.get();
        }
    }
}
