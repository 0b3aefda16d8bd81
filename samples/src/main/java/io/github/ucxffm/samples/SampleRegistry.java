package io.github.ucxffm.samples;

/**
 * Registers the samples beyond the first ones; each sample adds its line here.
 */
final class SampleRegistry {

    private SampleRegistry() {
    }

    static void registerAll() {
        // Further samples register here: Samples.register(name, description, Class::run).
        Samples.register("stream-pingpong", "ping-pong latency over UCP streams", StreamPingPong::run);
        Samples.register("am-pingpong", "ping-pong latency with active messages, answered by the handler",
                AmPingPong::run);
        Samples.register("bandwidth", "one-way tag bandwidth with a window of sends (default 1 MiB messages)",
                Bandwidth::run);
        Samples.register("rma-pingpong", "put, get and atomic fetch-add latency on the server's memory, verified",
                RmaPingPong::run);
        Samples.register("block-store", "a remote block service: RMA blocks on active-message requests (--blocks N)",
                BlockStore::run);
        Samples.register("uct-pingpong", "ping-pong latency on UCT's raw transport layer (--transport TL "
                + "--device DEV)", UctPingPong::run);
        Samples.register("netty-echo", "echo round trips over the UCX Netty transport, verified (--clients N)",
                NettyEcho::run);
        Samples.register("grpc-hello", "gRPC hello world over UCX with grpc-netty, call latencies (--clients N)",
                GrpcHello::run);
    }
}
