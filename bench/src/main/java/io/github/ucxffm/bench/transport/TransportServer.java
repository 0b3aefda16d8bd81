package io.github.ucxffm.bench.transport;

import io.grpc.Server;
import io.netty.channel.Channel;

import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The server process of {@code bench transport}: the echo server and the gRPC server over one transport, on one
 * event loop, listening on 127.0.0.1 at ports the system picks. Prints {@link #READY} with the two ports, then
 * serves until it is killed (by its PID, by the benchmark) or its standard input closes.
 */
public final class TransportServer {

    /** The line the server prints once it listens: {@code READY echo=PORT grpc=PORT}. */
    static final String READY = "transport-server ready";

    private TransportServer() {
    }

    /**
     * Runs the server.
     *
     * @param args {@code --transport NAME [--ucx-spin NANOS]}
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception {
        TransportKind kind;
        long spin = -1;
        try {
            if ((args.length != 2 && args.length != 4) || !args[0].equals("--transport")
                    || args.length == 4 && !args[2].equals("--ucx-spin")) {
                throw new IllegalArgumentException("usage: TransportServer --transport "
                        + "epoll|nio|ucx-shm|ucx-tcp|ucx-shm-spin|ucx-tcp-spin [--ucx-spin NANOS]");
            }
            kind = TransportKind.byLabel(args[1]);
            if (args.length == 4) {
                spin = Long.parseLong(args[3]);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("TransportServer: " + e.getMessage());
            System.exit(1);
            return;
        }
        NettyTransport.quietUnknownOptions();
        NettyTransport t = kind.open(1, spin);
        InetSocketAddress any = new InetSocketAddress("127.0.0.1", 0);
        Channel echo = Echo.serve(t, any);
        Server grpc = Grpc.serve(t, any);
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            grpc.shutdownNow();
            echo.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            t.close();
            stop.countDown();
        }, "transport-server-stop"));
        System.out.println(READY + " echo=" + ((InetSocketAddress) echo.localAddress()).getPort() + " grpc="
                + grpc.getPort() + " transport=" + kind.label());
        System.out.flush();
        // the benchmark stops this process by its PID; a closed standard input (its parent gone) stops it too
        Thread.ofPlatform().daemon().start(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is read from the benchmark
                }
            } catch (java.io.IOException e) {
                // closed
            }
            System.exit(0);
        });
        stop.await();
    }
}
