package io.github.ucxffm.peer;

import io.github.ucxffm.testsupport.ChildProcess;

import java.io.IOException;
import java.util.Map;

/**
 * Starts {@link PeerMain} in a child JVM with a role: a {@link ChildProcess} on this test's class path, whose output
 * lines the test {@link ChildProcess#expect expects}, killed with its descendants when closed.
 */
public final class PeerProcess {

    private PeerProcess() {
    }

    /**
     * Starts {@code PeerMain role args...} in a new JVM with this test's class path.
     *
     * @param role the peer's role
     * @param args the role's arguments
     * @return the running peer
     * @throws IOException if the JVM cannot start
     */
    public static ChildProcess start(String role, String... args) throws IOException {
        return start(Map.of(), role, args);
    }

    /**
     * Starts {@code PeerMain role args...} in a new JVM with this test's class path and extra environment variables
     * (such as {@code UCX_RNDV_THRESH}, which UCX reads when the peer creates its context).
     *
     * @param environment variables to add to this process's environment
     * @param role        the peer's role
     * @param args        the role's arguments
     * @return the running peer
     * @throws IOException if the JVM cannot start
     */
    public static ChildProcess start(Map<String, String> environment, String role, String... args)
            throws IOException {
        return ChildProcess.java(PeerMain.class).name("peer " + role).env(environment).args(role).args(args).start();
    }
}
