package io.github.ucxffm.generator;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/** Text helpers every part of the emitter uses: indentation, word wrapping, Java string literals, header paths. */
final class Text {

    private Text() {
    }

    /** Prefixes every non-empty line of {@code text} with {@code indent}; empty lines stay empty. */
    static String indent(String text, String indent) {
        return Arrays.stream(text.split("\n", -1))
                .map(line -> line.isEmpty() ? line : indent + line)
                .collect(Collectors.joining("\n"));
    }

    /**
     * Greedy word wrap: {@code words} joined by single spaces into lines that end at column {@code limit} at the
     * latest, except for a word that does not fit on a line of its own. The first line starts at column
     * {@code firstStart}, the others at {@code nextStart}.
     */
    static List<String> wrap(List<String> words, int firstStart, int nextStart, int limit) {
        List<String> lines = new ArrayList<>();
        String line = "";
        int start = firstStart;
        for (String word : words) {
            if (!line.isEmpty() && start + line.length() + 1 + word.length() > limit) {
                lines.add(line);
                line = word;
                start = nextStart;
            } else {
                line = line.isEmpty() ? word : line + " " + word;
            }
        }
        lines.add(line);
        return lines;
    }

    /** A Java string literal of {@code s}: quotes, backslashes and control characters escaped, non-ASCII as \\u. */
    static String javaString(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                case '\r' -> sb.append("\\r");
                default -> {
                    if (ch < 0x20 || ch > 0x7e) {
                        sb.append(String.format("\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /** A header's path below its {@code include} folder ({@code ucp/api/ucp.h}), else the path as given. */
    static String shortPath(String file) {
        int i = file.lastIndexOf("/include/");
        return i >= 0 ? file.substring(i + "/include/".length()) : file;
    }
}
