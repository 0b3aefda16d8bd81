package io.github.ucxffm;

import io.github.ucxffm.bindings.ucp_context_attr;
import io.github.ucxffm.bindings.ucp_params;
import io.github.ucxffm.bindings.support.UcpInline;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * A UCP context ({@code ucp_context_h}): the UCX library state for one application, with the features it asked
 * for and the transports UCX selected. Workers and memory registrations are made from it.
 * <p>
 * <b>Ownership.</b> The application owns the context; {@link #close()} closes every worker (and their endpoints
 * and listeners) and every memory registration made from it, then calls {@code ucp_cleanup}.
 * <p>
 * <b>Threads.</b> The methods of a context may be called from any thread. Its workers have thread rules of their
 * own, which {@link #close()} respects: while a {@link UcsThreadMode#SINGLE} worker of another thread is open, it
 * throws {@link IllegalStateException} and closes nothing.
 */
public final class UcpContext extends UcxHandle {

    /** {@code UCP_FEATURE_EXPORTED_MEMH}, which UCX 1.13's headers do not define. */
    private static final long FEATURE_EXPORTED_MEMH = 1L << 7;

    /** UCP features ({@code enum ucp_feature}); ask only for what the application uses. */
    public enum Feature {
        /** Tag matching: {@code ucp_tag_send_nbx} and friends. */
        TAG(UCP_FEATURE_TAG(), 1, 0),
        /** Ordered byte streams. */
        STREAM(UCP_FEATURE_STREAM(), 1, 0),
        /** Active messages. */
        AM(UCP_FEATURE_AM(), 1, 0),
        /** Remote memory access: put and get. */
        RMA(UCP_FEATURE_RMA(), 1, 0),
        /** 32-bit remote atomics. */
        AMO32(UCP_FEATURE_AMO32(), 1, 0),
        /** 64-bit remote atomics. */
        AMO64(UCP_FEATURE_AMO64(), 1, 0),
        /** Event-driven progress: {@link UcpWorker#eventFd()}, arm, wait, signal. */
        WAKEUP(UCP_FEATURE_WAKEUP(), 1, 0),
        /** Memory handles exported to other processes; UCX 1.15 or newer. */
        EXPORTED_MEMH(FEATURE_EXPORTED_MEMH, 1, 15);

        final long bit;
        final int sinceMajor;
        final int sinceMinor;

        Feature(long bit, int sinceMajor, int sinceMinor) {
            this.bit = bit;
            this.sinceMajor = sinceMajor;
            this.sinceMinor = sinceMinor;
        }
    }

    private final MemorySegment handle;
    private final Set<Feature> features;

    private UcpContext(MemorySegment handle, Set<Feature> features) {
        super("UcpContext", null);
        this.handle = handle;
        this.features = features;
    }

    /**
     * Starts a context description.
     *
     * @return a builder with no features selected
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Describes a context to create. Not thread-safe; use it from one thread, then discard it.
     */
    public static final class Builder {
        private final EnumSet<Feature> features = EnumSet.noneOf(Feature.class);
        private final Map<String, String> config = new LinkedHashMap<>();
        private long estimatedEndpoints = -1;
        private long tagSenderMask;
        private boolean tagSenderMaskSet;
        private boolean sharedWorkers;
        private String name;

        private Builder() {
        }

        /**
         * Adds features.
         *
         * @param more features the application will use
         * @return this builder
         */
        public Builder features(Feature... more) {
            features.addAll(List.of(more));
            return this;
        }

        /**
         * Overrides a UCX configuration option for this context only, as the environment variable would. A value UCX
         * cannot parse is refused when the context is built; a name UCX does not know is kept by UCX 1.13 without
         * complaint (as it keeps unknown {@code UCX_*} environment variables), so check the spelling.
         *
         * @param key   the option, with or without the {@code UCX_} prefix ({@code "TLS"}, {@code "UCX_TLS"})
         * @param value its value ({@code "shm,self"})
         * @return this builder
         */
        public Builder config(String key, String value) {
            String k = key.startsWith("UCX_") ? key.substring(4) : key;
            if (k.isEmpty()) {
                throw new IllegalArgumentException("empty UCX option name");
            }
            config.put(k, Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Tells UCX how many endpoints to expect, so it can size its resources.
         *
         * @param count expected number of endpoints, positive
         * @return this builder
         */
        public Builder estimatedEndpoints(long count) {
            if (count <= 0) {
                throw new IllegalArgumentException("estimated endpoint count must be positive: " + count);
            }
            this.estimatedEndpoints = count;
            return this;
        }

        /**
         * The bits of a tag that identify the sender ({@code tag_sender_mask}), used by UCX to tell senders apart
         * in error handling and by probe.
         *
         * @param mask the sender bits of tags
         * @return this builder
         */
        public Builder tagSenderMask(long mask) {
            this.tagSenderMask = mask;
            this.tagSenderMaskSet = true;
            return this;
        }

        /**
         * Whether workers of this context may be used from several threads ({@code mt_workers_shared}).
         *
         * @param shared {@code true} if workers are shared between threads
         * @return this builder
         */
        public Builder sharedWorkers(boolean shared) {
            this.sharedWorkers = shared;
            return this;
        }

        /**
         * A name for the context, shown in UCX's logs and {@link UcpContext#describe()}.
         *
         * @param contextName the name
         * @return this builder
         */
        public Builder name(String contextName) {
            this.name = contextName;
            return this;
        }

        /**
         * Creates the context.
         *
         * @return the new context, owned by the caller
         * @throws IllegalArgumentException if no feature was asked for, or an option is unknown to UCX
         * @throws UnsupportedOperationException if a feature needs a newer UCX than this process runs
         * @throws UcxException if UCX cannot create the context
         */
        public UcpContext build() {
            if (features.isEmpty()) {
                throw new IllegalArgumentException("a UCP context needs at least one feature");
            }
            UcxVersion runtime = UcxVersion.runtime();
            long bits = 0;
            for (Feature f : features) {
                if (!runtime.atLeast(f.sinceMajor, f.sinceMinor)) {
                    throw new UnsupportedOperationException("feature " + f + " needs UCX " + f.sinceMajor + "."
                            + f.sinceMinor + " or newer; this process runs UCX " + runtime);
                }
                bits |= f.bit;
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment configP = arena.allocate(ADDRESS);
                Status.check(ucp_config_read(MemorySegment.NULL, MemorySegment.NULL, configP), "ucp_config_read");
                MemorySegment configH = configP.get(ADDRESS, 0);
                try {
                    Map<String, String> options = new LinkedHashMap<>(config);
                    if (needsProtocolsV1(runtime, config)) {
                        options.put("PROTO_ENABLE", "n");
                    }
                    if (needsIndirectIds(runtime, config)) {
                        options.put("PROTO_INDIRECT_ID", "on");
                    }
                    for (Map.Entry<String, String> e : options.entrySet()) {
                        byte s = ucp_config_modify(configH, arena.allocateFrom(e.getKey()),
                                arena.allocateFrom(e.getValue()));
                        if (s == UCS_ERR_NO_ELEM() && !config.containsKey(e.getKey())) {
                            continue; // a workaround of ours for an option this release does not have: not needed
                        }
                        if (s == UCS_ERR_NO_ELEM()) {
                            throw new IllegalArgumentException("UCX has no option UCX_" + e.getKey());
                        }
                        if (s != UCS_OK()) {
                            throw new IllegalArgumentException("UCX rejects UCX_" + e.getKey() + "=" + e.getValue()
                                    + ": " + UcsStatus.describe(s));
                        }
                    }
                    MemorySegment params = ucp_params.allocate(arena);
                    long mask = UCP_PARAM_FIELD_FEATURES() | UCP_PARAM_FIELD_MT_WORKERS_SHARED();
                    ucp_params.features(params, bits);
                    ucp_params.mt_workers_shared(params, sharedWorkers ? 1 : 0);
                    if (estimatedEndpoints > 0) {
                        mask |= UCP_PARAM_FIELD_ESTIMATED_NUM_EPS();
                        ucp_params.estimated_num_eps(params, estimatedEndpoints);
                    }
                    if (tagSenderMaskSet) {
                        mask |= UCP_PARAM_FIELD_TAG_SENDER_MASK();
                        ucp_params.tag_sender_mask(params, tagSenderMask);
                    }
                    if (name != null) {
                        mask |= UCP_PARAM_FIELD_NAME();
                        ucp_params.name(params, arena.allocateFrom(name));
                    }
                    ucp_params.field_mask(params, mask);
                    MemorySegment contextP = arena.allocate(ADDRESS);
                    Status.check(UcpInline.ucp_init(params, configH, contextP), "ucp_init");
                    return new UcpContext(contextP.get(ADDRESS, 0), Collections.unmodifiableSet(
                            EnumSet.copyOf(features)));
                } finally {
                    ucp_config_release(configH);
                }
            }
        }
    }

    /**
     * Whether a context must use UCX's first protocol implementation ({@code UCX_PROTO_ENABLE=n}) rather than the
     * "new protocols" that UCX 1.14+ select by default (1.13 uses the first one by default). With the new protocols
     * of 1.18.1 and 1.23.0, remote atomics emulated in software (tcp) on an endpoint with
     * {@code UCP_ERR_HANDLING_MODE_PEER}, which ucx-ffm uses by default, never work: 1.23.0 cancels every one
     * ({@code UCS_ERR_CANCELED}, logging "proto_reconfig.c: cannot find remote protocol for ... amo_fetch") and fails
     * the endpoint; 1.18.1 finds no fetching-atomic protocol and, between two workers of one process, aborts in
     * {@code tcp_ep.c:1041} ({@code ucs_queue_is_empty(&ep->pending_q)}). With {@code UCX_PROTO_ENABLE=n} both
     * compute them exactly. And with the new protocols of 1.18.1, a 1 MiB tag echo over tcp with a surviving peer,
     * right after another peer of the same worker was SIGKILLed, completed with the tail of the data missing (zeros
     * from about 650 to 800 KiB on) in 1 of 3 to 5 runs of {@code PeerFailureTest}, or never completed; with the first
     * protocols, 6 runs of 6 were exact. So every context uses the first protocols on 1.14 to 1.18, unless the
     * application chose {@code PROTO_ENABLE} itself, through {@link Builder#config} or the environment. Not on
     * 1.19+: the first protocols of 1.23.0 refuse {@code ucp_put_nbx} and {@code ucp_get_nbx}
     * ({@code UCS_ERR_UNSUPPORTED}), so there atomics over tcp need an endpoint without peer error handling.
     */
    static boolean needsProtocolsV1(UcxVersion runtime, Map<String, String> config) {
        return runtime.atLeast(1, 14) && !runtime.atLeast(1, 19)
                && !config.containsKey("PROTO_ENABLE")
                && System.getenv("UCX_PROTO_ENABLE") == null;
    }

    /**
     * Whether a context must give every endpoint's requests indirect ids ({@code UCX_PROTO_INDIRECT_ID=on}; UCX's
     * default, {@code auto}, does so only for endpoints with peer error handling). UCX purges the requests of a failed
     * endpoint through that tracking only: on an endpoint without peer error handling whose failure UCX reports all
     * the same (a listener connection's TCP connection-manager lane), a rendezvous send in flight never completes, and
     * from UCX 1.14 on, whose registration cache belongs to the context, the registration it holds makes
     * {@code ucp_cleanup} abort the process ({@code rcache.c: Assertion 'region->refcount == 0'}) on builds with
     * assertions, such as Debian's 1.18.1 and 1.23.0. With indirect ids the send fails with the endpoint and nothing
     * is left. UCX 1.13 only logs the request as "not returned to mpool", and is left as it is. The application's own
     * {@code PROTO_INDIRECT_ID}, through {@link Builder#config} or the environment, wins. See docs/UCX-BEHAVIOUR.md.
     */
    static boolean needsIndirectIds(UcxVersion runtime, Map<String, String> config) {
        return runtime.atLeast(1, 14) && !config.containsKey("PROTO_INDIRECT_ID")
                && System.getenv("UCX_PROTO_INDIRECT_ID") == null;
    }

    /** The native {@code ucp_context_h}, for use with the raw bindings; valid until close. */
    MemorySegment handle() {
        ensureOpen();
        return handle;
    }

    /**
     * The native handle for calls through the raw bindings ({@code io.github.ucxffm.bindings}).
     *
     * @return the {@code ucp_context_h}; it dangles after {@link #close()}
     */
    public MemorySegment nativeHandle() {
        return handle();
    }

    /**
     * The features this context was created with.
     *
     * @return an unmodifiable set
     */
    public Set<Feature> features() {
        return features;
    }

    boolean has(Feature f) {
        return features.contains(f);
    }

    /**
     * The UCX release this process runs.
     *
     * @return the runtime version
     */
    public UcxVersion ucxVersion() {
        return UcxVersion.runtime();
    }

    private MemorySegment query(Arena arena, long fields) {
        MemorySegment attr = ucp_context_attr.allocate(arena);
        ucp_context_attr.field_mask(attr, fields);
        Status.check(ucp_context_query(handle(), attr), "ucp_context_query");
        return attr;
    }

    /**
     * The size UCX reserves for its request structures.
     *
     * @return bytes per request
     */
    public long requestSize() {
        try (Arena arena = Arena.ofConfined()) {
            return ucp_context_attr.request_size(query(arena, UCP_ATTR_FIELD_REQUEST_SIZE()));
        }
    }

    /**
     * The thread level the context supports.
     *
     * @return the context's thread mode
     */
    public UcsThreadMode threadMode() {
        try (Arena arena = Arena.ofConfined()) {
            return UcsThreadMode.of(ucp_context_attr.thread_mode(query(arena, UCP_ATTR_FIELD_THREAD_MODE())));
        }
    }

    /**
     * The memory types UCX can access with this context.
     *
     * @return the supported memory types ({@link UcsMemoryType#HOST} at least)
     */
    public Set<UcsMemoryType> memoryTypes() {
        try (Arena arena = Arena.ofConfined()) {
            long bits = ucp_context_attr.memory_types(query(arena, UCP_ATTR_FIELD_MEMORY_TYPES()));
            EnumSet<UcsMemoryType> types = EnumSet.noneOf(UcsMemoryType.class);
            for (UcsMemoryType t : UcsMemoryType.values()) {
                if ((bits & (1L << t.code())) != 0) {
                    types.add(t);
                }
            }
            return types;
        }
    }

    /**
     * UCX's description of this context ({@code ucp_context_print_info}): transports, devices, settings.
     *
     * @return the text UCX prints
     */
    public String describe() {
        MemorySegment h = handle();
        return Libc.printToString(stream -> ucp_context_print_info(h, stream));
    }

    /**
     * Creates a worker confined to the calling thread ({@link UcsThreadMode#SINGLE}).
     *
     * @return the worker, owned by this context
     */
    public UcpWorker newWorker() {
        return newWorker(UcsThreadMode.SINGLE);
    }

    /**
     * Creates a worker.
     *
     * @param mode which threads may use it; SINGLE confines it to the calling thread
     * @return the worker, owned by this context
     */
    public UcpWorker newWorker(UcsThreadMode mode) {
        ensureOpen();
        return new UcpWorker(this, mode, 0);
    }

    /**
     * Creates a worker with a client id, which servers see in {@link UcpConnectionRequest#clientId()} when the
     * worker connects with {@link UcpEndpoint.Params#sendClientId(boolean)}.
     *
     * @param mode     which threads may use it
     * @param clientId the id to send, non-zero
     * @return the worker, owned by this context
     */
    public UcpWorker newWorker(UcsThreadMode mode, long clientId) {
        ensureOpen();
        if (clientId == 0) {
            throw new IllegalArgumentException("client id 0 means 'none'; use newWorker(mode)");
        }
        return new UcpWorker(this, mode, clientId);
    }

    /**
     * Registers application memory for RMA and zero-copy ({@code ucp_mem_map} of an existing region). The
     * segment stays strongly reachable while registered.
     *
     * @param segment native memory, from any arena
     * @return the registration, owned by this context
     */
    public UcpMemory register(MemorySegment segment) {
        ensureOpen();
        if (!segment.isNative() || segment.byteSize() == 0) {
            throw new IllegalArgumentException("only non-empty native memory can be registered: " + segment);
        }
        return UcpMemory.map(this, segment, segment.byteSize(), UcsMemoryType.HOST);
    }

    /**
     * Lets UCX allocate and register host memory ({@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}).
     *
     * @param size bytes, positive
     * @return the registration; {@link UcpMemory#segment()} is the memory
     */
    public UcpMemory allocate(long size) {
        return allocate(size, UcsMemoryType.HOST);
    }

    /**
     * Lets UCX allocate and register memory of a given type.
     *
     * @param size bytes, positive
     * @param type where the memory lives; must be in {@link #memoryTypes()}
     * @return the registration
     */
    public UcpMemory allocate(long size, UcsMemoryType type) {
        ensureOpen();
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        return UcpMemory.map(this, null, size, type);
    }

    /** The handle without checks, for children releasing while the context closes. */
    MemorySegment nativeHandleUnchecked() {
        return handle;
    }

    /**
     * A worker refuses to be closed off its thread, but only once the context has begun closing: the context would
     * then call {@code ucp_cleanup} under a worker still alive. Check every worker first, before anything is closed.
     */
    @Override
    void beforeClose() {
        for (UcxHandle child : childrenSnapshot()) {
            if (child instanceof UcpWorker w) {
                w.checkClosable();
            }
        }
    }

    /**
     * Workers go first: their operations may still use registered memory, which UCX refuses to clean up while in
     * use (it aborts the process in {@code ucp_cleanup}).
     */
    @Override
    List<UcxHandle> closeOrder(List<UcxHandle> children) {
        List<UcxHandle> order = new ArrayList<>();
        for (UcxHandle c : children) {
            if (!(c instanceof UcpWorker)) {
                order.add(c);
            }
        }
        for (UcxHandle c : children) {
            if (c instanceof UcpWorker) {
                order.add(c); // closed first: the list is closed from its end
            }
        }
        return order;
    }

    @Override
    void release() {
        ucp_cleanup(handle);
    }

    @Override
    public String toString() {
        return "UcpContext" + features + (isClosed() ? " (closed)" : "");
    }
}
