package io.github.ucxffm.grpc;

import io.github.ucxffm.netty.UcxTransportStats;

import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;

/**
 * Runs another class's {@code main} and, when the JVM exits (normally or on SIGTERM), prints the UCX transport's
 * counters as {@code ucx-stats bytesSent=N bytesReceived=N messagesSent=N channelsOpened=N}: how a test learns what
 * went through UCX in a child whose application code knows nothing of UCX.
 */
public final class WithUcxStats {

    private WithUcxStats() {
    }

    /**
     * Runs the program.
     *
     * @param args the main class, then its arguments
     * @throws Throwable whatever that main throws
     */
    public static void main(String[] args) throws Throwable {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println(line())));
        try {
            Class.forName(args[0]).getMethod("main", String[].class)
                    .invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    static String line() {
        return "ucx-stats bytesSent=" + UcxTransportStats.bytesSent() + " bytesReceived="
                + UcxTransportStats.bytesReceived() + " messagesSent=" + UcxTransportStats.messagesSent()
                + " channelsOpened=" + UcxTransportStats.channelsOpened();
    }
}
