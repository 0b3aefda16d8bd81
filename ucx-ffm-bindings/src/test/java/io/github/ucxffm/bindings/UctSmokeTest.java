package io.github.ucxffm.bindings;

import io.github.ucxffm.bindings.support.UctInline;
import io.github.ucxffm.testsupport.BytePattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What UCX's {@code uct_hello_world} example does, through the raw layer only: an async context, a worker, the
 * "posix" shared-memory transport (or "self"/"tcp" when it is missing), an interface whose endpoint is connected
 * to the interface itself, and data-path calls made through {@link UctInline}, the Java form of uct.h's
 * {@code static inline} functions.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UctSmokeTest {

    private static final byte AM_ID = 17;
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final byte OK = (byte) ucx_h.UCS_OK();
    private static final byte INPROGRESS = (byte) ucx_h.UCS_INPROGRESS();
    private static final List<String> PREFERRED_MDS = List.of("posix", "self", "tcp");

    @Test
    void shouldDeliverAmShortToItselfThroughInlineDispatch() {
        try (Loopback loop = new Loopback()) {
            loop.requireCap(ucx_h.UCT_IFACE_FLAG_AM_SHORT(), "AM_SHORT");
            long header = 0x0123_4567_89AB_CDEFL;
            byte[] payload = "hello from UctInline".getBytes(StandardCharsets.US_ASCII);
            MemorySegment buffer = loop.arena.allocateFrom(JAVA_BYTE, payload);

            byte status = (byte) loop.whenResourcesAllow(
                    () -> UctInline.uct_ep_am_short(loop.ep, AM_ID, header, buffer, payload.length));
            assertStatus(OK, status, "uct_ep_am_short");

            Received message = loop.awaitMessageThroughWorker();
            assertEquals(Long.BYTES + payload.length, message.data.length, "header + payload length");
            ByteBuffer data = ByteBuffer.wrap(message.data).order(ByteOrder.nativeOrder());
            assertEquals(header, data.getLong(), "the uint64 header arrives as the first 8 bytes");
            assertArrayEquals(payload, Arrays.copyOfRange(message.data, Long.BYTES, message.data.length));
            assertEquals(0, message.flags & ucx_h.UCT_CB_PARAM_FLAG_DESC(), "a short message is not a descriptor");
        }
    }

    @Test
    void shouldDeliverAmBcopyPackedByUpcallAndReleaseTheKeptDescriptor() {
        try (Loopback loop = new Loopback()) {
            loop.requireCap(ucx_h.UCT_IFACE_FLAG_AM_BCOPY(), "AM_BCOPY");
            byte[] payload = BytePattern.bytes(3, 0, 1000);
            AtomicInteger packCalls = new AtomicInteger();
            List<Throwable> packFailures = new ArrayList<>();
            MemorySegment packCb = uct_pack_callback_t.allocate((dest, arg) -> {
                try {
                    packCalls.incrementAndGet();
                    MemorySegment.copy(payload, 0, dest.reinterpret(payload.length), JAVA_BYTE, 0, payload.length);
                    return payload.length;
                } catch (Throwable t) {
                    packFailures.add(t);
                    return 0;
                }
            }, loop.arena);
            loop.keepDescriptors = true;

            long packed = loop.whenResourcesAllow(
                    () -> UctInline.uct_ep_am_bcopy(loop.ep, AM_ID, packCb, MemorySegment.NULL, 0));
            assertEquals(payload.length, packed, "uct_ep_am_bcopy returns the packed length");
            assertEquals(1, packCalls.get(), "the pack upcall runs once, inside the successful send");
            assertTrue(packFailures.isEmpty(), () -> "pack upcall failed: " + packFailures);

            Received message = loop.awaitMessageThroughWorker();
            assertArrayEquals(payload, message.data);
            if (loop.mdName.equals("posix")) {
                assertNotEquals(0, message.flags & ucx_h.UCT_CB_PARAM_FLAG_DESC(),
                        "posix delivers bcopy messages in receive descriptors");
            }
            if ((message.flags & ucx_h.UCT_CB_PARAM_FLAG_DESC()) != 0) {
                // The handler kept the descriptor (returned UCS_INPROGRESS): give it back through the inline
                // function, which calls the uct_recv_desc_t stored just before the data.
                assertNotNull(message.keptDescriptor);
                assertArrayEquals(payload, message.keptDescriptor.reinterpret(payload.length).toArray(JAVA_BYTE),
                        "a kept descriptor stays readable until released");
                UctInline.uct_iface_release_desc(message.keptDescriptor);
            }

            // The interface keeps working after the release.
            loop.keepDescriptors = false;
            assertEquals(payload.length, loop.whenResourcesAllow(
                    () -> UctInline.uct_ep_am_bcopy(loop.ep, AM_ID, packCb, MemorySegment.NULL, 0)));
            assertArrayEquals(payload, loop.awaitMessageThroughWorker().data);
        }
    }

    @Test
    void shouldWriteAndUpdateRemoteMemoryWithPutShortAndAtomics() {
        try (Loopback loop = new Loopback()) {
            loop.requireCap(ucx_h.UCT_IFACE_FLAG_PUT_SHORT(), "PUT_SHORT");
            loop.requireCap(ucx_h.UCT_IFACE_FLAG_ATOMIC_CPU(), "ATOMIC_CPU");
            RemoteMemory remote = loop.remoteMemory(4096);
            MemorySegment target = remote.local;

            byte[] pattern = BytePattern.bytes(0xA0, 0, 48);
            MemorySegment source = loop.arena.allocateFrom(JAVA_BYTE, pattern);
            assertStatus(OK, UctInline.uct_ep_put_short(loop.ep, source, pattern.length, remote.address, remote.rkey),
                    "uct_ep_put_short");
            loop.flushEp();
            assertArrayEquals(pattern, target.asSlice(0, pattern.length).toArray(JAVA_BYTE), "put_short data");

            long word64 = 256;
            target.set(JAVA_LONG, word64, 37L);
            assertStatus(OK, UctInline.uct_ep_atomic64_post(loop.ep, ucx_h.UCT_ATOMIC_OP_ADD(), 5L,
                    remote.address + word64, remote.rkey), "uct_ep_atomic64_post");
            loop.flushEp();
            assertEquals(42L, target.get(JAVA_LONG, word64), "37 + 5");

            MemorySegment result64 = loop.arena.allocate(JAVA_LONG);
            byte status = UctInline.uct_ep_atomic_cswap64(loop.ep, 42L, 1_000_000_000_000L,
                    remote.address + word64, remote.rkey, result64, MemorySegment.NULL);
            assertStatus(OK, status, "uct_ep_atomic_cswap64");
            assertEquals(42L, result64.get(JAVA_LONG, 0), "cswap64 returns the old value");
            assertEquals(1_000_000_000_000L, target.get(JAVA_LONG, word64), "cswap64 swapped");

            // ADD and SWAP only: the fetching AND/OR/XOR of the Debian libuct 1.13.1 shared-memory transport
            // are miscompiled (their compare-and-swap loop stores a constant), whatever the caller.
            status = UctInline.uct_ep_atomic64_fetch(loop.ep, ucx_h.UCT_ATOMIC_OP_SWAP(), -2L, result64,
                    remote.address + word64, remote.rkey, MemorySegment.NULL);
            assertStatus(OK, status, "uct_ep_atomic64_fetch");
            assertEquals(1_000_000_000_000L, result64.get(JAVA_LONG, 0), "fetch returns the old value");
            assertEquals(-2L, target.get(JAVA_LONG, word64), "swapped");

            long word32 = 512;
            target.set(JAVA_INT, word32, 7);
            MemorySegment result32 = loop.arena.allocate(JAVA_INT);
            status = UctInline.uct_ep_atomic32_fetch(loop.ep, ucx_h.UCT_ATOMIC_OP_ADD(), 3, result32,
                    remote.address + word32, remote.rkey, MemorySegment.NULL);
            assertStatus(OK, status, "uct_ep_atomic32_fetch");
            assertEquals(7, result32.get(JAVA_INT, 0));
            assertEquals(10, target.get(JAVA_INT, word32));

            assertStatus(OK, UctInline.uct_ep_atomic32_post(loop.ep, ucx_h.UCT_ATOMIC_OP_ADD(), 0x100,
                    remote.address + word32, remote.rkey), "uct_ep_atomic32_post");
            status = UctInline.uct_ep_atomic_cswap32(loop.ep, 0x10A, 0xCAFE, remote.address + word32, remote.rkey,
                    result32, MemorySegment.NULL);
            assertStatus(OK, status, "uct_ep_atomic_cswap32");
            assertEquals(0x10A, result32.get(JAVA_INT, 0), "10 + 0x100, seen by cswap32");
            loop.flushEp();
            assertEquals(0xCAFE, target.get(JAVA_INT, word32));
        }
    }

    @Test
    void shouldFlushFenceAndProgressThroughInlineDispatch() {
        try (Loopback loop = new Loopback()) {
            loop.requireCap(ucx_h.UCT_IFACE_FLAG_AM_SHORT(), "AM_SHORT");
            assertStatus(OK, UctInline.uct_ep_fence(loop.ep, 0), "uct_ep_fence");
            assertStatus(OK, UctInline.uct_iface_fence(loop.iface, 0), "uct_iface_fence");
            loop.flushEp();
            assertStatus(OK, UctInline.uct_iface_flush(loop.iface, 0, MemorySegment.NULL), "uct_iface_flush");

            // uct_iface_progress drives the interface directly, without the worker's callback queue.
            MemorySegment payload = loop.arena.allocateFrom(JAVA_LONG, 99L);
            assertStatus(OK, (byte) loop.whenResourcesAllow(
                    () -> UctInline.uct_ep_am_short(loop.ep, AM_ID, 7L, payload, Long.BYTES)), "uct_ep_am_short");
            boolean deliveredBySend = !loop.received.isEmpty(); // "self" calls the handler inside the send
            long deadline = System.nanoTime() + WAIT_NANOS;
            int work = 0;
            while (loop.received.isEmpty() && System.nanoTime() < deadline) {
                work += UctInline.uct_iface_progress(loop.iface);
            }
            Received message = loop.takeMessage();
            assertTrue(deliveredBySend || work > 0, "uct_iface_progress reports the work it did");
            ByteBuffer data = ByteBuffer.wrap(message.data).order(ByteOrder.nativeOrder());
            assertEquals(7L, data.getLong());
            assertEquals(99L, data.getLong());
            if (loop.mdName.equals("posix")) {
                assertEquals(0, UctInline.uct_iface_progress(loop.iface), "nothing left to do");
                assertEquals(0, UctInline.uct_worker_progress(loop.worker), "nothing left to do");
            }

            // With free send resources, a pending request is refused (UCS_ERR_BUSY) and nothing is queued.
            if ((loop.capFlags & ucx_h.UCT_IFACE_FLAG_PENDING()) != 0) {
                MemorySegment req = uct_pending_req.allocate(loop.arena);
                uct_pending_req.func(req, uct_pending_callback_t.allocate(self -> OK, loop.arena));
                assertStatus((byte) ucx_h.UCS_ERR_BUSY(), UctInline.uct_ep_pending_add(loop.ep, req, 0),
                        "uct_ep_pending_add with free resources");
                AtomicInteger purged = new AtomicInteger();
                MemorySegment purgeCb = uct_pending_purge_callback_t.allocate((self, arg) -> purged.incrementAndGet(),
                        loop.arena);
                UctInline.uct_ep_pending_purge(loop.ep, purgeCb, MemorySegment.NULL);
                assertEquals(0, purged.get(), "nothing was pending");
            }

            // A completion records the first failure only.
            MemorySegment comp = uct_completion.allocate(loop.arena);
            UctInline.uct_completion_update_status(comp, OK);
            assertEquals(OK, uct_completion.status(comp));
            UctInline.uct_completion_update_status(comp, (byte) ucx_h.UCS_ERR_IO_ERROR());
            UctInline.uct_completion_update_status(comp, (byte) ucx_h.UCS_ERR_NO_RESOURCE());
            assertEquals((byte) ucx_h.UCS_ERR_IO_ERROR(), uct_completion.status(comp));
        }
    }

    /**
     * The interface's progress, registered in the worker's queue by uct_iface_progress_enable, and a callback the
     * test registers next to it, both reached through the Java form of uct_worker_progress. With two elements in
     * the fast array, a walk with another release's element size misses one of them: messages stay undelivered or
     * the callback goes uncounted (or a field that is not a function gets called and the JVM dies).
     */
    @Test
    void shouldProgressTheInterfaceAndARegisteredCallbackThroughTheWorkerQueue() {
        try (Loopback loop = new Loopback()) {
            AtomicInteger callbackRuns = new AtomicInteger();
            MemorySegment callback = ucs_callback_t.allocate(arg -> {
                try {
                    callbackRuns.incrementAndGet();
                } catch (Throwable t) {
                    loop.handlerFailures.add(t);
                }
                return 0; // so that the work uct_worker_progress reports is the interface's alone
            }, loop.arena);
            MemorySegment id = loop.arena.allocateFrom(JAVA_INT, ucx_h.UCS_CALLBACKQ_ID_NULL());
            ucx_h.uct_worker_progress_register_safe(loop.worker, callback, MemorySegment.NULL,
                    ucx_h.UCS_CALLBACKQ_FLAG_FAST(), id);
            loop.cleanups.push(() -> ucx_h.uct_worker_progress_unregister_safe(loop.worker, id));
            // The first dispatch moves "safe" registrations into the fast array (and may run them twice).
            UctInline.uct_worker_progress(loop.worker);

            int messages = 5;
            for (long i = 0; i < messages; i++) {
                MemorySegment payload = loop.arena.allocateFrom(JAVA_LONG, i * i);
                long header = i;
                assertStatus(OK, (byte) loop.whenResourcesAllow(
                        () -> UctInline.uct_ep_am_short(loop.ep, AM_ID, header, payload, Long.BYTES)),
                        "uct_ep_am_short " + i);
            }
            callbackRuns.set(0); // tcp may have progressed the worker to connect
            if (loop.mdName.equals("posix")) {
                assertTrue(loop.received.isEmpty(), "posix delivers in the receiver's progress, not in the send");
            }

            int calls = 0;
            int work = 0;
            long deadline = System.nanoTime() + WAIT_NANOS;
            while ((loop.received.size() < messages || calls < 10) && System.nanoTime() < deadline) {
                work += UctInline.uct_worker_progress(loop.worker);
                calls++;
            }
            assertEquals(calls, callbackRuns.get(), "the registered callback runs once per uct_worker_progress");
            for (long i = 0; i < messages; i++) {
                ByteBuffer data = ByteBuffer.wrap(loop.takeMessage().data).order(ByteOrder.nativeOrder());
                assertEquals(i, data.getLong(), "messages arrive in order");
                assertEquals(i * i, data.getLong());
            }
            if (loop.mdName.equals("posix")) {
                assertTrue(work >= messages, "uct_worker_progress reports the interface's work: " + work);
            }
        }
    }

    private static void assertStatus(byte expected, byte actual, String what) {
        assertEquals(expected, actual, () -> what + " returned " + statusString(actual) + ", expected "
                + statusString(expected));
    }

    private static String statusString(byte status) {
        return status + " (" + ucx_h.ucs_status_string(status).getString(0) + ")";
    }

    private static void check(byte status, String what) {
        if (status != OK) {
            fail(what + " failed: " + statusString(status));
        }
    }

    /** One Active Message as the handler saw it. */
    private record Received(byte[] data, int flags, MemorySegment keptDescriptor) {
    }

    /** Registered or allocated memory as a put/atomic target: its local view, address and unpacked rkey. */
    private record RemoteMemory(MemorySegment local, long address, long rkey) {
    }

    /**
     * The hello-world setup: async context, worker, md, interface and an endpoint connected to that same
     * interface, with an Active Message handler recording what arrives. Closing undoes every step in reverse.
     */
    private static final class Loopback implements AutoCloseable {

        final Arena arena = Arena.ofShared();
        final Deque<Runnable> cleanups = new ArrayDeque<>();
        final ConcurrentLinkedQueue<Received> received = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Throwable> handlerFailures = new ConcurrentLinkedQueue<>();
        volatile boolean keepDescriptors;

        final MemorySegment worker;
        final MemorySegment component;
        final MemorySegment md;
        final MemorySegment iface;
        final MemorySegment ep;
        final String mdName;
        final long capFlags;

        Loopback() {
            cleanups.push(arena::close);
            try {
                MemorySegment out = arena.allocate(ucx_h.C_POINTER);
                MemorySegment count = arena.allocate(JAVA_INT);

                check(ucx_h.ucs_async_context_create(ucx_h.UCS_ASYNC_MODE_THREAD_SPINLOCK(), out),
                        "ucs_async_context_create");
                MemorySegment async = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.ucs_async_context_destroy(async));

                check(ucx_h.uct_worker_create(async, ucx_h.UCS_THREAD_MODE_SINGLE(), out), "uct_worker_create");
                worker = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_worker_destroy(worker));

                check(ucx_h.uct_query_components(out, count), "uct_query_components");
                MemorySegment components = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_release_component_list(components));
                MemorySegment[] chosen = chooseMd(components, count.get(JAVA_INT, 0));
                component = chosen[0];
                mdName = chosen[1].getString(0);

                check(ucx_h.uct_md_config_read(component, MemorySegment.NULL, MemorySegment.NULL, out),
                        "uct_md_config_read");
                MemorySegment mdConfig = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_config_release(mdConfig));

                check(ucx_h.uct_md_open(component, arena.allocateFrom(mdName), mdConfig, out), "uct_md_open");
                md = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_md_close(md));

                check(ucx_h.uct_md_query_tl_resources(md, out, count), "uct_md_query_tl_resources");
                MemorySegment resources = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_release_tl_resource_list(resources));
                MemorySegment resource = chooseResource(resources, count.get(JAVA_INT, 0));
                MemorySegment tlName = arena.allocateFrom(uct_tl_resource_desc.tl_name(resource).getString(0));
                MemorySegment devName = arena.allocateFrom(uct_tl_resource_desc.dev_name(resource).getString(0));

                check(ucx_h.uct_md_iface_config_read(md, tlName, MemorySegment.NULL, MemorySegment.NULL, out),
                        "uct_md_iface_config_read");
                MemorySegment ifaceConfig = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_config_release(ifaceConfig));

                MemorySegment params = uct_iface_params.allocate(arena);
                uct_iface_params.field_mask(params, ucx_h.UCT_IFACE_PARAM_FIELD_OPEN_MODE()
                        | ucx_h.UCT_IFACE_PARAM_FIELD_DEVICE()
                        | ucx_h.UCT_IFACE_PARAM_FIELD_RX_HEADROOM()
                        | ucx_h.UCT_IFACE_PARAM_FIELD_FEATURES());
                uct_iface_params.open_mode(params, ucx_h.UCT_IFACE_OPEN_MODE_DEVICE());
                MemorySegment device = uct_iface_params.mode.device(uct_iface_params.mode(params));
                uct_iface_params.mode.device.tl_name(device, tlName);
                uct_iface_params.mode.device.dev_name(device, devName);
                uct_iface_params.rx_headroom(params, 0);
                uct_iface_params.features(params, ucx_h.UCT_IFACE_FEATURE_AM() | ucx_h.UCT_IFACE_FEATURE_PUT()
                        | ucx_h.UCT_IFACE_FEATURE_GET() | ucx_h.UCT_IFACE_FEATURE_AMO32()
                        | ucx_h.UCT_IFACE_FEATURE_AMO64());
                check(ucx_h.uct_iface_open(md, worker, params, ifaceConfig, out), "uct_iface_open");
                iface = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_iface_close(iface));

                MemorySegment attr = uct_iface_attr.allocate(arena);
                check(ucx_h.uct_iface_query(iface, attr), "uct_iface_query");
                capFlags = uct_iface_attr.cap.flags(uct_iface_attr.cap(attr));
                assertTrue((capFlags & ucx_h.UCT_IFACE_FLAG_CONNECT_TO_IFACE()) != 0,
                        mdName + " connects to an interface");
                assertTrue((capFlags & ucx_h.UCT_IFACE_FLAG_AM_SHORT()) != 0, mdName + " sends short AMs");

                UctInline.uct_iface_progress_enable(iface, ucx_h.UCT_PROGRESS_SEND() | ucx_h.UCT_PROGRESS_RECV());
                cleanups.push(() -> UctInline.uct_iface_progress_disable(iface,
                        ucx_h.UCT_PROGRESS_SEND() | ucx_h.UCT_PROGRESS_RECV()));

                MemorySegment handler = uct_am_callback_t.allocate(this::onActiveMessage, arena);
                check(ucx_h.uct_iface_set_am_handler(iface, AM_ID, handler, MemorySegment.NULL,
                        ucx_h.UCT_CB_FLAG_ASYNC()), "uct_iface_set_am_handler");

                MemorySegment deviceAddress = arena.allocate(Math.max(1, uct_iface_attr.device_addr_len(attr)));
                MemorySegment ifaceAddress = arena.allocate(Math.max(1, uct_iface_attr.iface_addr_len(attr)));
                check(ucx_h.uct_iface_get_device_address(iface, deviceAddress), "uct_iface_get_device_address");
                check(ucx_h.uct_iface_get_address(iface, ifaceAddress), "uct_iface_get_address");
                assertNotEquals(0, ucx_h.uct_iface_is_reachable(iface, deviceAddress, ifaceAddress),
                        "the interface reaches itself");

                MemorySegment epParams = uct_ep_params.allocate(arena);
                uct_ep_params.field_mask(epParams, ucx_h.UCT_EP_PARAM_FIELD_IFACE()
                        | ucx_h.UCT_EP_PARAM_FIELD_DEV_ADDR() | ucx_h.UCT_EP_PARAM_FIELD_IFACE_ADDR());
                uct_ep_params.iface(epParams, iface);
                uct_ep_params.dev_addr(epParams, deviceAddress);
                uct_ep_params.iface_addr(epParams, ifaceAddress);
                check(ucx_h.uct_ep_create(epParams, out), "uct_ep_create");
                ep = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.uct_ep_destroy(ep));
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        private byte onActiveMessage(MemorySegment arg, MemorySegment data, long length, int flags) {
            try {
                byte[] bytes = data.reinterpret(length).toArray(JAVA_BYTE);
                boolean keep = keepDescriptors && (flags & ucx_h.UCT_CB_PARAM_FLAG_DESC()) != 0;
                received.add(new Received(bytes, flags, keep ? MemorySegment.ofAddress(data.address()) : null));
                return keep ? INPROGRESS : OK;
            } catch (Throwable t) {
                handlerFailures.add(t);
                return OK;
            }
        }

        /** The (component, md name) pair of the most preferred md present. */
        private MemorySegment[] chooseMd(MemorySegment components, int numComponents) {
            MemorySegment[] best = null;
            int bestRank = Integer.MAX_VALUE;
            for (int i = 0; i < numComponents; i++) {
                MemorySegment comp = components.getAtIndex(ucx_h.C_POINTER, i);
                MemorySegment attr = uct_component_attr.allocate(arena);
                uct_component_attr.field_mask(attr, ucx_h.UCT_COMPONENT_ATTR_FIELD_NAME()
                        | ucx_h.UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT());
                check(ucx_h.uct_component_query(comp, attr), "uct_component_query");
                int mdCount = uct_component_attr.md_resource_count(attr);
                MemorySegment mdResources = uct_md_resource_desc.allocateArray(Math.max(1, mdCount), arena);
                uct_component_attr.md_resources(attr, mdResources);
                uct_component_attr.field_mask(attr, ucx_h.UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES());
                check(ucx_h.uct_component_query(comp, attr), "uct_component_query");
                for (int m = 0; m < mdCount; m++) {
                    MemorySegment name = uct_md_resource_desc.md_name(uct_md_resource_desc.asSlice(mdResources, m));
                    int rank = PREFERRED_MDS.indexOf(name.getString(0));
                    if (rank >= 0 && rank < bestRank) {
                        bestRank = rank;
                        best = new MemorySegment[] {comp, name};
                    }
                }
            }
            assumeTrue(best != null, "none of the mds " + PREFERRED_MDS + " is available");
            return best;
        }

        /** The first transport resource of the md, the loopback device for tcp. */
        private static MemorySegment chooseResource(MemorySegment resources, int numResources) {
            assumeTrue(numResources > 0, "the md has no transport resource");
            for (int i = 0; i < numResources; i++) {
                MemorySegment resource = uct_tl_resource_desc.asSlice(resources, i);
                if (uct_tl_resource_desc.dev_name(resource).getString(0).equals("lo")) {
                    return resource;
                }
            }
            return uct_tl_resource_desc.asSlice(resources, 0);
        }

        void requireCap(long flag, String name) {
            assumeTrue((capFlags & flag) != 0, mdName + " lacks UCT_IFACE_FLAG_" + name);
        }

        /** Progresses the worker until the handler has run, then returns what it recorded. */
        Received awaitMessageThroughWorker() {
            boolean deliveredBySend = !received.isEmpty(); // "self" calls the handler inside the send
            long deadline = System.nanoTime() + WAIT_NANOS;
            int work = 0;
            while (received.isEmpty() && System.nanoTime() < deadline) {
                work += UctInline.uct_worker_progress(worker);
            }
            Received message = takeMessage();
            assertTrue(deliveredBySend || work > 0, "uct_worker_progress reports the work it did");
            return message;
        }

        /**
         * Runs a send until it stops returning UCS_ERR_NO_RESOURCE, progressing the worker in between (as
         * uct_hello_world does: a tcp endpoint, for one, has no resources until its connection is up).
         */
        long whenResourcesAllow(LongSupplier send) {
            long deadline = System.nanoTime() + WAIT_NANOS;
            long result;
            while ((result = send.getAsLong()) == ucx_h.UCS_ERR_NO_RESOURCE() && System.nanoTime() < deadline) {
                UctInline.uct_worker_progress(worker);
            }
            return result;
        }

        Received takeMessage() {
            assertTrue(handlerFailures.isEmpty(), () -> "AM handler failed: " + handlerFailures);
            Received message = received.poll();
            assertNotNull(message, "no Active Message arrived within 5 s");
            return message;
        }

        /** uct_ep_flush until it returns UCS_OK, progressing the worker while it is in progress. */
        void flushEp() {
            long deadline = System.nanoTime() + WAIT_NANOS;
            while (true) {
                byte status = UctInline.uct_ep_flush(ep, 0, MemorySegment.NULL);
                if (status == OK) {
                    return;
                }
                assertTrue(status == INPROGRESS || status == (byte) ucx_h.UCS_ERR_NO_RESOURCE(),
                        () -> "uct_ep_flush returned " + statusString(status));
                assertTrue(System.nanoTime() < deadline, "uct_ep_flush did not complete within 5 s");
                UctInline.uct_worker_progress(worker);
            }
        }

        /**
         * Memory the endpoint can put to and update atomically: registered with uct_md_mem_reg when the md
         * registers, else allocated by the md (posix only allocates), then packed and unpacked into an rkey.
         */
        RemoteMemory remoteMemory(long length) {
            MemorySegment mdAttr = uct_md_attr.allocate(arena);
            check(ucx_h.uct_md_query(md, mdAttr), "uct_md_query");
            long mdFlags = uct_md_attr.cap.flags(uct_md_attr.cap(mdAttr));
            MemorySegment out = arena.allocate(ucx_h.C_POINTER);
            MemorySegment local;
            MemorySegment memh;
            if ((mdFlags & ucx_h.UCT_MD_FLAG_REG()) != 0) {
                local = arena.allocate(length, 4096);
                check(ucx_h.uct_md_mem_reg(md, local, length, ucx_h.UCT_MD_MEM_ACCESS_ALL(), out), "uct_md_mem_reg");
                memh = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> check(ucx_h.uct_md_mem_dereg(md, memh), "uct_md_mem_dereg"));
            } else {
                assumeTrue((mdFlags & ucx_h.UCT_MD_FLAG_ALLOC()) != 0, mdName + " neither registers nor allocates");
                MemorySegment methods = arena.allocateFrom(JAVA_INT, ucx_h.UCT_ALLOC_METHOD_MD());
                MemorySegment mds = arena.allocate(ucx_h.C_POINTER);
                mds.set(ucx_h.C_POINTER, 0, md);
                MemorySegment params = uct_mem_alloc_params_t.allocate(arena);
                uct_mem_alloc_params_t.field_mask(params, ucx_h.UCT_MEM_ALLOC_PARAM_FIELD_FLAGS()
                        | ucx_h.UCT_MEM_ALLOC_PARAM_FIELD_MEM_TYPE() | ucx_h.UCT_MEM_ALLOC_PARAM_FIELD_MDS()
                        | ucx_h.UCT_MEM_ALLOC_PARAM_FIELD_NAME());
                uct_mem_alloc_params_t.flags(params, ucx_h.UCT_MD_MEM_ACCESS_ALL());
                uct_mem_alloc_params_t.mem_type(params, ucx_h.UCS_MEMORY_TYPE_HOST());
                MemorySegment mdsField = uct_mem_alloc_params_t.mds(params);
                uct_mem_alloc_params_t.mds.mds(mdsField, mds);
                uct_mem_alloc_params_t.mds.count(mdsField, 1);
                uct_mem_alloc_params_t.name(params, arena.allocateFrom("UctSmokeTest"));
                MemorySegment allocated = uct_allocated_memory.allocate(arena);
                check(ucx_h.uct_mem_alloc(length, methods, 1, params, allocated), "uct_mem_alloc");
                cleanups.push(() -> check(ucx_h.uct_mem_free(allocated), "uct_mem_free"));
                assertTrue(uct_allocated_memory.length(allocated) >= length, "allocated length");
                local = uct_allocated_memory.address(allocated).reinterpret(length);
                memh = uct_allocated_memory.memh(allocated);
            }
            MemorySegment rkeyBuffer = arena.allocate(Math.max(1, uct_md_attr.rkey_packed_size(mdAttr)));
            check(ucx_h.uct_md_mkey_pack(md, memh, rkeyBuffer), "uct_md_mkey_pack");
            MemorySegment bundle = uct_rkey_bundle.allocate(arena);
            check(ucx_h.uct_rkey_unpack(component, rkeyBuffer, bundle), "uct_rkey_unpack");
            cleanups.push(() -> check(ucx_h.uct_rkey_release(component, bundle), "uct_rkey_release"));
            local.fill((byte) 0);
            return new RemoteMemory(local, local.address(), uct_rkey_bundle.rkey(bundle));
        }

        @Override
        public void close() {
            Throwable first = null;
            while (!cleanups.isEmpty()) {
                try {
                    cleanups.pop().run();
                } catch (Throwable t) {
                    if (first == null) {
                        first = t;
                    } else {
                        first.addSuppressed(t);
                    }
                }
            }
            if (first instanceof RuntimeException re) {
                throw re;
            }
            if (first instanceof Error err) {
                throw err;
            }
        }
    }
}
