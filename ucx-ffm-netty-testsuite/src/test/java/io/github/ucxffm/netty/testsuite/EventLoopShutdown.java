package io.github.ucxffm.netty.testsuite;

import io.netty.channel.EventLoopGroup;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

import java.util.concurrent.TimeUnit;

/**
 * Shuts the testsuite's event loop groups down when the test JVM's JUnit session ends, before the JVM exits.
 * <p>
 * The groups ({@link UcxSocketTestPermutation}) live for the whole JVM, as Netty's own permutations' do, on daemon
 * threads. Left running, they would still be inside UCX (progressing a worker, or asleep on its event descriptor)
 * when the JVM exits and the C library runs UCX's destructors, which free what those threads are using: the JVM then
 * aborted at exit now and then, after every test of its class had passed. Shut down here, each loop closes its UCX
 * worker, and the last one the shared UCX context, while the JVM still runs. Registered for {@code ServiceLoader} in
 * {@code META-INF/services}; it does nothing in a JVM whose tests never touched the groups.
 */
public final class EventLoopShutdown implements LauncherSessionListener {

    private static final long TIMEOUT_SECONDS = 20;

    /**
     * Set by {@link UcxSocketTestPermutation}'s initialiser: reading the groups from a JVM that never used them would
     * create them, since touching that class initialises it.
     */
    private static volatile boolean groupsStarted;

    static void groupsStarted() {
        groupsStarted = true;
    }

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        if (!groupsStarted) {
            return;
        }
        shutDown(UcxSocketTestPermutation.BOSS_GROUP);
        shutDown(UcxSocketTestPermutation.WORKER_GROUP);
    }

    private static void shutDown(EventLoopGroup group) {
        group.shutdownGracefully(0, TIMEOUT_SECONDS, TimeUnit.SECONDS);
        try {
            if (!group.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the event loop group " + group + " did not terminate within "
                        + TIMEOUT_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while shutting the event loops down", e);
        }
    }
}
