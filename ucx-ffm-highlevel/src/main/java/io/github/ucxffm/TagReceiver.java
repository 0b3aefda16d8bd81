package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucp_tag_recv_info;
import io.github.ucxffm.bindings.support.UcpInline;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_DATATYPE;
import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_RECV_INFO;
import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
import static io.github.ucxffm.bindings.ucx_h.UCS_ERR_LAST;
import static io.github.ucxffm.bindings.ucx_h.ucp_tag_msg_recv_nbx;
import static io.github.ucxffm.bindings.ucx_h.ucp_tag_probe_nb;
import static io.github.ucxffm.bindings.ucx_h.ucp_tag_recv_nbx;
import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * The bodies of a worker's tag receives and probes ({@link UcpWorker#receiveTag} and friends), which differ by UCX
 * release: 1.13 leaves the receive information unwritten when a receive completes at once, newer releases write it.
 * The worker checks its state and the thread first and passes its native handle.
 */
final class TagReceiver {

    private static final String OP = "ucp_tag_recv_nbx";

    /** See {@link UcxVersion.Capability#TAG_RECV_INFO_ON_IMMEDIATE_COMPLETION}; constant-folded by the JIT. */
    private static final boolean RECV_INFO_ON_IMMEDIATE_COMPLETION =
            UcxVersion.runtime().has(UcxVersion.Capability.TAG_RECV_INFO_ON_IMMEDIATE_COMPLETION);

    private final RequestTable requests;
    private final Scratch.Source scratch;
    private final MemorySegment stub;
    private final boolean critical;

    TagReceiver(RequestTable requests, Scratch.Source scratch, MemorySegment tagRecvStub, boolean critical) {
        this.requests = requests;
        this.scratch = scratch;
        this.stub = tagRecvStub;
        this.critical = critical;
    }

    /** A polled receive; never {@link UcpWorker#COMPLETED}: a message taken at once gets an odd token. */
    long receive(long h, MemorySegment buffer, long offset, long length, long tag, long tagMask) {
        Buffers.checkRange(buffer, offset, length);
        Scratch s = scratch.get();
        long at = buffer.address() + offset;
        if (RECV_INFO_ON_IMMEDIATE_COMPLETION) {
            // One call: a message that had arrived is received at once and its tag and length are in tagInfo.
            long result = RawCalls.tagRecv(requests.quiet(), h, at, length, tag, tagMask, s.tagRecvInfoParam);
            // done (0) or failed at once (truncated; poll() reports it): either way no request is involved
            if (result == 0 || Long.compareUnsigned(result, UCS_ERR_LAST()) >= 0) {
                return requests.completedReceive(OP, ucp_tag_recv_info.length(s.tagInfo),
                        ucp_tag_recv_info.sender_tag(s.tagInfo), (byte) result);
            }
            return requests.startedPolled(result, RequestTable.TAG_RECV, OP, null, buffer, null);
        }
        // UCX 1.13 leaves recv_info unwritten when a receive matches an arrived message at once, so the tag and
        // length of such a message would be lost. Take an arrived message with a probe instead, which reports
        // them, and receive it; post a receive only when none has arrived (no progress runs in between, so none
        // can have arrived meanwhile on this thread; one that another thread's progress delivers is matched by the
        // receive, which then completes through its request like any other).
        long message = RawCalls.tagProbe(critical, h, tag, tagMask, 1, s.tagInfoAddress);
        if (message != 0) {
            long result = RawCalls.tagMessageRecv(requests.quiet(), h, at, length, message, s.plainParam);
            long arrivedLength = ucp_tag_recv_info.length(s.tagInfo);
            long arrivedTag = ucp_tag_recv_info.sender_tag(s.tagInfo);
            if (result == 0 || Long.compareUnsigned(result, UCS_ERR_LAST()) >= 0) { // failed at once: poll() says
                return requests.completedReceive(OP, arrivedLength, arrivedTag, (byte) result);
            }
            return requests.startedPolled(result, RequestTable.TAG_RECV, OP, null, buffer, null);
        }
        long result = RawCalls.tagRecv(requests.quiet(), h, at, length, tag, tagMask, s.tagRecvParam);
        return requests.startedPolled(result, RequestTable.TAG_RECV, OP, null, buffer, null);
    }

    /** A receive completed through {@code callback} or {@code future}, exactly one of them non-null. */
    void receive(MemorySegment h, MemorySegment buffer, long offset, long length, long tag, long tagMask,
                 UcpCallback callback, CompletableFuture<Long> future) {
        Buffers.checkRange(buffer, offset, length);
        MemorySegment param = scratch.get().clearedParam();
        int slot = requests.reserveCompletion(RequestTable.TAG_RECV, OP, null, buffer, null, null, callback, future, 0);
        // No immediate completion (recv_info would stay unwritten): UCX calls the callback, with the tag and
        // length, before ucp_tag_recv_nbx returns
        requests.callbackParams(param, UCP_OP_ATTR_FLAG_NO_IMM_CMPL(), stub, slot);
        MemorySegment result = ucp_tag_recv_nbx(h, Buffers.at(buffer, offset), length, tag, tagMask, param);
        requests.startedWithCallback(result, slot, 0, 0);
    }

    /** A polled receive scattered over {@code list}, which the slot owns from here on. */
    long receive(MemorySegment h, IovList list, long tag, long tagMask) {
        MemorySegment param = scratch.get().clearedParam();
        // no immediate completion, as for the contiguous form: poll() reads the tag and length from the request
        ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_DATATYPE() | UCP_OP_ATTR_FLAG_NO_IMM_CMPL());
        ucp_request_param_t.datatype(param, UcpInline.ucp_dt_make_iov());
        int slot = requests.reserve(RequestTable.TAG_RECV, OP, null, null, list);
        return requests.started(ucp_tag_recv_nbx(h, list.array(), list.count(), tag, tagMask, param), slot);
    }

    /** {@code ucp_tag_probe_nb}; a message found is described in the thread's scratch. */
    long probe(MemorySegment h, long tag, long tagMask, boolean remove) {
        Scratch s = scratch.get();
        MemorySegment message = ucp_tag_probe_nb(h, tag, tagMask, remove ? 1 : 0, s.tagInfo);
        if (message.address() != 0) {
            s.received(ucp_tag_recv_info.sender_tag(s.tagInfo), ucp_tag_recv_info.length(s.tagInfo));
        }
        return message.address();
    }

    /** {@code ucp_tag_msg_recv_nbx} of a message a probe removed. */
    long receiveMessage(MemorySegment h, long message, MemorySegment buffer, long offset, long length) {
        if (message == 0) {
            throw new IllegalArgumentException("no message: probeTag found nothing");
        }
        Buffers.checkRange(buffer, offset, length);
        Scratch s = scratch.get();
        MemorySegment param = s.clearedParam();
        ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_RECV_INFO());
        param.set(ADDRESS, ucp_request_param_t.recv_info$offset(), s.tagInfo);
        int slot = requests.reserve(RequestTable.TAG_RECV, "ucp_tag_msg_recv_nbx", null, buffer, null);
        return requests.started(ucp_tag_msg_recv_nbx(h, Buffers.at(buffer, offset), length,
                MemorySegment.ofAddress(message), param), slot);
    }
}
