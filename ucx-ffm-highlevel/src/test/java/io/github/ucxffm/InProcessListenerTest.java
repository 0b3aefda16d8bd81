package io.github.ucxffm;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Two workers of one process connected through a listener over shared memory, without peer error handling (so that
 * the lanes are shared memory: with it, UCX chooses tcp alone), and used at once: UCX 1.18.1 crashes the process when
 * the client's first send is made before its endpoint's wire-up completes ({@link UcxVersion.Defect
 * #IN_PROCESS_LISTENER_SHARED_MEMORY_EARLY_SEND}). Each case runs in a child JVM, which on that release dies; the
 * workarounds the defect names run on every release.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class InProcessListenerTest {

    /** Round trips each child makes. */
    private static final int ROUND_TRIPS = 2000;

    private static ChildProcess run(Path dir, String connect, long settleMillis) throws Exception {
        return ChildProcess.java(Pair.class).name("pair " + connect)
                .jvmFlags(List.of("-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log")))
                .args(connect, Long.toString(settleMillis), Integer.toString(ROUND_TRIPS))
                .run(Duration.ofSeconds(60));
    }

    private static void assertRan(ChildProcess p) {
        assertEquals(0, p.exitCode(), p.output());
        assertTrue(p.output().contains("round trips " + ROUND_TRIPS), p.output());
    }

    @Test
    void shouldRunAtOnceWhenConnectedByWorkerAddressOnEveryRelease(@TempDir Path dir) throws Exception {
        assertRan(run(dir, "address", 0));
    }

    @Test
    void shouldRunThroughTheListenerOnceTheWireUpHadTimeOnEveryRelease(@TempDir Path dir) throws Exception {
        assertRan(run(dir, "listener", 200));
    }

    @Test
    void shouldCrashOnlyOnTheReleasesWithTheDefectWhenTheClientSendsAtOnce(@TempDir Path dir) throws Exception {
        boolean defect = UcxVersion.runtime().has(UcxVersion.Defect.IN_PROCESS_LISTENER_SHARED_MEMORY_EARLY_SEND);
        for (int attempt = 1; attempt <= 3; attempt++) {
            ChildProcess p = run(dir, "listener", 0);
            if (!defect) {
                assertRan(p); // every attempt runs where the release is not known to have the defect
                continue;
            }
            if (p.exitCode() != 0) {
                assertTrue(p.output().contains("SIGSEGV"), "UCX " + UcxVersion.runtime() + ": the child failed "
                        + "otherwise than by the known crash:\n" + p.output());
                return;
            }
            assertRan(p);
        }
        if (defect) {
            fail("UCX " + UcxVersion.runtime() + " ran all 3 attempts: the defect's releases need updating");
        }
    }

    /**
     * The child: one context over {@code posix,tcp,self} with two workers; the client's endpoint connected through
     * the other worker's listener ({@code listener}) or by its worker address ({@code address}), without peer error
     * handling; after progressing both workers for the given milliseconds, tag round trips of 8 bytes, each
     * checked.
     */
    public static final class Pair {
        private Pair() {
        }

        /**
         * Runs the pair.
         *
         * @param args {@code listener|address}, milliseconds to progress before the first send, round trips
         */
        public static void main(String[] args) {
            boolean listener = args[0].equals("listener");
            long settleMillis = Long.parseLong(args[1]);
            int roundTrips = Integer.parseInt(args[2]);
            try (UcpContext context = UcpContext.builder().features(UcpContext.Feature.TAG)
                    .config("TLS", "posix,tcp,self").build();
                 Arena arena = Arena.ofConfined()) {
                UcpWorker server = context.newWorker();
                UcpWorker client = context.newWorker();
                UcpEndpoint toServer;
                UcpEndpoint toClient;
                if (listener) {
                    AtomicReference<UcpEndpoint> accepted = new AtomicReference<>();
                    UcpListener l = server.listen(new InetSocketAddress("127.0.0.1", 0), null,
                            r -> accepted.set(r.accept(e -> { }, false)));
                    toServer = client.connect(UcpEndpoint.Params.socket(l.address()).peerErrorHandling(false));
                    // the first send follows the accept with no progress in between (none when settleMillis is 0)
                    TestSupport.progressUntil(() -> accepted.get() != null, 20_000, server, client);
                    toClient = accepted.get();
                } else {
                    toServer = client.connect(UcpEndpoint.Params.worker(server.address()).peerErrorHandling(false));
                    toClient = server.connect(UcpEndpoint.Params.worker(client.address()).peerErrorHandling(false));
                }
                TestSupport.progressFor(settleMillis, server, client);
                MemorySegment out = arena.allocate(8);
                MemorySegment in = arena.allocate(8);
                for (long i = 0; i < roundTrips; i++) {
                    out.set(JAVA_LONG, 0, i);
                    long receive = server.receiveTag(in, 0, 8, 1, -1L);
                    TestSupport.awaitBoth(client, toServer.sendTag(out, 0, 8, 1), server, receive);
                    check(in, i);
                    receive = client.receiveTag(in, 0, 8, 2, -1L);
                    TestSupport.awaitBoth(server, toClient.sendTag(out, 0, 8, 2), client, receive);
                    check(in, i);
                }
                System.out.println("round trips " + roundTrips + " over " + toServer.transports());
            }
        }

        private static void check(MemorySegment in, long expected) {
            long got = in.get(JAVA_LONG, 0);
            if (got != expected) {
                throw new IllegalStateException("round trip " + expected + " carried " + got);
            }
        }
    }
}
