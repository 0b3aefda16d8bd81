package io.github.ucxffm.bench.perftest;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The control messages of a runner's session, the same for every implementation: the client's request (the test
 * parameters, as {@code ucx_perftest}'s client sends them to its server), the server's reply, and the barriers
 * around the measured run. Each side's remote key and region address travel in the request and the reply, for the
 * one-sided tests. Control messages are tag messages with {@link #CONTROL_TAG}; the tests' own messages use
 * {@link #DATA_TAG}.
 */
public final class Handshake {

    /** The tag of control messages. */
    public static final long CONTROL_TAG = 0x5045_5246_0000_0001L;
    /** The tag of the tests' tag messages. */
    public static final long DATA_TAG = 0x5045_5246_0000_0002L;
    /** The active-message id of the active-message tests. */
    public static final int AM_ID = 7;
    /** The largest control message. */
    public static final int MAX_MESSAGE = 8192;

    private static final int MAGIC = 0x55435850; // "UCXP"
    private static final int VERSION = 5; // 5: a paired run cycles through three kinds of block
    private static final byte REQUEST = 1;
    private static final byte REPLY = 2;
    private static final byte BARRIER = 3;

    private Handshake() {
    }

    /**
     * The client's request.
     *
     * @param test       the test
     * @param size       message size
     * @param iterations measured iterations
     * @param warmup     warm-up iterations asked for
     * @param window     {@code -O} as given (0 for the default)
     * @param rkey       the client's packed remote key, empty if none
     * @param address    the address of the client's region
     * @param sleep      the wait mode ({@code -E sleep})
     * @param threads    threads ({@code -T})
     * @param paired     round trips per block of a paired run ({@code --paired}), 0 for none
     */
    public record Request(PerfTestType test, long size, long iterations, long warmup, int window, byte[] rkey,
                          long address, boolean sleep, int threads, int paired) {
    }

    /**
     * The server's reply.
     *
     * @param rkey    the server's packed remote key, empty if none
     * @param address the address of the server's region
     * @param ports   with several threads ({@code -T}), the ports the server's threads 1, 2... listen on, each for
     *                the client's thread of the same number; empty otherwise
     */
    public record Reply(byte[] rkey, long address, int[] ports) {
    }

    private static ByteBuffer header(int capacity, byte kind) {
        ByteBuffer b = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putInt(VERSION).put(kind);
        return b;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        if (out.length > MAX_MESSAGE) {
            throw new IllegalArgumentException("control message of " + out.length + " bytes exceeds " + MAX_MESSAGE);
        }
        return out;
    }

    private static ByteBuffer open(byte[] message, int length, byte kind) {
        ByteBuffer b = ByteBuffer.wrap(message, 0, length).order(ByteOrder.LITTLE_ENDIAN);
        try {
            int magic = b.getInt();
            int version = b.getInt();
            byte k = b.get();
            if (magic != MAGIC) {
                throw new IllegalArgumentException("not a perftest control message (magic 0x"
                        + Integer.toHexString(magic) + "): is the peer another kind of runner?");
            }
            if (version != VERSION) {
                throw new IllegalArgumentException("control message version " + version + ", expected " + VERSION);
            }
            if (k != kind) {
                throw new IllegalArgumentException("control message of kind " + k + ", expected " + kind);
            }
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated control message (" + length + " bytes)", e);
        }
        return b;
    }

    /**
     * Encodes the client's request.
     *
     * @param p       the client's parameters
     * @param rkey    its packed remote key (may be empty)
     * @param address its region's address
     * @return the message
     */
    public static byte[] request(PerfParams p, byte[] rkey, long address) {
        byte[] name = p.test().testName().getBytes(StandardCharsets.US_ASCII);
        ByteBuffer b = header(64 + name.length + rkey.length, REQUEST);
        b.putInt(name.length).put(name).putLong(p.size()).putLong(p.iterations()).putLong(p.warmup())
                .putInt(p.window()).putLong(address).putInt(rkey.length).put(rkey).put((byte) (p.sleep() ? 1 : 0))
                .putInt(p.threads()).putInt(p.paired());
        return bytes(b);
    }

    /**
     * Decodes a request.
     *
     * @param message the bytes received
     * @param length  how many arrived
     * @return the request
     * @throws IllegalArgumentException if it is not one
     */
    public static Request parseRequest(byte[] message, int length) {
        ByteBuffer b = open(message, length, REQUEST);
        try {
            byte[] name = new byte[checkedLength(b.getInt(), b)];
            b.get(name);
            PerfTestType test = PerfTestType.byName(new String(name, StandardCharsets.US_ASCII));
            long size = b.getLong();
            long iterations = b.getLong();
            long warmup = b.getLong();
            int window = b.getInt();
            long address = b.getLong();
            byte[] rkey = new byte[checkedLength(b.getInt(), b)];
            b.get(rkey);
            boolean sleep = b.get() != 0;
            int threads = b.getInt();
            if (threads < 1 || threads > PerfParams.MAX_THREADS) {
                throw new IllegalArgumentException("bad thread count " + threads + " in request");
            }
            int paired = b.getInt();
            if (paired < 0 || paired > PerfParams.MAX_PAIRED_BLOCK) {
                throw new IllegalArgumentException("bad paired block size " + paired + " in request");
            }
            return new Request(test, size, iterations, warmup, window, rkey, address, sleep, threads, paired);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated request (" + length + " bytes)", e);
        }
    }

    /**
     * Encodes the server's reply.
     *
     * @param rkey    its packed remote key (may be empty)
     * @param address its region's address
     * @return the message
     */
    public static byte[] reply(byte[] rkey, long address) {
        return reply(rkey, address, new int[0]);
    }

    /**
     * Encodes the server's reply with the ports of its other threads.
     *
     * @param rkey    its packed remote key (may be empty)
     * @param address its region's address
     * @param ports   the ports its threads 1, 2... listen on
     * @return the message
     */
    public static byte[] reply(byte[] rkey, long address, int[] ports) {
        ByteBuffer b = header(32 + rkey.length + 4 * ports.length, REPLY);
        b.putLong(address).putInt(rkey.length).put(rkey).putInt(ports.length);
        for (int port : ports) {
            b.putInt(port);
        }
        return bytes(b);
    }

    /**
     * Decodes a reply.
     *
     * @param message the bytes received
     * @param length  how many arrived
     * @return the reply
     * @throws IllegalArgumentException if it is not one
     */
    public static Reply parseReply(byte[] message, int length) {
        ByteBuffer b = open(message, length, REPLY);
        try {
            long address = b.getLong();
            byte[] rkey = new byte[checkedLength(b.getInt(), b)];
            b.get(rkey);
            int n = b.getInt();
            if (n < 0 || n >= PerfParams.MAX_THREADS || n * 4L > b.remaining()) {
                throw new IllegalArgumentException("bad port count " + n + " in reply");
            }
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ports[i] = b.getInt();
            }
            return new Reply(rkey, address, ports);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated reply (" + length + " bytes)", e);
        }
    }

    /**
     * A barrier message: which barrier it is, so that a side out of step is caught, and a value for the peer (the
     * warm-up rounds exchange what decides whether another round follows).
     *
     * @param sequence the barrier's number
     * @param value    what this side tells the peer
     * @return the message
     */
    public static byte[] barrier(int sequence, int value) {
        ByteBuffer b = header(24, BARRIER);
        b.putInt(sequence).putInt(value);
        return bytes(b);
    }

    /**
     * Checks a barrier message and returns the peer's value.
     *
     * @param message  the bytes received
     * @param length   how many arrived
     * @param sequence the barrier expected
     * @return the value the peer sent
     * @throws IllegalStateException    if it is another barrier
     * @throws IllegalArgumentException if it is not a barrier or is truncated
     */
    public static int checkBarrier(byte[] message, int length, int sequence) {
        ByteBuffer b = open(message, length, BARRIER);
        try {
            int got = b.getInt();
            if (got != sequence) {
                throw new IllegalStateException("peer is at barrier " + got + ", this side at " + sequence);
            }
            return b.getInt();
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated barrier (" + length + " bytes)", e);
        }
    }

    private static int checkedLength(int n, ByteBuffer b) {
        if (n < 0 || n > b.remaining()) {
            throw new IllegalArgumentException("bad length " + n + " in control message");
        }
        return n;
    }
}
