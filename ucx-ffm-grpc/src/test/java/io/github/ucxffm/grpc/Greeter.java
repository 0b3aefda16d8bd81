package io.github.ucxffm.grpc;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * A small gRPC service defined by hand (no generated code), as an application would have it, with nothing of UCX in
 * it: a unary greeting, a server stream of pseudo-random bytes whose CRC-32 the server sends in its trailers, and a
 * call the server never answers (for cancellation and deadlines).
 */
final class Greeter {

    static final String SERVICE = "ucxffm.test.Greeter";
    /** The trailer carrying the CRC-32 of every byte the server streamed, in decimal. */
    static final Metadata.Key<String> CRC_TRAILER = Metadata.Key.of("x-crc32", Metadata.ASCII_STRING_MARSHALLER);
    /** Size of the chunks of a download. */
    static final int CHUNK = 1 << 20;

    static final MethodDescriptor.Marshaller<String> TEXT = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            return new String(readAll(stream), StandardCharsets.UTF_8);
        }
    };

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            return readAll(stream);
        }
    };

    static final MethodDescriptor<String, String> SAY_HELLO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "SayHello"))
            .setRequestMarshaller(TEXT).setResponseMarshaller(TEXT).build();

    /** Request: the number of bytes, in decimal; responses: chunks of at most {@link #CHUNK} bytes. */
    static final MethodDescriptor<String, byte[]> DOWNLOAD = MethodDescriptor.<String, byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Download"))
            .setRequestMarshaller(TEXT).setResponseMarshaller(BYTES).build();

    /** Never answered: ends only when the client cancels or its deadline passes. */
    static final MethodDescriptor<String, String> WAIT = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Wait"))
            .setRequestMarshaller(TEXT).setResponseMarshaller(TEXT).build();

    private Greeter() {
    }

    /** The service; {@code onWaitCancelled} runs each time a {@link #WAIT} call is cancelled on the server. */
    static ServerServiceDefinition service(Runnable onWaitCancelled) {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(SAY_HELLO, ServerCalls.asyncUnaryCall((name, out) -> {
                    out.onNext("hello, " + name);
                    out.onCompleted();
                }))
                .addMethod(DOWNLOAD, download())
                .addMethod(WAIT, ServerCalls.asyncUnaryCall((request, out) ->
                        ((ServerCallStreamObserver<String>) out).setOnCancelHandler(onWaitCancelled)))
                .build();
    }

    /**
     * Streams the bytes as the transport is ready for them (gRPC's flow control), then closes with the CRC-32 of what
     * it sent in the trailers.
     */
    private static ServerCallHandler<String, byte[]> download() {
        return (call, headers) -> {
            call.request(1);
            return new ServerCall.Listener<>() {
                private final Pattern pattern = new Pattern();
                private final CRC32 crc = new CRC32();
                private long total = -1;
                private long sent;
                private boolean closed;

                @Override
                public void onMessage(String request) {
                    try {
                        total = Long.parseLong(request);
                    } catch (NumberFormatException e) {
                        closed = true;
                        call.close(Status.INVALID_ARGUMENT.withDescription("not a byte count: " + request),
                                new Metadata());
                        return;
                    }
                    call.sendHeaders(new Metadata());
                    onReady();
                }

                @Override
                public void onReady() {
                    while (total >= 0 && !closed && call.isReady() && sent < total) {
                        byte[] chunk = pattern.next((int) Math.min(CHUNK, total - sent));
                        crc.update(chunk);
                        sent += chunk.length;
                        call.sendMessage(chunk);
                    }
                    if (total >= 0 && sent == total && !closed) {
                        closed = true;
                        Metadata trailers = new Metadata();
                        trailers.put(CRC_TRAILER, Long.toString(crc.getValue()));
                        call.close(Status.OK, trailers);
                    }
                }
            };
        };
    }

    /** The bytes a download streams: xorshift, so that a lost, repeated or reordered chunk changes the CRC. */
    static final class Pattern {
        private long state = 0x9E3779B97F4A7C15L;

        byte[] next(int length) {
            byte[] b = new byte[length];
            for (int i = 0; i < length; i++) {
                state ^= state << 13;
                state ^= state >>> 7;
                state ^= state << 17;
                b[i] = (byte) state;
            }
            return b;
        }
    }

    private static byte[] readAll(InputStream stream) {
        try (stream) {
            return stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
