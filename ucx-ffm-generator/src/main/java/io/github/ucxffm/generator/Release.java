package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Constant;
import io.github.ucxffm.generator.Model.Field;
import io.github.ucxffm.generator.Model.Record;
import io.github.ucxffm.generator.Model.RecordRef;
import io.github.ucxffm.generator.Model.TypedefDecl;
import io.github.ucxffm.generator.Model.Unit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The public surface of one release of a library, as its headers declare it: the record that
 * {@code --dump-release} writes and {@code --release-record} reads. A text file, one declaration a line, sorted so
 * that two releases' records diff well:
 * <pre>
 * release UCX 1.18.1
 * function NAME
 * constant NAME TYPE VALUE        (TYPE: int, long, float, double, string, pointer; a string VALUE is quoted)
 * record NAME KEYWORD SIZE ALIGN  (NAME: the tag, or the typedef naming an anonymous record)
 * field RECORD NAME OFFSET SIZE   (in bytes; anonymous members flattened as C reaches them)
 * typedef NAME
 * var NAME
 * </pre>
 * A release is named {@code MAJOR.MINOR.PATCH}; its code {@code MAJOR << 16 | MINOR << 8 | PATCH} orders releases
 * and is what the generated code compares with the loaded library's.
 */
final class Release implements Comparable<Release> {

    private static final Pattern VERSION = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

    /** A record's size and alignment and its fields by name: offset and size. */
    record RecordInfo(String keyword, long size, long align, Map<String, long[]> fields) {
    }

    /** A constant's type and its value as the record writes it. */
    record Value(String type, String text) {
    }

    final String label;
    final String version;
    final int code;
    final Set<String> functions = new TreeSet<>();
    final Map<String, Value> constants = new TreeMap<>();
    final Map<String, RecordInfo> records = new TreeMap<>();
    final Set<String> typedefs = new TreeSet<>();
    final Set<String> variables = new TreeSet<>();

    Release(String label, String version) {
        this.label = label;
        this.version = version;
        this.code = code(version);
    }

