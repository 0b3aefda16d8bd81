package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_request_param_t;
import io.github.ucxffm.bindings.ucp_tag_recv_info;
import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.TestSupport.progressUntil;
import static io.github.ucxffm.bindings.ucx_h.UCP_OP_ATTR_FIELD_RECV_INFO;
import static io.github.ucxffm.bindings.ucx_h.ucp_tag_recv_nbx;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release-dependent behaviours of {@link UcxVersion.Capability} hold for the UCX this runs on: each test asks
 * UCX directly, so a capability table that claims a behaviour the loaded release lacks (or misses one it has) fails
 * here, on the release of the matrix where it is wrong.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CapabilityTest extends TwoWorkerTest {

    private static final long POISON = 0x5a5a5a5a5a5a5a5aL;

    CapabilityTest() {
        super(false, UcpContext.Feature.TAG);
    }

    @Test
    void shouldReportReceiveInfoOnImmediateCompletionExactlyWhereTheCapabilityTableSays() {
        MemorySegment src = BytePattern.allocate(arena, 24, 7);
        long send = ab.sendTag(src, 0, 24, 0x77);
        progressUntil(() -> b.probeTag(0x77, -1L, false) != 0, 10_000, a, b);
        progressUntil(() -> a.poll(send), 10_000, a, b);

        MemorySegment info = ucp_tag_recv_info.allocate(arena);
        info.fill((byte) 0x5a);
        MemorySegment param = ucp_request_param_t.allocate(arena);
        ucp_request_param_t.op_attr_mask(param, UCP_OP_ATTR_FIELD_RECV_INFO());
        param.set(ADDRESS, ucp_request_param_t.recv_info$offset(), info);
        MemorySegment dst = arena.allocate(64);
        MemorySegment result = ucp_tag_recv_nbx(b.handle(), dst, 64, 0x77, -1L, param);

        assertEquals(0, result.address(), "a message that had arrived is received at once");
        assertEquals(src.asSlice(0, 24).mismatch(dst.asSlice(0, 24)), -1L, "received bytes");
        boolean written = ucp_tag_recv_info.sender_tag(info) == 0x77 && ucp_tag_recv_info.length(info) == 24;
        boolean untouched = ucp_tag_recv_info.sender_tag(info) == POISON && ucp_tag_recv_info.length(info) == POISON;
        UcxVersion v = UcxVersion.runtime();
        boolean claimed = v.has(UcxVersion.Capability.TAG_RECV_INFO_ON_IMMEDIATE_COMPLETION);
        System.out.println("UCX " + v + ": recv_info on immediate completion "
                + (written ? "written" : untouched ? "left unwritten" : "garbled") + "; ucx-ffm "
                + (claimed ? "uses the one-call receive" : "probes first"));
        assertTrue(written || untouched, "recv_info is either filled or left alone, not garbled: tag "
                + Long.toHexString(ucp_tag_recv_info.sender_tag(info)) + " length " + ucp_tag_recv_info.length(info));
        assertEquals(claimed, written, "UCX " + v + " " + (written ? "fills" : "does not fill")
                + " recv_info on immediate completion, but the capability table says the opposite");
        assertEquals((byte) 0, dst.get(JAVA_BYTE, 24), "nothing written past the message");
    }
}
