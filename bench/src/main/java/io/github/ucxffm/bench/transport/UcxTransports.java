package io.github.ucxffm.bench.transport;

/** ucx-ffm-netty's transport over UCX shared memory or UCX tcp. */
final class UcxTransports {

    private UcxTransports() {
    }

    static NettyTransport open(TransportKind kind, int threads) {
        throw new IllegalStateException(kind.label() + ": ucx-ffm-netty is not part of this build yet");
    }
}
