package io.github.ucxffm;

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The request-polling calls with the request passed as a raw address ({@code long}) instead of a
 * {@link MemorySegment}: the same symbols as the generated bindings, with a pointer parameter declared as a 64-bit
 * integer, which the C ABI passes identically on the 64-bit platforms UCX supports. They sit in every wait loop, so
 * they must not allocate.
 */
final class RawCalls {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle CHECK_STATUS = LINKER.downcallHandle(ucx_h.ucp_request_check_status$address(),
            FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG));
    private static final MethodHandle TAG_RECV_TEST = LINKER.downcallHandle(ucx_h.ucp_tag_recv_request_test$address(),
            FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG, ADDRESS));
    private static final MethodHandle STREAM_RECV_TEST = LINKER.downcallHandle(
            ucx_h.ucp_stream_recv_request_test$address(), FunctionDescriptor.of(JAVA_BYTE, JAVA_LONG, ADDRESS));
    private static final MethodHandle FREE = LINKER.downcallHandle(ucx_h.ucp_request_free$address(),
            FunctionDescriptor.ofVoid(JAVA_LONG));

    static {
        if (ADDRESS.byteSize() != 8) {
            throw new ExceptionInInitializerError("ucx-ffm needs 64-bit pointers");
        }
    }

    private RawCalls() {
    }

    private static RuntimeException unexpected(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    static byte checkStatus(long request) {
        try {
            return (byte) CHECK_STATUS.invokeExact(request);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static byte tagRecvTest(long request, MemorySegment info) {
        try {
            return (byte) TAG_RECV_TEST.invokeExact(request, info);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static byte streamRecvTest(long request, MemorySegment length) {
        try {
            return (byte) STREAM_RECV_TEST.invokeExact(request, length);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    static void free(long request) {
        try {
            FREE.invokeExact(request);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }
}
