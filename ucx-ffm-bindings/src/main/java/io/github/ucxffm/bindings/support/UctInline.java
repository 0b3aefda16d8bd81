package io.github.ucxffm.bindings.support;

import io.github.ucxffm.bindings.ucs_callback_t;
import io.github.ucxffm.bindings.ucs_callbackq;
import io.github.ucxffm.bindings.ucs_callbackq_elem;
import io.github.ucxffm.bindings.ucx_h;
import io.github.ucxffm.bindings.uct_completion;
import io.github.ucxffm.bindings.uct_desc_release_callback_t;
import io.github.ucxffm.bindings.uct_ep;
import io.github.ucxffm.bindings.uct_ep_am_bcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_am_short_func_t;
import io.github.ucxffm.bindings.uct_ep_am_short_iov_func_t;
import io.github.ucxffm.bindings.uct_ep_am_zcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_atomic32_fetch_func_t;
import io.github.ucxffm.bindings.uct_ep_atomic32_post_func_t;
import io.github.ucxffm.bindings.uct_ep_atomic64_fetch_func_t;
import io.github.ucxffm.bindings.uct_ep_atomic64_post_func_t;
import io.github.ucxffm.bindings.uct_ep_atomic_cswap32_func_t;
import io.github.ucxffm.bindings.uct_ep_atomic_cswap64_func_t;
import io.github.ucxffm.bindings.uct_ep_fence_func_t;
import io.github.ucxffm.bindings.uct_ep_flush_func_t;
import io.github.ucxffm.bindings.uct_ep_get_bcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_get_short_func_t;
import io.github.ucxffm.bindings.uct_ep_get_zcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_pending_add_func_t;
import io.github.ucxffm.bindings.uct_ep_pending_purge_func_t;
import io.github.ucxffm.bindings.uct_ep_put_bcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_put_short_func_t;
import io.github.ucxffm.bindings.uct_ep_put_zcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_tag_eager_bcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_tag_eager_short_func_t;
import io.github.ucxffm.bindings.uct_ep_tag_eager_zcopy_func_t;
import io.github.ucxffm.bindings.uct_ep_tag_rndv_cancel_func_t;
import io.github.ucxffm.bindings.uct_ep_tag_rndv_request_func_t;
import io.github.ucxffm.bindings.uct_ep_tag_rndv_zcopy_func_t;
import io.github.ucxffm.bindings.uct_iface;
import io.github.ucxffm.bindings.uct_iface_fence_func_t;
import io.github.ucxffm.bindings.uct_iface_flush_func_t;
import io.github.ucxffm.bindings.uct_iface_ops;
import io.github.ucxffm.bindings.uct_iface_progress_disable_func_t;
import io.github.ucxffm.bindings.uct_iface_progress_enable_func_t;
import io.github.ucxffm.bindings.uct_iface_progress_func_t;
import io.github.ucxffm.bindings.uct_iface_tag_recv_cancel_func_t;
import io.github.ucxffm.bindings.uct_iface_tag_recv_zcopy_func_t;
import io.github.ucxffm.bindings.uct_recv_desc;
import io.github.ucxffm.bindings.uct_worker;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Java forms of the {@code static inline} functions of {@code uct/api/uct.h}.
 *
 * <p>UCT declares its data-path entry points ({@code uct_ep_am_short}, {@code uct_ep_put_short}, ...) as
 * {@code UCT_INLINE_API}, that is {@code static UCS_F_ALWAYS_INLINE}: each is compiled into its caller and exists
 * in no shared library, so there is no symbol a downcall could bind to. Nearly all of them only load a function
 * pointer from the transport's operations table, {@code ep->iface->ops} or {@code iface->ops}, and call it. The
 * methods here do the same through the generated bindings: they read {@code uct_ep.iface}, take the embedded
 * {@code uct_iface.ops} slice, load the {@code uct_iface_ops} field and call it with the matching generated
 * function-pointer class's {@code invoke}. They keep the C names and parameters ({@code MemorySegment} for
 * pointers and callbacks, {@code byte} for {@code ucs_status_t} and {@code uint8_t}, {@code long} for
 * {@code uint64_t}, {@code size_t}, {@code ssize_t} and {@code uct_rkey_t}, {@code int} for {@code unsigned},
 * {@code uint32_t} and enums). They create no arena, lambda or upcall, and once JIT-compiled they allocate
 * nothing: the segments they form on the way are scalar-replaced (a dispatch costs a few nanoseconds).
 *
 * <p>Handles may be given either as segments read through the generated bindings (which can be read to any
 * length) or as zero-length segments made from an address; the latter are resized to the struct they point to.
 *
 * <p>All 36 {@code static inline} functions of {@code uct.h}, in header order. UCX 1.13.1, 1.18.1 and 1.23.0 define
 * the same 36 with the same bodies (1.23 adds {@code uct/api/device/uct_device_impl.h}, whose {@code UCS_F_DEVICE}
 * functions are GPU device code, C++ templates for {@code nvcc}/{@code hipcc} that {@code uct.h} does not include
 * and no host program can call):
 * <ul>
 *   <li>{@link #uct_worker_progress} - the loop of {@code ucs_callbackq_dispatch} over
 *       {@code worker->progress_q}; the one mirror whose memory layout depends on the release (below)</li>
 *   <li>{@link #uct_iface_flush}, {@link #uct_iface_fence}</li>
 *   <li>{@link #uct_iface_release_desc} - calls the {@code uct_recv_desc_t} stored just before the
 *       descriptor</li>
 *   <li>{@link #uct_ep_put_short}, {@link #uct_ep_put_bcopy}, {@link #uct_ep_put_zcopy}</li>
 *   <li>{@link #uct_ep_get_short}, {@link #uct_ep_get_bcopy}, {@link #uct_ep_get_zcopy}</li>
 *   <li>{@link #uct_ep_am_short}, {@link #uct_ep_am_short_iov}, {@link #uct_ep_am_bcopy},
 *       {@link #uct_ep_am_zcopy}</li>
 *   <li>{@link #uct_ep_atomic_cswap64}, {@link #uct_ep_atomic_cswap32}, {@link #uct_ep_atomic32_post},
 *       {@link #uct_ep_atomic64_post}, {@link #uct_ep_atomic32_fetch}, {@link #uct_ep_atomic64_fetch}</li>
 *   <li>{@link #uct_ep_pending_add}, {@link #uct_ep_pending_purge}</li>
 *   <li>{@link #uct_ep_flush}, {@link #uct_ep_fence}</li>
 *   <li>{@link #uct_ep_tag_eager_short}, {@link #uct_ep_tag_eager_bcopy}, {@link #uct_ep_tag_eager_zcopy},
 *       {@link #uct_ep_tag_rndv_zcopy}, {@link #uct_ep_tag_rndv_cancel}, {@link #uct_ep_tag_rndv_request}</li>
 *   <li>{@link #uct_iface_tag_recv_zcopy}, {@link #uct_iface_tag_recv_cancel}</li>
 *   <li>{@link #uct_iface_progress_enable}, {@link #uct_iface_progress_disable}, {@link #uct_iface_progress}</li>
 *   <li>{@link #uct_completion_update_status} - no dispatch: records the first failure in
 *       {@code comp->status}</li>
 * </ul>
 * {@code uct_ep_check}, by contrast, is an exported function of {@code libuct} and is bound by the generated
 * {@code ucx_h.uct_ep_check}.
 *
 * <p><b>Releases.</b> One jar runs on UCX 1.13 to 1.23 while the generated bindings describe one release's headers
 * (1.18.1). What each mirror reads was compared across the headers of 1.13.1, 1.18.1 and 1.23.0:
 * <ul>
 *   <li>The 33 dispatches read {@code uct_ep_t.iface}, {@code uct_iface_t.ops} and one {@code uct_iface_ops_t}
 *       member, all declared in {@code uct/api/tl.h}, which is identical in the three releases but for its
 *       copyright line: same members in the same order, same function-pointer types. They are release-independent
 *       and use the generated layouts.</li>
 *   <li>{@link #uct_iface_release_desc} reads the pointer before the descriptor and {@code uct_recv_desc_t.cb}
 *       ({@code tl.h} too), and {@link #uct_completion_update_status} reads {@code uct_completion_t.status} at
 *       offset 12 ({@code uct.h}, unchanged): release-independent.</li>
 *   <li>{@link #uct_worker_progress} inlines {@code ucs_callbackq_dispatch}, which walks
 *       {@code worker->progress_q.fast_elems} up to the first {@code NULL} callback. The loop is the same in every
 *       release, but {@code ucs_callbackq_elem_t} is 24 bytes ({@code cb, arg, flags, id}) before UCX 1.16 and
 *       16 bytes ({@code cb, arg}) since, and {@code uct_worker_t} shrank from 264 to 136 bytes. The stride and the
 *       size are chosen once, at class initialisation, from the version {@code ucp_get_version} reports (the
 *       comment of the field {@code CALLBACKQ_BEFORE_1_16} tells how the boundary was established) and kept in
 *       {@code static final} fields, so the loop stays a loop over constants and allocates nothing.</li>
 * </ul>
 */
public final class UctInline {

    /** The C {@code void *} layout the bindings use, readable to any length. */
    private static final AddressLayout POINTER = ucx_h.C_POINTER;

    /**
     * {@code ucs_callbackq_elem_t} of UCX 1.15 and older, which the generated bindings (from a newer release) no
     * longer describe: {@code { ucs_callback_t cb; void *arg; unsigned flags; int id; }}, 24 bytes.
     */
    static final StructLayout CALLBACKQ_ELEM_BEFORE_1_16 = MemoryLayout.structLayout(
            ucx_h.C_POINTER.withName("cb"),
            ucx_h.C_POINTER.withName("arg"),
            ucx_h.C_INT.withName("flags"),
            ucx_h.C_INT.withName("id")).withName("ucs_callbackq_elem");

    /**
     * {@code uct_worker_t} of UCX 1.15 and older: its only member {@code progress_q} is a {@code ucs_callbackq_t}
     * of {@code fast_elems[UCS_CALLBACKQ_FAST_COUNT + 1]} followed by {@code char priv[72]}, 264 bytes (136 since
     * 1.16, where {@code priv} became a pointer).
     */
    static final StructLayout WORKER_BEFORE_1_16 = MemoryLayout.structLayout(
            MemoryLayout.structLayout(
                    MemoryLayout.sequenceLayout(ucx_h.UCS_CALLBACKQ_FAST_COUNT() + 1, CALLBACKQ_ELEM_BEFORE_1_16)
                            .withName("fast_elems"),
                    MemoryLayout.sequenceLayout(72, ucx_h.C_CHAR).withName("priv"))
                    .withName("progress_q")).withName("uct_worker");

    /**
     * Whether the loaded UCX has the 24-byte {@code ucs_callbackq_elem_t} of {@link #CALLBACKQ_ELEM_BEFORE_1_16}
     * rather than the 16-byte {@code { cb, arg }} the generated bindings describe.
     *
     * <p>The element lost {@code flags} and {@code id}, and {@code priv} became a pointer, when the callback queue
     * was reworked for scalable one-shot callbacks (UCX pull requests 9076, 9098 and 9102, opened in May 2023, the
     * last one still in review on 2023-06-12; the same rework added {@code ucs/datastruct/callbackq_compat.h},
     * copyright 2023, which 1.13 lacks and 1.18 and 1.23 install). No header carries a version macro for it. The
     * 1.15 release was being prepared before that (its NEWS section was opened on 2023-05-10, pull request 9066,
     * and its UCS notes do not mention the queue), and the 1.16.0 NEWS announces the rework ("UCS: Improved
     * scalability of connection establishment flow"). The rule is therefore: 24 bytes before 1.16 (1.13.1
     * measured; 1.14 and 1.15 by the history above), 16 bytes from 1.16 on (1.18.1 and 1.23.0 measured, 1.16 and
     * 1.17 by the history above). {@code UctWorkerProgressTest} compares the choice with gcc's {@code sizeof}
     * against the installed headers, so a release that breaks the rule fails there.
     */
    static final boolean CALLBACKQ_BEFORE_1_16 = UcxLibraryHook.version() < 0x011000; // 1.16.0

    /** Size of {@code uct_worker_t} in the loaded release: how far a zero-length worker handle is resized. */
    static final long WORKER_SIZE = CALLBACKQ_BEFORE_1_16 ? WORKER_BEFORE_1_16.byteSize() : uct_worker.sizeof();

    /** Offset of {@code worker->progress_q.fast_elems} in {@code uct_worker_t}: 0 in every release. */
    static final long FAST_ELEMS = CALLBACKQ_BEFORE_1_16
            ? WORKER_BEFORE_1_16.byteOffset(groupElement("progress_q"), groupElement("fast_elems"))
            : uct_worker.progress_q$offset() + ucs_callbackq.fast_elems$offset();

    /** Size of one {@code ucs_callbackq_elem_t} in the {@code fast_elems} array of the loaded release. */
    static final long CALLBACKQ_ELEM_SIZE = CALLBACKQ_BEFORE_1_16
            ? CALLBACKQ_ELEM_BEFORE_1_16.byteSize()
            : ucs_callbackq_elem.sizeof();

    /** Offset of {@code ucs_callbackq_elem_t.cb}: 0 in every release. */
    static final long CALLBACKQ_ELEM_CB = CALLBACKQ_BEFORE_1_16
            ? CALLBACKQ_ELEM_BEFORE_1_16.byteOffset(groupElement("cb"))
            : ucs_callbackq_elem.cb$offset();

    /** Offset of {@code ucs_callbackq_elem_t.arg}: 8 in every release. */
    static final long CALLBACKQ_ELEM_ARG = CALLBACKQ_BEFORE_1_16
            ? CALLBACKQ_ELEM_BEFORE_1_16.byteOffset(groupElement("arg"))
            : ucs_callbackq_elem.arg$offset();

    static {
        if (POINTER.byteSize() != JAVA_LONG.byteSize()) {
            throw new IllegalStateException("UctInline reads C pointers as 64-bit integers");
        }
    }

    private UctInline() {
    }

    /**
     * Makes {@code pointer} readable for {@code size} bytes: a segment read through the generated bindings
     * already is; a zero-length segment made from an address is resized (no check is possible: C trusts the
     * handle the same way).
     */
    private static MemorySegment sized(MemorySegment pointer, long size) {
        return pointer.byteSize() >= size ? pointer : pointer.reinterpret(size);
    }

    /** {@code &iface->ops}. */
    private static MemorySegment ifaceOps(MemorySegment iface) {
        return uct_iface.ops(sized(iface, uct_iface.sizeof()));
    }

    /** {@code &ep->iface->ops}. */
    private static MemorySegment epOps(MemorySegment ep) {
        return ifaceOps(uct_ep.iface(sized(ep, uct_ep.sizeof())));
    }

    /**
     * Java form of the static inline C function {@code uct_worker_progress}: {@code ucs_callbackq_dispatch} of
     * {@code worker->progress_q}, itself a static inline loop that calls every callback of the
     * {@code fast_elems} array up to the element whose {@code cb} is {@code NULL}, summing their results. The array
     * is walked with the element size of the loaded release: 24 bytes before UCX 1.16, 16 bytes since.
     *
     * @param worker {@code uct_worker_h}
     * @return the {@code unsigned} sum of the callbacks' results: nonzero when some work was done
     */
    public static int uct_worker_progress(MemorySegment worker) {
        MemorySegment w = sized(worker, WORKER_SIZE);
        int count = 0;
        for (long elem = FAST_ELEMS; ; elem += CALLBACKQ_ELEM_SIZE) {
            // Pointers are read as integers and wrapped at the call: the JIT then allocates no segment.
            long cb = w.get(JAVA_LONG, elem + CALLBACKQ_ELEM_CB);
            if (cb == 0L) {
                return count;
            }
            long arg = w.get(JAVA_LONG, elem + CALLBACKQ_ELEM_ARG);
            count += ucs_callback_t.invoke(MemorySegment.ofAddress(cb), MemorySegment.ofAddress(arg));
        }
    }

    /**
     * Java form of the static inline C function {@code uct_iface_flush}:
     * dispatches through {@code iface->ops.iface_flush}.
     *
     * @param iface {@code uct_iface_h}
     * @param flags {@code unsigned}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_iface_flush(MemorySegment iface, int flags, MemorySegment comp) {
        return uct_iface_flush_func_t.invoke(uct_iface_ops.iface_flush(ifaceOps(iface)), iface, flags, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_iface_fence}:
     * dispatches through {@code iface->ops.iface_fence}.
     *
     * @param iface {@code uct_iface_h}
     * @param flags {@code unsigned}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_iface_fence(MemorySegment iface, int flags) {
        return uct_iface_fence_func_t.invoke(uct_iface_ops.iface_fence(ifaceOps(iface)), iface, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_iface_release_desc}: calls
     * {@code release_desc->cb(release_desc, desc)} where {@code release_desc} is the {@code uct_recv_desc_t *}
     * stored just before {@code desc} (the {@code uct_recv_desc(desc)} macro of {@code uct/api/tl.h}).
     *
     * @param desc {@code void *}: the {@code data} of an Active Message or tag callback that returned
     *             {@code UCS_INPROGRESS} for a message received with {@code UCT_CB_PARAM_FLAG_DESC}
     */
    public static void uct_iface_release_desc(MemorySegment desc) {
        long slot = desc.address() - POINTER.byteSize();
        MemorySegment releaseDesc = MemorySegment.ofAddress(slot).reinterpret(POINTER.byteSize()).get(POINTER, 0);
        uct_desc_release_callback_t.invoke(uct_recv_desc.cb(releaseDesc), releaseDesc, desc);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_put_short}:
     * dispatches through {@code ep->iface->ops.ep_put_short}.
     *
     * @param ep {@code uct_ep_h}
     * @param buffer {@code const void *}
     * @param length {@code unsigned}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_put_short(MemorySegment ep, MemorySegment buffer, int length, long remote_addr, long rkey) {
        return uct_ep_put_short_func_t.invoke(uct_iface_ops.ep_put_short(epOps(ep)), ep, buffer, length, remote_addr, rkey);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_put_bcopy}:
     * dispatches through {@code ep->iface->ops.ep_put_bcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param pack_cb {@code uct_pack_callback_t}
     * @param arg {@code void *}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @return the {@code ssize_t} the transport returned: the packed length, or a negative {@code ucs_status_t}
     */
    public static long uct_ep_put_bcopy(MemorySegment ep, MemorySegment pack_cb, MemorySegment arg, long remote_addr, long rkey) {
        return uct_ep_put_bcopy_func_t.invoke(uct_iface_ops.ep_put_bcopy(epOps(ep)), ep, pack_cb, arg, remote_addr, rkey);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_put_zcopy}:
     * dispatches through {@code ep->iface->ops.ep_put_zcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param iov {@code const uct_iov_t *}
     * @param iovcnt {@code size_t}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_put_zcopy(MemorySegment ep, MemorySegment iov, long iovcnt, long remote_addr, long rkey, MemorySegment comp) {
        return uct_ep_put_zcopy_func_t.invoke(uct_iface_ops.ep_put_zcopy(epOps(ep)), ep, iov, iovcnt, remote_addr, rkey, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_get_short}:
     * dispatches through {@code ep->iface->ops.ep_get_short}.
     *
     * @param ep {@code uct_ep_h}
     * @param buffer {@code void *}
     * @param length {@code unsigned}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_get_short(MemorySegment ep, MemorySegment buffer, int length, long remote_addr, long rkey) {
        return uct_ep_get_short_func_t.invoke(uct_iface_ops.ep_get_short(epOps(ep)), ep, buffer, length, remote_addr, rkey);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_get_bcopy}:
     * dispatches through {@code ep->iface->ops.ep_get_bcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param unpack_cb {@code uct_unpack_callback_t}
     * @param arg {@code void *}
     * @param length {@code size_t}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_get_bcopy(MemorySegment ep, MemorySegment unpack_cb, MemorySegment arg, long length, long remote_addr, long rkey, MemorySegment comp) {
        return uct_ep_get_bcopy_func_t.invoke(uct_iface_ops.ep_get_bcopy(epOps(ep)), ep, unpack_cb, arg, length, remote_addr, rkey, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_get_zcopy}:
     * dispatches through {@code ep->iface->ops.ep_get_zcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param iov {@code const uct_iov_t *}
     * @param iovcnt {@code size_t}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_get_zcopy(MemorySegment ep, MemorySegment iov, long iovcnt, long remote_addr, long rkey, MemorySegment comp) {
        return uct_ep_get_zcopy_func_t.invoke(uct_iface_ops.ep_get_zcopy(epOps(ep)), ep, iov, iovcnt, remote_addr, rkey, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_am_short}:
     * dispatches through {@code ep->iface->ops.ep_am_short}.
     *
     * @param ep {@code uct_ep_h}
     * @param id {@code uint8_t}
     * @param header {@code uint64_t}
     * @param payload {@code const void *}
     * @param length {@code unsigned}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_am_short(MemorySegment ep, byte id, long header, MemorySegment payload, int length) {
        return uct_ep_am_short_func_t.invoke(uct_iface_ops.ep_am_short(epOps(ep)), ep, id, header, payload, length);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_am_short_iov}:
     * dispatches through {@code ep->iface->ops.ep_am_short_iov}.
     *
     * @param ep {@code uct_ep_h}
     * @param id {@code uint8_t}
     * @param iov {@code const uct_iov_t *}
     * @param iovcnt {@code size_t}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_am_short_iov(MemorySegment ep, byte id, MemorySegment iov, long iovcnt) {
        return uct_ep_am_short_iov_func_t.invoke(uct_iface_ops.ep_am_short_iov(epOps(ep)), ep, id, iov, iovcnt);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_am_bcopy}:
     * dispatches through {@code ep->iface->ops.ep_am_bcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param id {@code uint8_t}
     * @param pack_cb {@code uct_pack_callback_t}
     * @param arg {@code void *}
     * @param flags {@code unsigned}
     * @return the {@code ssize_t} the transport returned: the packed length, or a negative {@code ucs_status_t}
     */
    public static long uct_ep_am_bcopy(MemorySegment ep, byte id, MemorySegment pack_cb, MemorySegment arg, int flags) {
        return uct_ep_am_bcopy_func_t.invoke(uct_iface_ops.ep_am_bcopy(epOps(ep)), ep, id, pack_cb, arg, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_am_zcopy}:
     * dispatches through {@code ep->iface->ops.ep_am_zcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param id {@code uint8_t}
     * @param header {@code const void *}
     * @param header_length {@code unsigned}
     * @param iov {@code const uct_iov_t *}
     * @param iovcnt {@code size_t}
     * @param flags {@code unsigned}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_am_zcopy(MemorySegment ep, byte id, MemorySegment header, int header_length, MemorySegment iov, long iovcnt, int flags, MemorySegment comp) {
        return uct_ep_am_zcopy_func_t.invoke(uct_iface_ops.ep_am_zcopy(epOps(ep)), ep, id, header, header_length, iov, iovcnt, flags, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_atomic_cswap64}:
     * dispatches through {@code ep->iface->ops.ep_atomic_cswap64}.
     *
     * @param ep {@code uct_ep_h}
     * @param compare {@code uint64_t}
     * @param swap {@code uint64_t}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @param result {@code uint64_t *}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_atomic_cswap64(MemorySegment ep, long compare, long swap, long remote_addr, long rkey, MemorySegment result, MemorySegment comp) {
        return uct_ep_atomic_cswap64_func_t.invoke(uct_iface_ops.ep_atomic_cswap64(epOps(ep)), ep, compare, swap, remote_addr, rkey, result, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_atomic_cswap32}:
     * dispatches through {@code ep->iface->ops.ep_atomic_cswap32}.
     *
     * @param ep {@code uct_ep_h}
     * @param compare {@code uint32_t}
     * @param swap {@code uint32_t}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @param result {@code uint32_t *}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_atomic_cswap32(MemorySegment ep, int compare, int swap, long remote_addr, long rkey, MemorySegment result, MemorySegment comp) {
        return uct_ep_atomic_cswap32_func_t.invoke(uct_iface_ops.ep_atomic_cswap32(epOps(ep)), ep, compare, swap, remote_addr, rkey, result, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_atomic32_post}:
     * dispatches through {@code ep->iface->ops.ep_atomic32_post}.
     *
     * @param ep {@code uct_ep_h}
     * @param opcode {@code uct_atomic_op_t}
     * @param value {@code uint32_t}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_atomic32_post(MemorySegment ep, int opcode, int value, long remote_addr, long rkey) {
        return uct_ep_atomic32_post_func_t.invoke(uct_iface_ops.ep_atomic32_post(epOps(ep)), ep, opcode, value, remote_addr, rkey);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_atomic64_post}:
     * dispatches through {@code ep->iface->ops.ep_atomic64_post}.
     *
     * @param ep {@code uct_ep_h}
     * @param opcode {@code uct_atomic_op_t}
     * @param value {@code uint64_t}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_atomic64_post(MemorySegment ep, int opcode, long value, long remote_addr, long rkey) {
        return uct_ep_atomic64_post_func_t.invoke(uct_iface_ops.ep_atomic64_post(epOps(ep)), ep, opcode, value, remote_addr, rkey);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_atomic32_fetch}:
     * dispatches through {@code ep->iface->ops.ep_atomic32_fetch}.
     *
     * @param ep {@code uct_ep_h}
     * @param opcode {@code uct_atomic_op_t}
     * @param value {@code uint32_t}
     * @param result {@code uint32_t *}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_atomic32_fetch(MemorySegment ep, int opcode, int value, MemorySegment result, long remote_addr, long rkey, MemorySegment comp) {
        return uct_ep_atomic32_fetch_func_t.invoke(uct_iface_ops.ep_atomic32_fetch(epOps(ep)), ep, opcode, value, result, remote_addr, rkey, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_atomic64_fetch}:
     * dispatches through {@code ep->iface->ops.ep_atomic64_fetch}.
     *
     * @param ep {@code uct_ep_h}
     * @param opcode {@code uct_atomic_op_t}
     * @param value {@code uint64_t}
     * @param result {@code uint64_t *}
     * @param remote_addr {@code uint64_t}
     * @param rkey {@code uct_rkey_t}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_atomic64_fetch(MemorySegment ep, int opcode, long value, MemorySegment result, long remote_addr, long rkey, MemorySegment comp) {
        return uct_ep_atomic64_fetch_func_t.invoke(uct_iface_ops.ep_atomic64_fetch(epOps(ep)), ep, opcode, value, result, remote_addr, rkey, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_pending_add}:
     * dispatches through {@code ep->iface->ops.ep_pending_add}.
     *
     * @param ep {@code uct_ep_h}
     * @param req {@code uct_pending_req_t *}
     * @param flags {@code unsigned}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_pending_add(MemorySegment ep, MemorySegment req, int flags) {
        return uct_ep_pending_add_func_t.invoke(uct_iface_ops.ep_pending_add(epOps(ep)), ep, req, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_pending_purge}:
     * dispatches through {@code ep->iface->ops.ep_pending_purge}.
     *
     * @param ep {@code uct_ep_h}
     * @param cb {@code uct_pending_purge_callback_t}
     * @param arg {@code void *}
     */
    public static void uct_ep_pending_purge(MemorySegment ep, MemorySegment cb, MemorySegment arg) {
        uct_ep_pending_purge_func_t.invoke(uct_iface_ops.ep_pending_purge(epOps(ep)), ep, cb, arg);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_flush}:
     * dispatches through {@code ep->iface->ops.ep_flush}.
     *
     * @param ep {@code uct_ep_h}
     * @param flags {@code unsigned}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_flush(MemorySegment ep, int flags, MemorySegment comp) {
        return uct_ep_flush_func_t.invoke(uct_iface_ops.ep_flush(epOps(ep)), ep, flags, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_fence}:
     * dispatches through {@code ep->iface->ops.ep_fence}.
     *
     * @param ep {@code uct_ep_h}
     * @param flags {@code unsigned}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_fence(MemorySegment ep, int flags) {
        return uct_ep_fence_func_t.invoke(uct_iface_ops.ep_fence(epOps(ep)), ep, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_tag_eager_short}:
     * dispatches through {@code ep->iface->ops.ep_tag_eager_short}.
     *
     * @param ep {@code uct_ep_h}
     * @param tag {@code uct_tag_t}
     * @param data {@code const void *}
     * @param length {@code size_t}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_tag_eager_short(MemorySegment ep, long tag, MemorySegment data, long length) {
        return uct_ep_tag_eager_short_func_t.invoke(uct_iface_ops.ep_tag_eager_short(epOps(ep)), ep, tag, data, length);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_tag_eager_bcopy}:
     * dispatches through {@code ep->iface->ops.ep_tag_eager_bcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param tag {@code uct_tag_t}
     * @param imm {@code uint64_t}
     * @param pack_cb {@code uct_pack_callback_t}
     * @param arg {@code void *}
     * @param flags {@code unsigned}
     * @return the {@code ssize_t} the transport returned: the packed length, or a negative {@code ucs_status_t}
     */
    public static long uct_ep_tag_eager_bcopy(MemorySegment ep, long tag, long imm, MemorySegment pack_cb, MemorySegment arg, int flags) {
        return uct_ep_tag_eager_bcopy_func_t.invoke(uct_iface_ops.ep_tag_eager_bcopy(epOps(ep)), ep, tag, imm, pack_cb, arg, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_tag_eager_zcopy}:
     * dispatches through {@code ep->iface->ops.ep_tag_eager_zcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param tag {@code uct_tag_t}
     * @param imm {@code uint64_t}
     * @param iov {@code const uct_iov_t *}
     * @param iovcnt {@code size_t}
     * @param flags {@code unsigned}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_tag_eager_zcopy(MemorySegment ep, long tag, long imm, MemorySegment iov, long iovcnt, int flags, MemorySegment comp) {
        return uct_ep_tag_eager_zcopy_func_t.invoke(uct_iface_ops.ep_tag_eager_zcopy(epOps(ep)), ep, tag, imm, iov, iovcnt, flags, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_tag_rndv_zcopy}:
     * dispatches through {@code ep->iface->ops.ep_tag_rndv_zcopy}.
     *
     * @param ep {@code uct_ep_h}
     * @param tag {@code uct_tag_t}
     * @param header {@code const void *}
     * @param header_length {@code unsigned}
     * @param iov {@code const uct_iov_t *}
     * @param iovcnt {@code size_t}
     * @param flags {@code unsigned}
     * @param comp {@code uct_completion_t *}
     * @return the {@code ucs_status_ptr_t} the transport returned: an operation handle, or an error status encoded as a pointer
     */
    public static MemorySegment uct_ep_tag_rndv_zcopy(MemorySegment ep, long tag, MemorySegment header, int header_length, MemorySegment iov, long iovcnt, int flags, MemorySegment comp) {
        return uct_ep_tag_rndv_zcopy_func_t.invoke(uct_iface_ops.ep_tag_rndv_zcopy(epOps(ep)), ep, tag, header, header_length, iov, iovcnt, flags, comp);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_tag_rndv_cancel}:
     * dispatches through {@code ep->iface->ops.ep_tag_rndv_cancel}.
     *
     * @param ep {@code uct_ep_h}
     * @param op {@code void *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_tag_rndv_cancel(MemorySegment ep, MemorySegment op) {
        return uct_ep_tag_rndv_cancel_func_t.invoke(uct_iface_ops.ep_tag_rndv_cancel(epOps(ep)), ep, op);
    }

    /**
     * Java form of the static inline C function {@code uct_ep_tag_rndv_request}:
     * dispatches through {@code ep->iface->ops.ep_tag_rndv_request}.
     *
     * @param ep {@code uct_ep_h}
     * @param tag {@code uct_tag_t}
     * @param header {@code const void *}
     * @param header_length {@code unsigned}
     * @param flags {@code unsigned}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_ep_tag_rndv_request(MemorySegment ep, long tag, MemorySegment header, int header_length, int flags) {
        return uct_ep_tag_rndv_request_func_t.invoke(uct_iface_ops.ep_tag_rndv_request(epOps(ep)), ep, tag, header, header_length, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_iface_tag_recv_zcopy}:
     * dispatches through {@code iface->ops.iface_tag_recv_zcopy}.
     *
     * @param iface {@code uct_iface_h}
     * @param tag {@code uct_tag_t}
     * @param tag_mask {@code uct_tag_t}
     * @param iov {@code const uct_iov_t *}
     * @param iovcnt {@code size_t}
     * @param ctx {@code uct_tag_context_t *}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_iface_tag_recv_zcopy(MemorySegment iface, long tag, long tag_mask, MemorySegment iov, long iovcnt, MemorySegment ctx) {
        return uct_iface_tag_recv_zcopy_func_t.invoke(uct_iface_ops.iface_tag_recv_zcopy(ifaceOps(iface)), iface, tag, tag_mask, iov, iovcnt, ctx);
    }

    /**
     * Java form of the static inline C function {@code uct_iface_tag_recv_cancel}:
     * dispatches through {@code iface->ops.iface_tag_recv_cancel}.
     *
     * @param iface {@code uct_iface_h}
     * @param ctx {@code uct_tag_context_t *}
     * @param force {@code int}
     * @return the {@code ucs_status_t} the transport returned
     */
    public static byte uct_iface_tag_recv_cancel(MemorySegment iface, MemorySegment ctx, int force) {
        return uct_iface_tag_recv_cancel_func_t.invoke(uct_iface_ops.iface_tag_recv_cancel(ifaceOps(iface)), iface, ctx, force);
    }

    /**
     * Java form of the static inline C function {@code uct_iface_progress_enable}:
     * dispatches through {@code iface->ops.iface_progress_enable}.
     *
     * @param iface {@code uct_iface_h}
     * @param flags {@code unsigned}
     */
    public static void uct_iface_progress_enable(MemorySegment iface, int flags) {
        uct_iface_progress_enable_func_t.invoke(uct_iface_ops.iface_progress_enable(ifaceOps(iface)), iface, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_iface_progress_disable}:
     * dispatches through {@code iface->ops.iface_progress_disable}.
     *
     * @param iface {@code uct_iface_h}
     * @param flags {@code unsigned}
     */
    public static void uct_iface_progress_disable(MemorySegment iface, int flags) {
        uct_iface_progress_disable_func_t.invoke(uct_iface_ops.iface_progress_disable(ifaceOps(iface)), iface, flags);
    }

    /**
     * Java form of the static inline C function {@code uct_iface_progress}:
     * dispatches through {@code iface->ops.iface_progress}.
     *
     * @param iface {@code uct_iface_h}
     * @return the {@code unsigned} the transport returned: the amount of work done
     */
    public static int uct_iface_progress(MemorySegment iface) {
        return uct_iface_progress_func_t.invoke(uct_iface_ops.iface_progress(ifaceOps(iface)), iface);
    }

    /**
     * Java form of the static inline C function {@code uct_completion_update_status}: stores {@code status} in
     * {@code comp->status} when it is a failure and no failure was stored before (the first failure wins).
     *
     * @param comp   {@code uct_completion_t *}
     * @param status {@code ucs_status_t}
     */
    public static void uct_completion_update_status(MemorySegment comp, byte status) {
        MemorySegment completion = sized(comp, uct_completion.sizeof());
        if (status != (byte) ucx_h.UCS_OK() && uct_completion.status(completion) == (byte) ucx_h.UCS_OK()) {
            uct_completion.status(completion, status);
        }
    }

    /**
     * The sends of the data path as <em>critical</em> downcalls ({@link Linker.Option#critical}): the same dispatch
     * as the methods of the same names in {@link UctInline}, without the thread-state transition around the call.
     *
     * <p>What that buys is more than the transition's few instructions. Returning from a plain downcall, the thread
     * makes a full memory fence before it looks for a safepoint, and a fence waits until the stores before it are
     * visible to other cores: after a short put or active message over shared memory, those are the stores into the
     * peer's segment or FIFO, whose cache lines the peer is reading. A plain downcall per send therefore waits for
     * a cache-line transfer per send, which native code never does; a critical one lets the stores drain while the
     * next send is prepared. For one-way traffic over shared memory that is most of the cost of a send.
     *
     * <p><b>Only where no Java code can run inside the call.</b> A Java upcall from a critical downcall aborts the
     * JVM, and a critical call holds up safepoints (garbage collection) until it returns. These sends never call a
     * pack callback ({@code short} and {@code zcopy} take the data as it is; their completion, if any, runs later in
     * progress), but a transport may still run code of the application inside a send:
     * <ul>
     *   <li>{@code self} delivers an active message inside {@code uct_ep_am_short} / {@code uct_ep_am_zcopy}, running
     *       the receiving interface's AM handler there: with a Java handler, use the plain form;</li>
     *   <li>a transport that finds its connection broken may call the interface's error handler
     *       ({@code uct_iface_params.err_handler}) inside the send: with a Java error handler, use the plain form.</li>
     * </ul>
     * Puts are safe on every transport of an interface without a Java error handler.
     */
    public static final class Critical {

        private static final Linker.Option CRITICAL = Linker.Option.critical(false);
        private static final MethodHandle PUT_SHORT = handle(uct_ep_put_short_func_t.descriptor());
        private static final MethodHandle PUT_ZCOPY = handle(uct_ep_put_zcopy_func_t.descriptor());
        private static final MethodHandle AM_SHORT = handle(uct_ep_am_short_func_t.descriptor());
        private static final MethodHandle AM_ZCOPY = handle(uct_ep_am_zcopy_func_t.descriptor());

        private Critical() {
        }

        private static MethodHandle handle(FunctionDescriptor descriptor) {
            return Linker.nativeLinker().downcallHandle(descriptor, CRITICAL);
        }

        private static AssertionError unexpected(Throwable t) {
            return new AssertionError("a downcall threw a checked exception", t);
        }

        /**
         * {@link UctInline#uct_ep_put_short} as a critical downcall.
         *
         * @param ep          {@code uct_ep_h}
         * @param buffer      {@code const void *}: a native segment
         * @param length      {@code unsigned}
         * @param remote_addr {@code uint64_t}
         * @param rkey        {@code uct_rkey_t}
         * @return the {@code ucs_status_t} the transport returned
         */
        public static byte uct_ep_put_short(MemorySegment ep, MemorySegment buffer, int length, long remote_addr,
                long rkey) {
            try {
                return (byte) PUT_SHORT.invokeExact(uct_iface_ops.ep_put_short(epOps(ep)), ep, buffer, length,
                        remote_addr, rkey);
            } catch (Error | RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        /**
         * {@link UctInline#uct_ep_put_zcopy} as a critical downcall.
         *
         * @param ep          {@code uct_ep_h}
         * @param iov         {@code const uct_iov_t *}
         * @param iovcnt      {@code size_t}
         * @param remote_addr {@code uint64_t}
         * @param rkey        {@code uct_rkey_t}
         * @param comp        {@code uct_completion_t *}: its {@code func} runs later, in progress
         * @return the {@code ucs_status_t} the transport returned
         */
        public static byte uct_ep_put_zcopy(MemorySegment ep, MemorySegment iov, long iovcnt, long remote_addr,
                long rkey, MemorySegment comp) {
            try {
                return (byte) PUT_ZCOPY.invokeExact(uct_iface_ops.ep_put_zcopy(epOps(ep)), ep, iov, iovcnt,
                        remote_addr, rkey, comp);
            } catch (Error | RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        /**
         * {@link UctInline#uct_ep_am_short} as a critical downcall; not over {@code self} with a Java AM handler.
         *
         * @param ep      {@code uct_ep_h}
         * @param id      {@code uint8_t}
         * @param header  {@code uint64_t}
         * @param payload {@code const void *}: a native segment
         * @param length  {@code unsigned}
         * @return the {@code ucs_status_t} the transport returned
         */
        public static byte uct_ep_am_short(MemorySegment ep, byte id, long header, MemorySegment payload,
                int length) {
            try {
                return (byte) AM_SHORT.invokeExact(uct_iface_ops.ep_am_short(epOps(ep)), ep, id, header, payload,
                        length);
            } catch (Error | RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        /**
         * {@link UctInline#uct_ep_am_zcopy} as a critical downcall; not over {@code self} with a Java AM handler.
         *
         * @param ep            {@code uct_ep_h}
         * @param id            {@code uint8_t}
         * @param header        {@code const void *}
         * @param header_length {@code unsigned}
         * @param iov           {@code const uct_iov_t *}
         * @param iovcnt        {@code size_t}
         * @param flags         {@code unsigned}
         * @param comp          {@code uct_completion_t *}: its {@code func} runs later, in progress
         * @return the {@code ucs_status_t} the transport returned
         */
        public static byte uct_ep_am_zcopy(MemorySegment ep, byte id, MemorySegment header, int header_length,
                MemorySegment iov, long iovcnt, int flags, MemorySegment comp) {
            try {
                return (byte) AM_ZCOPY.invokeExact(uct_iface_ops.ep_am_zcopy(epOps(ep)), ep, id, header,
                        header_length, iov, iovcnt, flags, comp);
            } catch (Error | RuntimeException e) {
                throw e;
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }
    }
}
