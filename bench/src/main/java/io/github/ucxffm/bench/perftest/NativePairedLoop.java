package io.github.ucxffm.bench.perftest;

import io.github.ucxffm.UcsStatus;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The C half of a paired run ({@code --paired}): {@code bench/native/ucp_paired.c}, a shared library named by
 * {@link #LIBRARY_VARIABLE}, run on the Java runner's own worker, endpoint and buffers. Its calls are ordinary
 * (not critical) downcalls, so UCX may run any callback of the worker inside them. One per runner; not thread-safe.
 */
final class NativePairedLoop {

    /** The environment variable naming the library, which {@code ./ucx-ffm perftest} builds and sets. */
    static final String LIBRARY_VARIABLE = "UCXFFM_PAIRED_LIBRARY";

    private static final int OP_TAG = 0;
    private static final int OP_TAG_SYNC = 1;
    private static final int OP_STREAM = 2;
    private static final int OP_AM = 3;

    // int64_t ucxffm_paired_ping(worker, ep, op, send, recv, size, tag, n, stamps)
    private static final FunctionDescriptor PING = FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_INT,
            ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS);
    // int64_t ucxffm_paired_pong(worker, ep, op, send, recv, size, tag, n)
    private static final FunctionDescriptor PONG = FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_INT,
            ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    // int64_t ucxffm_paired_am_setup(worker, id)
    private static final FunctionDescriptor AM_SETUP = FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT);

    private final MethodHandle ping;
    private final MethodHandle pong;
    private final MemorySegment worker;
    private final MemorySegment endpoint;
    private final int op;
    private final MemorySegment send;
    private final MemorySegment recv;
    private final long size;
    private final long tag;
    private final MemorySegment stamps;

    /**
     * The library {@link #LIBRARY_VARIABLE} names, checked to exist.
     *
     * @return its path
     * @throws UnsupportedOperationException when the variable is unset or names no file
     */
    static Path library() {
        String name = System.getenv(LIBRARY_VARIABLE);
        if (name == null || name.isBlank()) {
            throw new UnsupportedOperationException("--paired needs the C loop library: set " + LIBRARY_VARIABLE
                    + " to the library built from bench/native/ucp_paired.c (./ucx-ffm perftest builds and sets it)");
        }
        Path path = Path.of(name);
        if (!Files.isRegularFile(path)) {
            throw new UnsupportedOperationException(LIBRARY_VARIABLE + " names no file: " + path);
        }
        return path;
    }

    /**
     * Loads the library and binds its loop to one worker and endpoint.
     *
     * @param worker    the {@code ucp_worker_h}
     * @param endpoint  the {@code ucp_ep_h}
     * @param operation what the ping-pong does: tag, synchronous tag, stream or active messages
     * @param send      the send buffer
     * @param recv      the receive buffer
     * @param size      message size
     * @param tag       the tag of tag messages; for active messages the id of the C blocks' messages, on which this
     *                  constructor registers the C loop's handler (before the peer can send one)
     * @param blockSize the largest block, for the clock stamps
     * @param arena     where the stamps live
     */
    NativePairedLoop(MemorySegment worker, MemorySegment endpoint, PerfTestType.Operation operation,
                     MemorySegment send, MemorySegment recv, long size, long tag, int blockSize, Arena arena) {
        SymbolLookup lookup = SymbolLookup.libraryLookup(library(), Arena.global());
        Linker linker = Linker.nativeLinker();
        this.ping = linker.downcallHandle(lookup.find("ucxffm_paired_ping").orElseThrow(), PING);
        this.pong = linker.downcallHandle(lookup.find("ucxffm_paired_pong").orElseThrow(), PONG);
        this.worker = worker;
        this.endpoint = endpoint;
        this.op = switch (operation) {
            case TAG -> OP_TAG;
            case TAG_SYNC -> OP_TAG_SYNC;
            case STREAM -> OP_STREAM;
            case AM -> OP_AM;
            default -> throw new UnsupportedOperationException("--paired has no C loop for " + operation);
        };
        this.send = send;
        this.recv = recv;
        this.size = size;
        this.tag = tag;
        this.stamps = arena.allocate(JAVA_LONG, blockSize);
        if (op == OP_AM) {
            MethodHandle setup = linker.downcallHandle(lookup.find("ucxffm_paired_am_setup").orElseThrow(), AM_SETUP);
            long status;
            try {
                status = (long) setup.invokeExact(worker, (int) tag);
            } catch (Throwable t) {
                throw new IllegalStateException("ucxffm_paired_am_setup", t);
            }
            check(status, "ucxffm_paired_am_setup");
        }
    }

    /**
     * The client's {@code n} round trips in C.
     *
     * @param n   round trips, at most the block size
     * @param out the clock after each
     */
    void ping(int n, long[] out) {
        long status;
        try {
            status = (long) ping.invokeExact(worker, endpoint, op, send, recv, size, tag, (long) n, stamps);
        } catch (Throwable t) {
            throw new IllegalStateException("ucxffm_paired_ping", t);
        }
        check(status, "ucxffm_paired_ping");
        MemorySegment.copy(stamps, JAVA_LONG, 0, out, 0, n);
    }

    /**
     * The server's {@code n} round trips in C.
     *
     * @param n round trips
     */
    void pong(int n) {
        long status;
        try {
            status = (long) pong.invokeExact(worker, endpoint, op, send, recv, size, tag, (long) n);
        } catch (Throwable t) {
            throw new IllegalStateException("ucxffm_paired_pong", t);
        }
        check(status, "ucxffm_paired_pong");
    }

    private static void check(long status, String call) {
        if (status != 0) {
            UcsStatus s = UcsStatus.of((int) status);
            throw new IllegalStateException(call + " failed: " + s + " (" + s.description() + ")");
        }
    }
}
