package io.github.ucxffm.samples;

import io.github.ucxffm.UcpContext;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The shortest ucx-ffm program: a server accepts one client; the client sends a greeting, the server answers, both
 * close.
 * <p>
 * Wire protocol: the client sends a tag message, tag {@value #TAG_HELLO}, holding UTF-8 text; the server answers
 * with a tag message, tag {@value #TAG_REPLY}, holding UTF-8 text. Texts are at most {@value #MAX} bytes.
 */
public final class Hello {

    /** Tag of the client's greeting. */
    public static final long TAG_HELLO = 1;
    /** Tag of the server's answer. */
    public static final long TAG_REPLY = 2;
    /** Longest text either side accepts. */
    public static final int MAX = 256;

    private Hello() {
    }

    static void run(String[] args) {
        SampleOptions options = SampleOptions.parse(args);
        try (Arena arena = Arena.ofConfined(); // freed last: after the worker, which may still write into it
             Session s = Session.open("hello", options, UcpContext.Feature.TAG)) {
            MemorySegment buffer = arena.allocate(MAX);
            if (options.server()) {
                s.await(s.worker.receiveTag(buffer, 0, MAX, TAG_HELLO, -1L), "waiting for the greeting");
                System.out.println("hello: client says '" + text(buffer, s.worker.receivedLength()) + "'");
                MemorySegment reply = arena.allocateFrom(JAVA_BYTE, "hello from the server".getBytes(
                        StandardCharsets.UTF_8));
                s.await(s.endpoint.sendTag(reply, 0, reply.byteSize(), TAG_REPLY), "answering");
            } else {
                MemorySegment greeting = arena.allocateFrom(JAVA_BYTE, "hello from the client".getBytes(
                        StandardCharsets.UTF_8));
                long reply = s.worker.receiveTag(buffer, 0, MAX, TAG_REPLY, -1L);
                s.await(s.endpoint.sendTag(greeting, 0, greeting.byteSize(), TAG_HELLO), "greeting the server");
                s.await(reply, "waiting for the answer");
                System.out.println("hello: server says '" + text(buffer, s.worker.receivedLength()) + "'");
            }
        }
    }

    private static String text(MemorySegment buffer, long length) {
        return new String(buffer.asSlice(0, length).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
    }
}
