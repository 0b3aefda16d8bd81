package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Constant;
import io.github.ucxffm.generator.Model.Prim;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The header class's constants: a static method per enum constant or object-like macro, returning a literal; or, when
 * the release records give the constant different values, the value of the loaded library's release, resolved once.
 */
final class Constants {

    private final String h;
    private final ReleaseNotes notes;

    Constants(String headerClassName, ReleaseNotes notes) {
        this.h = headerClassName;
        this.notes = notes;
    }

    /** The members for {@code c}: a cached literal and its accessor, or a release-dependent holder. */
    String member(Constant c) {
        String n = c.name();
        String note = notes.note(n);
        String type = c.value() instanceof String ? "String" : c.pointer() ? "MemorySegment" : c.type().carrier;
        String cText = c.value() instanceof String s ? "#define " + n + " " + Text.javaString(s)
                : c.pointer() ? "#define " + n + " (void*) " + c.value()
                : (c.type() == Prim.INT || c.type() == Prim.LONG ? "enum or #define " : "#define ") + n + " = "
                        + cValue(c.type(), c.value());
        List<Release> changes = new ArrayList<>();
        List<String> literals = new ArrayList<>();
        List<String> perRelease = new ArrayList<>();
        for (Release r : notes.releases()) {
            Release.Value v = r.constants.get(n);
            if (v == null) {
                continue;
            }
            String literal = c.value() instanceof String ? stringLiteral(c, v, r) : literal(c, parse(c, v, r));
            perRelease.add(v.text() + " in " + r.name());
            if (literals.isEmpty() || !literals.getLast().equals(literal)) {
                changes.add(r);
                literals.add(literal);
            }
        }
        if (changes.size() > 1) {
            return releaseDependent(c, type, changes, literals, String.join(", ", perRelease), note);
        }
        String literal = literal(c, c.value());
        String doc = Docs.snippet("    ", cText, note);
        if (c.value() instanceof String || c.pointer()) {
            return """

                    %2$s    public static %4$s %1$s() {
                            return %3$s;
                        }
                    """.formatted(n, doc, literal, type);
        }
        return """

                    private static final %2$s %1$s = %3$s;

                %4$s    public static %2$s %1$s() {
                        return %1$s;
                    }
                """.formatted(n, type, literal, doc);
    }

    /**
     * A constant whose value differs between the recorded releases: a holder class resolves it once, from the loaded
     * library's release, into a static final that the JIT folds like a literal.
     */
    private String releaseDependent(Constant c, String type, List<Release> changes, List<String> literals,
                                    String perRelease, String note) {
        String n = c.name();
        String label = notes.label();
        String kind = c.value() instanceof String || c.pointer() ? "#define " : c.type() == Prim.INT
                || c.type() == Prim.LONG ? "enum or #define " : "#define ";
        String from = notes.headersRelease() == null ? "" : "; the " + label + " " + notes.headersRelease()
                + " headers these bindings were generated from say " + cValue(c);
        String text = "Its value differs between " + label + " releases: " + perRelease + from + ". This returns "
                + "the value of the newest recorded release not newer than the loaded " + label + " (of the oldest "
                + "recorded release when the loaded one is older than all of them), resolved once, on first use. "
                + note;
        String codes = changes.stream().map(r -> "0x%06x".formatted(r.code)).collect(Collectors.joining(", "));
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < changes.size(); i++) {
            boolean last = i + 1 == changes.size();
            cases.append("            %s -> %s; // %s%s\n".formatted(last ? "default" : "case " + i, literals.get(i),
                    changes.get(i).name(), last ? " and later" : ""));
        }
        return """

                    private static final class %1$s$ {
                        static final %2$s VALUE = switch (%3$s$shared.releaseIndex(%4$s)) {
                %5$s        };
                    }

                %6$s    public static %2$s %1$s() {
                        return %1$s$.VALUE;
                    }
                """.formatted(n, type, h, codes, cases, Docs.snippet("    ", kind + n, text.strip()));
    }

    /** A release record writes a string constant as a Java literal already. */
    private static String stringLiteral(Constant c, Release.Value v, Release r) {
        if (!v.type().equals("string") || !v.text().startsWith("\"")) {
            throw new GeneratorException(c.name() + " is a string but " + r.name() + " records " + v.type() + " "
                    + v.text());
        }
        return v.text();
    }

    /** The value a release record gives, as the Java type of the constant the headers define. */
    private static Object parse(Constant c, Release.Value v, Release r) {
        try {
            return switch (c.type()) {
                case INT, LONG, LONG_LONG -> Long.parseLong(v.text());
                case FLOAT, DOUBLE -> Double.parseDouble(v.text());
                default -> throw new GeneratorException("constant " + c.name() + " has an unexpected type " + c.type());
            };
        } catch (NumberFormatException e) {
            throw new GeneratorException(r.name() + " records " + c.name() + " as " + v.text()
                    + ", which is no " + c.type());
        }
    }

    /** The Java expression of a constant's value; a string from a release record is a literal already. */
    private static String literal(Constant c, Object value) {
        if (c.value() instanceof String) {
            return Text.javaString((String) value);
        }
        if (c.pointer()) {
            return "MemorySegment.ofAddress(" + value + "L)";
        }
        return switch (c.type()) {
            case INT -> Integer.toString((int) (long) (Long) value);
            case LONG, LONG_LONG -> (Long) value + "L";
            case FLOAT -> {
                float v = (float) (double) (Double) value;
                yield Float.isNaN(v) ? "Float.NaN" : Float.isInfinite(v)
                        ? (v > 0 ? "Float.POSITIVE_INFINITY" : "Float.NEGATIVE_INFINITY") : v + "f";
            }
            case DOUBLE -> {
                double v = (Double) value;
                yield Double.isNaN(v) ? "Double.NaN" : Double.isInfinite(v)
                        ? (v > 0 ? "Double.POSITIVE_INFINITY" : "Double.NEGATIVE_INFINITY") : Double.toString(v);
            }
            default -> throw new GeneratorException("constant " + c.name() + " has an unexpected type " + c.type());
        };
    }

    /** The value as C code would write it, for Javadoc. */
    private static String cValue(Constant c) {
        if (c.value() instanceof String s) {
            return Text.javaString(s);
        }
        return c.pointer() ? "(void*) " + c.value() : cValue(c.type(), c.value());
    }

    /** A number as C writes it: an int truncated to 32 bits, a float to single precision. */
    private static String cValue(Prim type, Object value) {
        return switch (type) {
            case INT -> Integer.toString((int) (long) (Long) value);
            case LONG, LONG_LONG -> Long.toString((Long) value);
            case FLOAT -> Float.toString((float) (double) (Double) value);
            case DOUBLE -> Double.toString((Double) value);
            case null, default -> String.valueOf(value);
        };
    }
}
