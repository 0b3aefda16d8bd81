package io.github.ucxffm.samples;

import io.github.ucxffm.UcxException;
import io.github.ucxffm.UcxPeerFailureException;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Entry point of the samples jar: {@code java -jar ucx-ffm-samples.jar NAME [OPTIONS]}. Bad arguments end with a
 * one-line message and status 2, a failed run with a one-line message and status 1.
 */
public final class Samples {

    private record Entry(String description, Consumer<String[]> main) {
    }

    private static final Map<String, Entry> SAMPLES = new LinkedHashMap<>();

    static {
        SAMPLES.put("hello", new Entry("the shortest client/server: one message each way", Hello::run));
        SAMPLES.put("tag-pingpong", new Entry("tag-matched ping-pong latency", TagPingPong::run));
        SAMPLES.put("demo", new Entry("tag-pingpong server and client processes over shm, then tcp, and a table "
                + "(./ucx-ffm demo)", Demo::run));
        SAMPLES.put("info", new Entry("the UCX version and transports of this machine", a -> Info.main(a)));
    }

    private Samples() {
    }

    /** Adds a sample; used by the sample classes' registration below. */
    static void register(String name, String description, Consumer<String[]> main) {
        SAMPLES.put(name, new Entry(description, main));
    }

    static {
        SampleRegistry.registerAll();
    }

    /**
     * Runs a sample.
     *
     * @param args the sample's name, then its options
     */
    public static void main(String[] args) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
            usage();
            System.exit(args.length == 0 ? SampleException.USAGE : 0);
        }
        Entry entry = SAMPLES.get(args[0]);
        if (entry == null) {
            System.err.println("ucx-ffm: unknown sample '" + args[0] + "'; samples: " + String.join(", ",
                    SAMPLES.keySet()));
            System.exit(SampleException.USAGE);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (rest.length > 0 && (rest[0].equals("--help") || rest[0].equals("-h"))) {
            System.out.println("usage: " + args[0] + " (--server | --client HOST[:PORT]) [options]\n"
                    + SampleOptions.USAGE);
            return;
        }
        try {
            entry.main().accept(rest);
        } catch (SampleException e) {
            System.out.flush();
            System.err.println(args[0] + ": " + e.getMessage());
            System.exit(e.status());
        } catch (UcxException e) {
            // A failure outside the samples' own waiting (an operation refused at once on a failed endpoint): still
            // one line, no stack trace.
            System.out.flush();
            System.err.println(args[0] + ": " + (e instanceof io.github.ucxffm.UcxPeerFailureException
                    ? "the peer went away (" + e.getMessage() + ")" : e.getMessage()));
            System.exit(SampleException.FAILED);
        }
        System.exit(0);
    }

    private static void usage() {
        System.out.println("usage: NAME (--server | --client HOST[:PORT]) [options]\n\nsamples:");
        SAMPLES.forEach((name, e) -> System.out.printf("  %-16s %s%n", name, e.description()));
        System.out.println("\noptions:\n" + SampleOptions.USAGE);
    }
}
