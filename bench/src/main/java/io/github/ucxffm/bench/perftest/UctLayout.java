package io.github.ucxffm.bench.perftest;

import java.util.Locale;

/**
 * How a UCT test hands its data to the transport ({@code ucx_perftest -D}, sender side): the message is passed
 * inline ({@code short}: {@code uct_ep_am_short}, {@code uct_ep_put_short}), copied by a pack callback into the
 * transport's buffer ({@code bcopy}), or sent from the registered buffer itself, completing later ({@code zcopy}).
 */
public enum UctLayout {
    /** {@code uct_ep_*_short}: the default, as in {@code ucx_perftest}. */
    SHORT,
    /** {@code uct_ep_*_bcopy} with a pack callback. */
    BCOPY,
    /** {@code uct_ep_*_zcopy} from registered memory, completed through a {@code uct_completion_t}. */
    ZCOPY;

    /**
     * The name {@code -D} takes and the server's box prints.
     *
     * @return e.g. {@code short}
     */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Looks a layout up by its {@code -D} name.
     *
     * @param name {@code short}, {@code bcopy} or {@code zcopy}
     * @return the layout
     * @throws IllegalArgumentException for another name
     */
    public static UctLayout byName(String name) {
        for (UctLayout l : values()) {
            if (l.label().equals(name)) {
                return l;
            }
        }
        throw new IllegalArgumentException("-D takes short, bcopy or zcopy here, not '" + name + "'"
                + (name.equals("shortiov") ? " (shortiov is not supported by this runner)" : ""));
    }
}
