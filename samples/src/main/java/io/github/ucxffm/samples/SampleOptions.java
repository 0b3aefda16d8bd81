package io.github.ucxffm.samples;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The options every sample understands, parsed once:
 * {@code --server} or {@code --client HOST[:PORT]}, {@code --port}, {@code --size}, {@code --iterations},
 * {@code --warmup}, {@code --transport} (passed to UCX as {@code UCX_TLS}), {@code --wakeup}, {@code --window},
 * {@code --clients}.
 *
 * @param server     whether this side listens
 * @param host       the server to connect to (client) or the address to bind (server)
 * @param port       the server's port
 * @param size       message size in bytes
 * @param iterations measured iterations
 * @param warmup     warm-up iterations
 * @param transport  UCX transports ({@code UCX_TLS}), or {@code null} for UCX's choice
 * @param wakeup     block on the worker's event fd instead of spinning
 * @param window     outstanding operations, for the samples that keep several in flight
 * @param clients    for the servers that serve several clients: how many before they end, 0 for no end
 */
public record SampleOptions(boolean server, String host, int port, long size, long iterations, long warmup,
                            String transport, boolean wakeup, int window, int clients) {

    /** The usage text shared by all samples. */
    public static final String USAGE = """
              --server                 listen for one client (default port %d; --port to change)
              --client HOST[:PORT]     connect to a server
              --port PORT              server port (0 lets the system choose; the port is printed)
              --size BYTES             message size (default %d; suffixes k, m: 4k, 1m)
              --iterations N           measured iterations (default %d)
              --warmup N               warm-up iterations (default %d)
              --transport TLS          UCX transports, as UCX_TLS: tcp, shm, posix, sysv, ...
              --wakeup                 wait on the worker's event fd instead of spinning
              --window N               operations in flight (bandwidth, block-store; default %d)
              --clients N              netty-echo, grpc-hello servers: end after N clients, 0 never (default 1)
            """.formatted(SampleConfig.DEFAULT_PORT, SampleConfig.DEFAULT_SIZE, SampleConfig.DEFAULT_ITERATIONS,
            SampleConfig.DEFAULT_WARMUP, SampleConfig.DEFAULT_WINDOW);

    /**
     * Parses the arguments of a sample.
     *
     * @param args the command line after the sample's name
     * @return the options
     * @throws SampleException with status {@link SampleException#USAGE} for anything wrong
     */
    public static SampleOptions parse(String... args) {
        return parse(SampleConfig.DEFAULT_SIZE, SampleConfig.DEFAULT_ITERATIONS, SampleConfig.DEFAULT_WARMUP, args);
    }

    /**
     * Parses the arguments of a sample whose size, iteration and warm-up defaults differ from the shared ones.
     *
     * @param defaultSize       {@code --size} when not given
     * @param defaultIterations {@code --iterations} when not given
     * @param defaultWarmup     {@code --warmup} when not given
     * @param args              the command line after the sample's name
     * @return the options
     * @throws SampleException with status {@link SampleException#USAGE} for anything wrong
     */
    public static SampleOptions parse(long defaultSize, long defaultIterations, long defaultWarmup, String... args) {
        Map<String, String> values = new LinkedHashMap<>();
        boolean server = false;
        boolean wakeup = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--server" -> server = true;
                case "--wakeup" -> wakeup = true;
                case "--client", "--port", "--size", "--iterations", "--warmup", "--transport", "--window",
                     "--clients" -> {
                    if (i + 1 >= args.length) {
                        throw SampleException.usage(a + " needs a value");
                    }
                    values.put(a, args[++i]);
                }
                default -> throw SampleException.usage("unknown option '" + a + "'");
            }
        }
        String client = values.get("--client");
        if (server == (client != null)) {
            throw SampleException.usage("give either --server or --client HOST[:PORT]");
        }
        String host = server ? "0.0.0.0" : client;
        int port = (int) number(values, "--port", SampleConfig.DEFAULT_PORT, 0, 65535);
        if (client != null) {
            int colon = client.lastIndexOf(':');
            if (colon > 0 && client.indexOf(':') == colon) {
                host = client.substring(0, colon);
                port = (int) parse("--client port", client.substring(colon + 1), 1, 65535);
            }
            if (host.isBlank()) {
                throw SampleException.usage("--client needs a host");
            }
        }
        long size = number(values, "--size", defaultSize, 0, 1L << 31);
        long iterations = number(values, "--iterations", defaultIterations, 1, Long.MAX_VALUE);
        long warmup = number(values, "--warmup", defaultWarmup, 0, Long.MAX_VALUE);
        int window = (int) number(values, "--window", SampleConfig.DEFAULT_WINDOW, 1, 4096);
        int clients = (int) number(values, "--clients", 1, 0, Integer.MAX_VALUE);
        String transport = values.get("--transport");
        if (transport != null && !transport.matches("[A-Za-z0-9_,:^.-]+")) {
            throw SampleException.usage("--transport takes UCX transport names such as tcp or shm, not '"
                    + transport + "'");
        }
        return new SampleOptions(server, host, port, size, iterations, warmup, transport, wakeup, window, clients);
    }

    private static long number(Map<String, String> values, String option, long fallback, long min, long max) {
        String v = values.get(option);
        return v == null ? fallback : parse(option, v, min, max);
    }

    private static long parse(String option, String text, long min, long max) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        if (t.endsWith("k")) {
            unit = 1024;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            unit = 1024 * 1024;
            t = t.substring(0, t.length() - 1);
        }
        long v;
        try {
            v = Math.multiplyExact(Long.parseLong(t), unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw SampleException.usage(option + " takes a whole number, not '" + text + "'");
        }
        if (v < min || v > max) {
            throw SampleException.usage(option + " must be between " + min + " and " + max + ", not " + text);
        }
        return v;
    }

    /**
     * Whether the chosen transports are shared-memory ones, which on UCX 1.13 need peer error handling off.
     *
     * @return {@code true} for shm, posix, sysv, cma or xpmem
     */
    public boolean sharedMemory() {
        return transport != null && transport.matches(".*\\b(shm|posix|sysv|cma|xpmem)\\b.*");
    }

    /**
     * The server's address, for a client.
     *
     * @return host and port
     */
    public InetSocketAddress serverAddress() {
        InetSocketAddress a = new InetSocketAddress(host, port);
        if (a.isUnresolved()) {
            throw SampleException.failed("cannot resolve host '" + host + "'");
        }
        return a;
    }
}
