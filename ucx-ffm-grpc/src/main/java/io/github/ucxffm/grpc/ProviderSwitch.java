package io.github.ucxffm.grpc;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@link UcxGrpc#providersEnabled()} for the providers' {@code isAvailable}, which must not throw: gRPC asks it while
 * loading every provider, and an exception there would break gRPC for the whole process.
 */
final class ProviderSwitch {

    private static final Logger LOG = Logger.getLogger(ProviderSwitch.class.getName());

    private ProviderSwitch() {
    }

    static boolean enabled() {
        try {
            return UcxGrpc.providersEnabled();
        } catch (IllegalArgumentException e) {
            LOG.log(Level.WARNING, "the UCX gRPC providers stay off: " + e.getMessage());
            return false;
        }
    }
}
