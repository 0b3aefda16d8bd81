package io.github.ucxffm.bindings;

import io.github.ucxffm.bindings.support.UcpInline;
import io.github.ucxffm.bindings.support.UcsMacros;
import io.github.ucxffm.testsupport.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UCP through the raw generated layer alone: what a user of jextract-style bindings writes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcpSmokeTest {

    private static final Linker LINKER = Linker.nativeLinker();

    static void ok(byte status, String call) {
        assertEquals(UCS_OK(), status, () -> call + " failed: "
                + ucs_status_string(status).reinterpret(256).getString(0));
    }

    @Test
    void shouldReportTheInstalledVersion() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT, 3);
            ucp_get_version(v, v.asSlice(4), v.asSlice(8));
            String text = ucp_get_version_string().getString(0);
            assertEquals(text, v.getAtIndex(JAVA_INT, 0) + "." + v.getAtIndex(JAVA_INT, 1) + "."
                    + v.getAtIndex(JAVA_INT, 2));
            assertEquals(1, v.getAtIndex(JAVA_INT, 0));
            assertTrue(v.getAtIndex(JAVA_INT, 1) >= 13, "UCX 1.13 or newer: " + text);
        }
    }

    @Test
    void shouldPrintConfigurationIntoAJavaString() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment configP = arena.allocate(ADDRESS);
            ok(ucp_config_read(MemorySegment.NULL, MemorySegment.NULL, configP), "ucp_config_read");
            MemorySegment config = configP.get(ADDRESS, 0);
            try {
                ok(ucp_config_modify(config, arena.allocateFrom("TLS"), arena.allocateFrom("self,tcp")),
                        "ucp_config_modify");
                String printed = printToString(arena, stream -> ucp_config_print(config, stream,
                        arena.allocateFrom("smoke"), UCS_CONFIG_PRINT_CONFIG()));
                assertTrue(printed.contains("UCX_TLS=self,tcp"), printed);
                assertTrue(printed.lines().count() > 20, printed);
            } finally {
                ucp_config_release(config);
            }
        }
    }

    /** Runs {@code print} with a libc FILE* backed by memory and returns what was written to it. */
    static String printToString(Arena arena, java.util.function.Consumer<MemorySegment> print) throws Throwable {
        MethodHandle openMemstream = LINKER.downcallHandle(LINKER.defaultLookup().find("open_memstream").orElseThrow(),
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        MethodHandle fclose = LINKER.downcallHandle(LINKER.defaultLookup().find("fclose").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
        MethodHandle free = LINKER.downcallHandle(LINKER.defaultLookup().find("free").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS));
        MemorySegment bufP = arena.allocate(ADDRESS);
        MemorySegment sizeP = arena.allocate(JAVA_LONG);
        MemorySegment stream = (MemorySegment) openMemstream.invokeExact(bufP, sizeP);
        assertNotEquals(MemorySegment.NULL, stream);
        print.accept(stream);
        assertEquals(0, (int) fclose.invokeExact(stream));
        MemorySegment buf = bufP.get(ADDRESS, 0);
        String s = new String(buf.reinterpret(sizeP.get(JAVA_LONG, 0)).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
        free.invokeExact(buf);
        return s;
    }

    static MemorySegment init(Arena arena, long features) {
        MemorySegment params = ucp_params_t.allocate(arena);
        ucp_params.field_mask(params, UCP_PARAM_FIELD_FEATURES());
        ucp_params.features(params, features);
        MemorySegment contextP = arena.allocate(ADDRESS);
        ok(UcpInline.ucp_init(params, MemorySegment.NULL, contextP), "ucp_init");
        return contextP.get(ADDRESS, 0);
    }

    static MemorySegment worker(Arena arena, MemorySegment context) {
        MemorySegment wp = ucp_worker_params_t.allocate(arena);
        ucp_worker_params.field_mask(wp, UCP_WORKER_PARAM_FIELD_THREAD_MODE());
        ucp_worker_params.thread_mode(wp, UCS_THREAD_MODE_SINGLE());
        MemorySegment workerP = arena.allocate(ADDRESS);
        ok(ucp_worker_create(context, wp, workerP), "ucp_worker_create");
        return workerP.get(ADDRESS, 0);
    }

    /** The worker's address, copied into {@code arena}. */
    static MemorySegment address(Arena arena, MemorySegment worker) {
        MemorySegment attr = ucp_worker_attr_t.allocate(arena);
        ucp_worker_attr.field_mask(attr, UCP_WORKER_ATTR_FIELD_ADDRESS());
        ok(ucp_worker_query(worker, attr), "ucp_worker_query");
        long length = ucp_worker_attr.address_length(attr);
        MemorySegment native_ = ucp_worker_attr.address(attr).reinterpret(length);
        MemorySegment copy = arena.allocate(length);
        copy.copyFrom(native_);
        ucp_worker_release_address(worker, ucp_worker_attr.address(attr));
        return copy;
    }

    @Test
    void shouldCreateQueryProgressAndDestroyAWorker() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment context = init(arena, UCP_FEATURE_TAG());
            MemorySegment worker = worker(arena, context);
            MemorySegment address = address(arena, worker);
            assertTrue(address.byteSize() > 8, "worker address of " + address.byteSize() + " bytes");
            int work = 0;
            for (int i = 0; i < 100; i++) {
                work += ucp_worker_progress(worker);
            }
            assertTrue(work >= 0);
            MemorySegment cattr = ucp_context_attr_t.allocate(arena);
            ucp_context_attr.field_mask(cattr, UCP_ATTR_FIELD_REQUEST_SIZE() | UCP_ATTR_FIELD_THREAD_MODE());
            ok(ucp_context_query(context, cattr), "ucp_context_query");
            assertTrue(ucp_context_attr.request_size(cattr) > 0);
            ucp_worker_destroy(worker);
            ucp_cleanup(context);
        }
    }

    @Test
    void shouldExchangeOneTagMessageBetweenTwoWorkers() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment context = init(arena, UCP_FEATURE_TAG());
            MemorySegment sender = worker(arena, context);
            MemorySegment receiver = worker(arena, context);
            MemorySegment receiverAddress = address(arena, receiver);

            MemorySegment ep = connect(arena, sender, receiverAddress);

            byte[] payload = "hello from the raw bindings".getBytes(StandardCharsets.US_ASCII);
            MemorySegment sendBuf = arena.allocate(payload.length);
            sendBuf.copyFrom(MemorySegment.ofArray(payload));
            MemorySegment recvBuf = arena.allocate(64);
            long tag = 0x1234_5678_9abc_def0L;

            MemorySegment param = ucp_request_param_t.allocate(arena); // op_attr_mask 0: no callback, polled
            MemorySegment recv = ucp_tag_recv_nbx(receiver, recvBuf, recvBuf.byteSize(), tag, -1L, param);
            assertFalse(UcsMacros.UCS_PTR_IS_ERR(recv), "ucp_tag_recv_nbx");
            MemorySegment send = ucp_tag_send_nbx(ep, sendBuf, payload.length, tag, param);
            assertFalse(UcsMacros.UCS_PTR_IS_ERR(send), "ucp_tag_send_nbx");

            MemorySegment info = ucp_tag_recv_info_t.allocate(arena);
            Await.until("tag message delivered", Duration.ofSeconds(20), () -> {
                ucp_worker_progress(sender);
                ucp_worker_progress(receiver);
            }, () -> (!UcsMacros.UCS_PTR_IS_PTR(send) || ucp_request_check_status(send) != UCS_INPROGRESS())
                    && UcsMacros.UCS_PTR_IS_PTR(recv) && ucp_tag_recv_request_test(recv, info) != UCS_INPROGRESS());
            if (UcsMacros.UCS_PTR_IS_PTR(send)) {
                ok(ucp_request_check_status(send), "send");
                ucp_request_free(send);
            }
            ok(ucp_request_check_status(recv), "receive");
            ucp_request_free(recv);
            assertEquals(tag, ucp_tag_recv_info.sender_tag(info));
            assertEquals(payload.length, ucp_tag_recv_info.length(info));
            assertArrayEquals(payload, recvBuf.asSlice(0, payload.length).toArray(JAVA_BYTE));

            close(arena, ep, sender, receiver);
            ucp_worker_destroy(sender);
            ucp_worker_destroy(receiver);
            ucp_cleanup(context);
        }
    }

    static MemorySegment connect(Arena arena, MemorySegment worker, MemorySegment remoteAddress) {
        MemorySegment epParams = ucp_ep_params_t.allocate(arena);
        ucp_ep_params.field_mask(epParams, UCP_EP_PARAM_FIELD_REMOTE_ADDRESS());
        ucp_ep_params.address(epParams, remoteAddress);
        MemorySegment epP = arena.allocate(ADDRESS);
        ok(ucp_ep_create(worker, epParams, epP), "ucp_ep_create");
        return epP.get(ADDRESS, 0);
    }

    static void close(Arena arena, MemorySegment ep, MemorySegment... workers) {
        MemorySegment param = ucp_request_param_t.allocate(arena); // no flags: flush, then close
        MemorySegment close = ucp_ep_close_nbx(ep, param);
        assertFalse(UcsMacros.UCS_PTR_IS_ERR(close), () -> "ucp_ep_close_nbx: "
                + ucs_status_string(UcsMacros.UCS_PTR_STATUS(close)).reinterpret(256).getString(0));
        Await.until("endpoint close complete", Duration.ofSeconds(10), () -> {
            for (MemorySegment w : workers) {
                ucp_worker_progress(w);
            }
        }, () -> !UcsMacros.UCS_PTR_IS_PTR(close) || ucp_request_check_status(close) != UCS_INPROGRESS());
        if (UcsMacros.UCS_PTR_IS_PTR(close)) {
            ucp_request_free(close);
        }
    }
}
