package io.github.ucxffm.bench.perftest;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

/**
 * The plain TCP connection two runners set their test up over before UCX connects them, as {@code ucx_perftest}
 * does: the UCP runners swap worker addresses on it and connect their endpoints by address, the UCT runner swaps its
 * device, interface and endpoint addresses and runs its barriers on it.
 *
 * <p>The UCP runners used to connect through UCX's listener instead. On UCX 1.18 and 1.23 an endpoint connected that
 * way keeps UCX's tcp interface in the worker's progress even when its lanes are all shared memory, so every progress
 * call made an {@code epoll_wait} (3.6 million in a million-iteration {@code tag_lat} on 1.18.1, against 12 when
 * connected by address), which {@code ucx_perftest}, connected by address, does not make.
 */
public final class SideChannel implements Closeable {

    /** The longest frame either side accepts (a worker address with many transports is a few KiB). */
    public static final int MAX_FRAME = 1 << 16;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    private SideChannel(Socket socket) throws IOException {
        this.socket = socket;
        try {
            socket.setTcpNoDelay(true);
            in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /**
     * Binds the server's socket on all addresses, as {@code ucx_perftest}'s server listens.
     *
     * @param port the port; 0 lets the system choose (see {@link ServerSocket#getLocalPort()})
     * @return the bound socket
     * @throws IOException if the port cannot be bound (the message names it)
     */
    public static ServerSocket bind(int port) throws IOException {
        ServerSocket server = new ServerSocket();
        try {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(port));
            return server;
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot listen on port " + port + ": " + e.getMessage(), e);
        }
    }

    /**
     * Waits for one peer on a bound socket.
     *
     * @param server  from {@link #bind}
     * @param timeout how long to wait, or {@code null} to wait for ever (a server waiting for its client)
     * @return the connection
     * @throws IOException if none came in time, or the socket failed
     */
    public static SideChannel accept(ServerSocket server, Duration timeout) throws IOException {
        server.setSoTimeout(timeout == null ? 0 : (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
        try {
            return new SideChannel(server.accept());
        } catch (SocketTimeoutException e) {
            throw new IOException("no peer connected to port " + server.getLocalPort() + " within "
                    + timeout.toMillis() + " ms", e);
        }
    }

    /**
     * A server's wait for its one client, as {@code ucx_perftest}'s: binds {@code port}, prints
     * {@code Waiting for connection...}, waits for ever, prints {@code Accepted connection from HOST:PORT} and stops
     * listening.
     *
     * @param port the port
     * @param out  where the two lines go
     * @return the client's connection
     * @throws IOException if the port cannot be bound or the socket fails
     */
    public static SideChannel awaitClient(int port, PrintStream out) throws IOException {
        try (ServerSocket server = bind(port)) {
            out.println("Waiting for connection...");
            out.flush();
            SideChannel side = accept(server, null);
            InetSocketAddress client = side.peer();
            out.println("Accepted connection from " + client.getAddress().getHostAddress() + ":" + client.getPort());
            out.flush();
            return side;
        }
    }

    /**
     * Connects to a server, trying again while the port refuses (a server that is still starting) until the
     * timeout.
     *
     * @param host    the server
     * @param port    its port
     * @param timeout how long to keep trying
     * @param hint    what the server should be, for the message of a failure (e.g. "ucx-ffm perftest server")
     * @return the connection
     * @throws IOException if no connection was made in time; the message names the address and the hint
     */
    public static SideChannel connect(String host, int port, Duration timeout, String hint) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Socket socket = new Socket();
            try {
                long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
                socket.connect(new InetSocketAddress(host, port), (int) Math.min(Integer.MAX_VALUE, left));
                return new SideChannel(socket);
            } catch (ConnectException e) {
                socket.close();
                if (System.nanoTime() - deadline >= 0) {
                    throw refused(host, port, hint, e);
                }
                sleepBeforeRetry();
            } catch (IOException e) {
                socket.close();
                throw refused(host, port, hint, e);
            }
        }
    }

    private static IOException refused(String host, int port, String hint, IOException cause) {
        return new IOException("cannot connect to " + host + ":" + port + " (is a " + hint + " listening there?): "
                + cause.getMessage(), cause);
    }

    private static void sleepBeforeRetry() throws IOException {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting", e);
        }
    }

    /** The input side, for the UCT runner's own fields. */
    public DataInputStream in() {
        return in;
    }

    /** The output side (buffered: {@link DataOutputStream#flush()} sends). */
    public DataOutputStream out() {
        return out;
    }

    /** The peer's address. */
    public InetSocketAddress peer() {
        return (InetSocketAddress) socket.getRemoteSocketAddress();
    }

    /**
     * Writes one frame (length, then the bytes); {@link #flush()} sends it.
     *
     * @param bytes at most {@link #MAX_FRAME} of them
     * @throws IOException if the socket fails
     */
    public void writeFrame(byte[] bytes) throws IOException {
        if (bytes.length > MAX_FRAME) {
            throw new IllegalArgumentException("a frame of " + bytes.length + " bytes is over " + MAX_FRAME);
        }
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    /**
     * Reads one frame.
     *
     * @param what what the peer should be, for the message when the frame is not one
     * @return the bytes
     * @throws IOException if the socket fails or the frame's length is negative or over {@link #MAX_FRAME}
     */
    public byte[] readFrame(String what) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_FRAME) {
            throw new IOException("bad frame length " + n + ": is the peer a " + what + "?");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    /**
     * Sends this side's bytes and returns the peer's: both sides write first, then read.
     *
     * @param mine this side's frame
     * @param what what the peer should be, for the message of a bad frame
     * @return the peer's frame
     * @throws IOException if the socket fails or the peer's frame is bad
     */
    public byte[] swap(byte[] mine, String what) throws IOException {
        writeFrame(mine);
        flush();
        return readFrame(what);
    }

    /** Sends what was written. */
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