    /** {@code MAJOR << 16 | MINOR << 8 | PATCH} of a version spelled {@code MAJOR.MINOR.PATCH}. */
    static int code(String version) {
        var m = VERSION.matcher(version);
        if (!m.matches()) {
            throw new GeneratorException("a release version must read MAJOR.MINOR.PATCH, not \"" + version + "\"");
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        int patch = Integer.parseInt(m.group(3));
        if (minor > 255 || patch > 255) {
            throw new GeneratorException("release " + version + ": minor and patch must be below 256");
        }
        return major << 16 | minor << 8 | patch;
    }

    /** "1.18" of "1.18.1". */
    String majorMinor() {
        return version.substring(0, version.lastIndexOf('.'));
    }

    String name() {
        return label + " " + version;
    }

    @Override
    public int compareTo(Release other) {
        return Integer.compare(code, other.code);
    }

    /** Whether this release declares {@code name} as anything the generator binds. */
    boolean has(String name) {
        return functions.contains(name) || constants.containsKey(name) || records.containsKey(name)
                || typedefs.contains(name) || variables.contains(name);
    }

    // ---- from headers -------------------------------------------------------------------------------------------

    /**
     * The surface of {@code unit} declared in the files {@code wanted} accepts; the release is named by the string
     * constant {@code versionMacro}.
     */
    static Release of(Unit unit, Predicate<String> wanted, String label, String versionMacro) {
        String version = null;
        for (Constant c : unit.constants) {
            if (c.name().equals(versionMacro)) {
                if (!(c.value() instanceof String s)) {
                    throw new GeneratorException(versionMacro + " is not a string constant");
                }
                version = s;
            }
        }
        if (version == null) {
            throw new GeneratorException("the headers define no " + versionMacro + " to name the release");
        }
        Release r = new Release(label, version);
        for (Model.Function f : unit.functions) {
            if (wanted.test(f.file())) {
                r.functions.add(f.name());
            }
        }
        for (Constant c : unit.constants) {
            if (wanted.test(c.file())) {
                r.constants.put(c.name(), valueOf(c));
            }
        }
        for (Record rec : unit.records) {
            if (rec.complete && wanted.test(rec.file) && rec.javaName != null && rec.enclosing == null) {
                Map<String, long[]> fields = new LinkedHashMap<>();
                flatten(rec, 0, fields);
                r.records.put(rec.javaName, new RecordInfo(rec.keyword(), rec.size, rec.align, fields));
            }
        }
        for (TypedefDecl t : unit.typedefs) {
            if (wanted.test(t.file())) {
                r.typedefs.add(t.name());
            }
        }
        for (Model.Variable v : unit.variables) {
            if (wanted.test(v.file())) {
                r.variables.add(v.name());
            }
        }
        return r;
    }

    private static void flatten(Record rec, long base, Map<String, long[]> out) {
        for (Field f : rec.fields) {
            if (f.bitField()) {
                continue;
            }
            long offset = base + f.offsetBits() / 8;
            if (f.anonymousMember()) {
                flatten(((RecordRef) f.type()).record(), offset, out);
            } else {
                out.put(f.name(), new long[] {offset, fieldSize(f.type())});
            }
        }
    }

    private static long fieldSize(Model.CType type) {
        return switch (TypeMapping.resolve(type)) {
            case Model.Primitive p -> switch (p.prim()) {
                case BOOL, CHAR -> 1;
                case SHORT -> 2;
                case INT, FLOAT -> 4;
                case LONG, LONG_LONG, DOUBLE -> 8;
            };
            case Model.Pointer p -> 8;
            case RecordRef rr -> rr.record().size;
            case Model.Array a -> Math.max(0, a.count()) * fieldSize(a.element());
            default -> 0;
        };
    }

    static Value valueOf(Constant c) {
        if (c.value() instanceof String s) {
            return new Value("string", Text.javaString(s));
        }
        if (c.pointer()) {
            return new Value("pointer", c.value().toString());
        }
        return switch (c.type()) {
            case INT -> new Value("int", Integer.toString((int) (long) (Long) c.value()));
            case LONG, LONG_LONG -> new Value("long", c.value().toString());
            case FLOAT -> new Value("float", Float.toString((float) (double) (Double) c.value()));
            case DOUBLE -> new Value("double", c.value().toString());
            default -> throw new GeneratorException("constant " + c.name() + " has an unexpected type " + c.type());
        };
    }

    // ---- text ---------------------------------------------------------------------------------------------------

    String text(String header) {
        StringBuilder sb = new StringBuilder();
        sb.append("# The public surface of ").append(header).append(" in ").append(name())
                .append(", as its installed headers declare it.\n")
                // Names this project's launcher: the line is part of the committed records, which must stay
                // byte-identical to a new dump of the same release.
                .append("# Written by ucx-ffm-generator --dump-release (./ucx-ffm regen --dump); do not edit.\n")
                .append("# function NAME | constant NAME TYPE VALUE | record NAME KEYWORD SIZE ALIGN\n")
                .append("# | field RECORD NAME OFFSET SIZE | typedef NAME | var NAME   (sizes and offsets in bytes)\n");
        sb.append("release ").append(label).append(' ').append(version).append('\n');
        for (String f : functions) {
            sb.append("function ").append(f).append('\n');
        }
        for (Map.Entry<String, Value> e : constants.entrySet()) {
            sb.append("constant ").append(e.getKey()).append(' ').append(e.getValue().type()).append(' ')
                    .append(e.getValue().text()).append('\n');
        }
        for (Map.Entry<String, RecordInfo> e : records.entrySet()) {
            RecordInfo info = e.getValue();
            sb.append("record ").append(e.getKey()).append(' ').append(info.keyword()).append(' ').append(info.size())
                    .append(' ').append(info.align()).append('\n');
            for (Map.Entry<String, long[]> f : info.fields().entrySet()) {
                sb.append("field ").append(e.getKey()).append(' ').append(f.getKey()).append(' ')
                        .append(f.getValue()[0]).append(' ').append(f.getValue()[1]).append('\n');
            }
        }
        for (String t : typedefs) {
            sb.append("typedef ").append(t).append('\n');
        }
        for (String v : variables) {
            sb.append("var ").append(v).append('\n');
        }
        return sb.toString();
    }

    static Release read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read release record " + file, e);
        }
        Release r = null;
        int n = 0;
        for (String line : lines) {
            n++;
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] w = line.split(" ", 4);
            String where = file + ":" + n + ": ";
            if (r == null) {
                if (!w[0].equals("release") || w.length != 3) {
                    throw new GeneratorException(where + "a release record starts with \"release LABEL VERSION\"");
                }
                r = new Release(w[1], w[2]);
                continue;
            }
            try {
                switch (w[0]) {
                    case "function" -> r.functions.add(only(w, 2, where));
                    case "typedef" -> r.typedefs.add(only(w, 2, where));
                    case "var" -> r.variables.add(only(w, 2, where));
                    case "constant" -> r.constants.put(w[1], new Value(w[2], w[3]));
                    case "record" -> {
                        String[] x = line.split(" ");
                        r.records.put(x[1], new RecordInfo(x[2], Long.parseLong(x[3]), Long.parseLong(x[4]),
                                new LinkedHashMap<>()));
                    }
                    case "field" -> {
                        String[] x = line.split(" ");
                        RecordInfo info = r.records.get(x[1]);
                        if (info == null) {
                            throw new GeneratorException(where + "field of an unknown record " + x[1]);
                        }
                        info.fields().put(x[2], new long[] {Long.parseLong(x[3]), Long.parseLong(x[4])});
                    }
                    default -> throw new GeneratorException(where + "unknown line kind " + w[0]);
                }
            } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
                throw new GeneratorException(where + "malformed line: " + line);
            }
        }
        if (r == null) {
            throw new GeneratorException(file + ": empty release record");
        }
        return r;
    }

    private static String only(String[] words, int count, String where) {
        if (words.length != count) {
            throw new GeneratorException(where + "expected " + count + " words");
        }
        return words[1];
    }

    /** The records in release order; two records of one release are an error. */
    static List<Release> readAll(List<Path> files) {
        List<Release> releases = new ArrayList<>();
        for (Path file : files) {
            Release r = read(file);
            for (Release other : releases) {
                if (other.code == r.code) {
                    throw new GeneratorException("two release records for " + r.name() + ": " + file);
                }
            }
            releases.add(r);
        }
        releases.sort(null);
        return releases;
    }
}
