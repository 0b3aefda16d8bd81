package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Constant;
import io.github.ucxffm.generator.Model.Function;
import io.github.ucxffm.generator.Model.Record;
import io.github.ucxffm.generator.Model.TypedefDecl;
import io.github.ucxffm.generator.Model.Unit;
import io.github.ucxffm.generator.Model.Variable;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code --dump-includes}: an argument file naming every symbol of the headers that {@code --header-filter} keeps,
 * one {@code --include-KIND NAME} a line, grouped by the header that declares it under a heading per subsystem (the
 * first folder of the header's path below {@code include/}). Subsystems come in the order of the filters that keep
 * them, so the argument file reads in the order the filters were given.
 */
final class SymbolDump {

    private SymbolDump() {
    }

    /** The argument file's text for {@code unit}, filtered and ordered by {@code options.headerFilters}. */
    static String dump(Unit unit, Options options) {
        Map<String, List<String>> byFile = new LinkedHashMap<>();
        for (Function f : unit.functions) {
            add(byFile, options, f.file(), Options.Kind.FUNCTION, f.name());
        }
        for (Constant c : unit.constants) {
            add(byFile, options, c.file(), Options.Kind.CONSTANT, c.name());
        }
        for (Record r : unit.records) {
            if (!r.anonymous()) {
                add(byFile, options, r.file, r.union ? Options.Kind.UNION : Options.Kind.STRUCT, r.tag);
            }
        }
        for (TypedefDecl t : unit.typedefs) {
            add(byFile, options, t.file(), Options.Kind.TYPEDEF, t.name());
        }
        for (Variable v : unit.variables) {
            add(byFile, options, v.file(), Options.Kind.VAR, v.name());
        }
        List<Map.Entry<String, List<String>>> groups = new ArrayList<>(byFile.entrySet());
        // Groups of one subsystem stay together, each under one heading; the sort is stable, so headers keep the
        // order clang met them in.
        groups.sort(Comparator.comparingInt((Map.Entry<String, List<String>> e) -> rank(e.getKey(), options))
                .thenComparing(e -> subsystemOf(e.getKey())));
        StringBuilder text = new StringBuilder();
        String subsystem = "";
        for (Map.Entry<String, List<String>> e : groups) {
            String s = subsystemOf(e.getKey());
            if (!s.equals(subsystem)) {
                subsystem = s;
                text.append("\n### %s\n".formatted(s));
            }
            List<String> lines = new ArrayList<>(e.getValue());
            lines.sort(Comparator.comparingInt(SymbolDump::kindOrder));
            text.append("\n#### Extracted from: %s\n\n%s".formatted(Text.shortPath(e.getKey()),
                    String.join("", lines.stream().map(line -> line + "\n").toList())));
        }
        return text.toString();
    }

    /** Adds the line of {@code name} to its header's group when the filters keep that header. */
    private static void add(Map<String, List<String>> byFile, Options options, String file, Options.Kind kind,
                            String name) {
        if (options.headerFilters.isEmpty() || options.headerFilters.stream().anyMatch(file::contains)) {
            byFile.computeIfAbsent(file, x -> new ArrayList<>()).add(kind.option + " " + name);
        }
    }

    /** The position of the first --header-filter that keeps {@code file}: where its group goes. */
    static int rank(String file, Options options) {
        for (int i = 0; i < options.headerFilters.size(); i++) {
            if (file.contains(options.headerFilters.get(i))) {
                return i;
            }
        }
        return options.headerFilters.size();
    }

    /** The heading of a header's group: the first folder below {@code include/}, in capitals, else "other". */
    static String subsystemOf(String file) {
        String p = Text.shortPath(file);
        int slash = p.indexOf('/');
        return slash > 0 ? p.substring(0, slash).toUpperCase(Locale.ROOT) : "other";
    }

    /** Within a header: functions, constants, structs, unions, typedefs, variables (the order of the option kinds). */
    private static int kindOrder(String line) {
        String option = line.substring(0, line.indexOf(' '));
        for (Options.Kind kind : Options.Kind.values()) {
            if (kind.option.equals(option)) {
                return kind.ordinal();
            }
        }
        throw new IllegalArgumentException(line);
    }
}
