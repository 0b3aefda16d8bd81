package io.github.ucxffm.bench.transport;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** A constant with a name on the command line and in the results. */
interface Labelled {

    /** The name. */
    String label();

    /**
     * The constant of a name, case aside.
     *
     * @param type the enum
     * @param name the name given
     * @param what what the constants are, for the message ({@code transport})
     * @param <E>  the enum
     * @return the constant
     * @throws IllegalArgumentException naming the value and the names there are
     */
    static <E extends Enum<E> & Labelled> E byLabel(Class<E> type, String name, String what) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        E[] all = type.getEnumConstants();
        for (E e : all) {
            if (e.label().equals(n)) {
                return e;
            }
        }
        throw new IllegalArgumentException("unknown " + what + " '" + name + "' ("
                + Arrays.stream(all).map(Labelled::label).collect(Collectors.joining(", ")) + ")");
    }
}
