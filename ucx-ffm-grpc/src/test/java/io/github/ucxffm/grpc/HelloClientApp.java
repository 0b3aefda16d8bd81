package io.github.ucxffm.grpc;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;

import java.util.concurrent.TimeUnit;

/** A hello-world gRPC client as an application writes it: nothing of UCX here. Prints the server's answer. */
public final class HelloClientApp {

    private HelloClientApp() {
    }

    /**
     * Greets the server once.
     *
     * @param args the target ({@code host:port}) and the name to greet with
     * @throws Exception if the call fails
     */
    public static void main(String[] args) throws Exception {
        ManagedChannel channel = Grpc.newChannelBuilder(args[0], InsecureChannelCredentials.create()).build();
        try {
            String answer = ClientCalls.blockingUnaryCall(channel, Greeter.SAY_HELLO,
                    CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), args[1]);
            System.out.println("answer: " + answer);
        } finally {
            channel.shutdown();
            channel.awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
