package io.github.ucxffm.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;

/**
 * A hello-world gRPC server as an application writes it: nothing of UCX here. Prints {@code listening on port N}
 * and serves until the process is stopped. Which transport carries it is the class path's and the JVM flags' choice.
 */
public final class HelloServerApp {

    private HelloServerApp() {
    }

    /**
     * Runs the server.
     *
     * @param args the port (0 lets the system choose)
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception {
        Server server = Grpc.newServerBuilderForPort(Integer.parseInt(args[0]), InsecureServerCredentials.create())
                .addService(Greeter.service(() -> { }))
                .build()
                .start();
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        System.out.println("listening on port " + server.getPort());
        server.awaitTermination();
    }
}
