package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.FunctionType;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The C text that generated Javadoc shows: declarations and prototypes spelled as in the headers, inside
 * {@code {@snippet lang=c :}} comments with an optional lead line and a closing note paragraph.
 */
final class Docs {

    /** Where a note paragraph's lines end at the latest. */
    private static final int NOTE_WIDTH = 116;

    private static final Pattern UNNAMED = Pattern.compile(
            "\\(unnamed (struct|union|enum) at ([^:)]+):(\\d+):(\\d+)\\)");

    private Docs() {
    }

    /** Declares {@code name} with the C type spelled {@code spelling} (arrays and function pointers wrap the name). */
    static String declare(String rawSpelling, String name) {
        String spelling = cleanSpelling(rawSpelling);
        if (spelling.contains("(*)")) {
            return spelling.replaceFirst("\\(\\*\\)", "(*" + name + ")");
        }
        int bracket = spelling.indexOf('[');
        if (bracket >= 0) {
            return spelling.substring(0, bracket).stripTrailing() + " " + name + spelling.substring(bracket);
        }
        return spelling + " " + name;
    }

    /** clang spells anonymous types with the absolute header path; keep the output the same on every machine. */
    static String cleanSpelling(String spelling) {
        Matcher m = UNNAMED.matcher(spelling);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement("(unnamed %s at %s:%s:%s)".formatted(m.group(1),
                    Text.shortPath(m.group(2)), m.group(3), m.group(4))));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /**
     * The C prototype of function {@code name}: named parameters declared with their names, {@code (void)} for a
     * prototype without parameters, {@code ()} for a declaration without prototype, {@code ...} when variadic.
     */
    static String prototype(String name, FunctionType f) {
        List<String> ps = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++) {
            String n = i < f.paramNames().size() ? f.paramNames().get(i) : "";
            ps.add(n.isEmpty() ? cleanSpelling(f.paramSpellings().get(i)) : declare(f.paramSpellings().get(i), n));
        }
        if (f.variadic()) {
            ps.add("...");
        }
        String params = ps.isEmpty() ? (f.noPrototype() ? "" : "void") : String.join(", ", ps);
        return declare(f.resultSpelling(), name + "(" + params + ")");
    }

    /** A Javadoc comment showing the C snippet {@code c}. */
    static String snippet(String indent, String c) {
        return comment(indent, "", c, "");
    }

    /** A Javadoc comment showing the C snippet {@code c}, then {@code note} as a paragraph when it is not empty. */
    static String snippet(String indent, String c, String note) {
        return comment(indent, "", c, note);
    }

    /** A Javadoc comment: the line {@code lead}, then the C snippet {@code c}. */
    static String doc(String indent, String lead, String c) {
        return comment(indent, lead, c, "");
    }

    /** A Javadoc comment: the line {@code lead}, the C snippet {@code c}, then {@code note} as a paragraph. */
    static String doc(String indent, String lead, String c, String note) {
        return comment(indent, lead, c, note);
    }

    /**
     * The comment every generated declaration carries, each line prefixed with {@code indent}: an optional lead line
     * (Javadoc text, not escaped), the C text escaped for Javadoc, and an optional note (plain text, escaped) wrapped
     * into a {@code <p>} paragraph that ends at column {@value #NOTE_WIDTH}.
     */
    private static String comment(String indent, String lead, String c, String note) {
        String leadLine = lead.isEmpty() ? "" : indent + " * " + lead + "\n";
        String code = Arrays.stream(c.split("\n"))
                .map(line -> indent + " * " + escape(line) + "\n")
                .collect(Collectors.joining());
        String paragraph = "";
        if (!note.isEmpty()) {
            List<String> words = new ArrayList<>(List.of(escape(note).split(" ")));
            words.set(0, "<p>" + words.getFirst());
            int start = indent.length() + " * ".length();
            paragraph = Text.wrap(words, start, start, NOTE_WIDTH).stream()
                    .map(line -> indent + " * " + line + "\n")
                    .collect(Collectors.joining());
        }
        return """
                %1$s/**
                %2$s%1$s * {@snippet lang=c :
                %3$s%1$s * }
                %4$s%1$s */
                """.formatted(indent, leadLine, code, paragraph);
    }

    /** Text that cannot end a comment or start a tag. */
    static String escape(String s) {
        return s.replace("*/", "*\\/").replace("@", "{@literal @}");
    }
}
