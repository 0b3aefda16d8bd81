package io.github.ucxffm.netty;

import java.util.concurrent.atomic.LongAdder;

/**
 * Process-wide counters of the UCX transport, for tests and monitoring that want proof that bytes went through UCX.
 * Every method may be called from any thread; the values only grow. Each {@link UcxSocketChannel} has the same
 * counters for itself.
 */
public final class UcxTransportStats {

    private static final LongAdder BYTES_SENT = new LongAdder();
    private static final LongAdder BYTES_RECEIVED = new LongAdder();
    private static final LongAdder MESSAGES_SENT = new LongAdder();
    private static final LongAdder MESSAGES_RECEIVED = new LongAdder();
    private static final LongAdder CHANNELS_OPENED = new LongAdder();
    private static final LongAdder RENDEZVOUS_RECEIVED = new LongAdder();

    private UcxTransportStats() {
    }

    /**
     * Payload bytes handed to UCX as active messages, all channels.
     *
     * @return bytes
     */
    public static long bytesSent() {
        return BYTES_SENT.sum();
    }

    /**
     * Payload bytes that arrived from UCX, all channels.
     *
     * @return bytes
     */
    public static long bytesReceived() {
        return BYTES_RECEIVED.sum();
    }

    /**
     * Data active messages sent, all channels.
     *
     * @return messages
     */
    public static long messagesSent() {
        return MESSAGES_SENT.sum();
    }

    /**
     * Data active messages received, all channels.
     *
     * @return messages
     */
    public static long messagesReceived() {
        return MESSAGES_RECEIVED.sum();
    }

    /**
     * Socket channels whose UCX endpoint was created (connected or accepted).
     *
     * @return channels
     */
    public static long channelsOpened() {
        return CHANNELS_OPENED.sum();
    }

    /**
     * Data messages that UCX delivered by rendezvous, fetched straight into the receiving buffer.
     *
     * @return messages
     */
    public static long rendezvousReceived() {
        return RENDEZVOUS_RECEIVED.sum();
    }

    static void rendezvous() {
        RENDEZVOUS_RECEIVED.increment();
    }

    static void sent(long bytes) {
        BYTES_SENT.add(bytes);
        MESSAGES_SENT.increment();
    }

    static void received(long bytes) {
        BYTES_RECEIVED.add(bytes);
        MESSAGES_RECEIVED.increment();
    }

    static void opened() {
        CHANNELS_OPENED.increment();
    }
}
