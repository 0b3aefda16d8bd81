package io.github.ucxffm.netty;

import io.netty.buffer.ByteBuf;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The wire format (see the package comment) and the bridge from Netty buffers to native segments.
 */
final class Wire {

    /** Active-message id of data: header {@code [int dst][int flags][long seq]}, the payload as data. */
    static final int AM_DATA = 0x5543;
    /** Active-message id of control: header {@code [int dst][int type][long value][int src][int window]}. */
    static final int AM_CONTROL = 0x5544;

    static final int DATA_HEADER = 16;
    static final int CONTROL_HEADER = 24;

    /** Data flag: the sender shut its output; nothing follows. */
    static final int FLAG_EOS = 1;
    /** Data flag: the sender closed its channel (set with {@link #FLAG_EOS}). */
    static final int FLAG_CLOSING = 2;
    /**
     * Data flag: the sender closed with {@code SO_LINGER} 0 (set with {@link #FLAG_EOS} and {@link #FLAG_CLOSING}):
     * the receiver fails the stream at once, as on a TCP reset, dropping what it has not passed up.
     */
    static final int FLAG_RESET = 4;

    /**
     * Control: a client's first message, sent with the reply flag; {@code src} and {@code window} are its own, and
     * {@code value} the largest data message it takes in over tcp.
     */
    static final int HELLO = 1;
    /** Control: the server's answer to {@link #HELLO}, to {@code dst}, with its own id, window and tcp limit. */
    static final int HELLO_ACK = 2;
    /** Control: {@code value} more bytes may be sent to the sender of this message. */
    static final int CREDIT = 3;

    private Wire() {
    }

    /**
     * A native view of {@code length} bytes of a direct buffer from {@code index}. The buffer must stay referenced
     * for as long as the segment is in use.
     */
    static MemorySegment segment(ByteBuf buf, int index, int length) {
        if (buf.hasMemoryAddress()) {
            return MemorySegment.ofAddress(buf.memoryAddress() + index).reinterpret(length);
        }
        return MemorySegment.ofBuffer(buf.nioBuffer(index, length));
    }

    /** Adds the native views of a direct buffer's bytes to {@code out} from {@code at}; returns the next index. */
    static int segments(ByteBuf buf, int index, int length, MemorySegment[] out, int at) {
        if (buf.nioBufferCount() == 1 || buf.hasMemoryAddress()) {
            out[at] = segment(buf, index, length);
            return at + 1;
        }
        for (ByteBuffer b : buf.nioBuffers(index, length)) {
            if (b.remaining() > 0) {
                out[at++] = MemorySegment.ofBuffer(b);
            }
        }
        return at;
    }
}
