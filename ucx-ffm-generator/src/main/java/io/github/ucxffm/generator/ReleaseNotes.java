package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Constant;
import io.github.ucxffm.generator.Model.Unit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What the release records ({@code --release-record}) say about the generated names, and how the generated code tells
 * it: a Javadoc note on each name that some recorded releases lack, and the shared class's table of those names for
 * missing-symbol errors. Remembers every name it was asked about that some releases lack, so the table is complete
 * once all classes have been rendered.
 */
final class ReleaseNotes {

    /** The recorded releases, oldest first (empty without --release-record). */
    private final List<Release> releases;
    private final String label;
    /** The release the headers name through --release-version, or null. */
    private final String headersRelease;
    /** For each generated name that some recorded releases lack: the releases that have it, oldest first. */
    private final Map<String, List<Release>> partial = new TreeMap<>();

    ReleaseNotes(List<Release> releases, String label, String headersRelease) {
        this.releases = List.copyOf(releases);
        this.label = label;
        this.headersRelease = headersRelease;
    }

    /** The notes for {@code unit}, whose release is the value of the string constant {@code versionMacro} if any. */
    static ReleaseNotes of(Unit unit, List<Release> releases, String label, String versionMacro) {
        String version = null;
        for (Constant c : unit.constants) {
            if (c.name().equals(versionMacro) && c.value() instanceof String s) {
                version = s;
            }
        }
        return new ReleaseNotes(releases, label, version);
    }

    List<Release> releases() {
        return releases;
    }

    /** How messages name the library ("UCX"). */
    String label() {
        return label;
    }

    /** The release the headers name, or null. */
    String headersRelease() {
        return headersRelease;
    }

    /** The recorded releases that have {@code name} when some lack it (remembered for the shared class), else null. */
    private List<Release> partialReleases(String name) {
        List<Release> has = new ArrayList<>();
        for (Release r : releases) {
            if (r.has(name)) {
                has.add(r);
            }
        }
        if (has.isEmpty() || has.size() == releases.size()) {
            return null; // in every recorded release, or in none (not part of the recorded surface)
        }
        partial.put(name, has);
        return has;
    }

    /** Whether {@code has} is the newest releases, all of them from its first on. */
    private boolean newest(List<Release> has) {
        return releases.subList(releases.size() - has.size(), releases.size()).equals(has);
    }

    /** "UCX 1.18.1 and later have it, UCX 1.13.1 lacks it", as the shared class also words it at run time. */
    private String availabilityText(List<Release> has) {
        List<String> yes = has.stream().map(r -> r.version).toList();
        List<String> no = releases.stream().filter(r -> !has.contains(r)).map(r -> r.version).toList();
        String haveIt = newest(has) && has.size() > 1 ? label + " " + yes.getFirst() + " and later have it"
                : label + " " + String.join(", ", yes) + (yes.size() > 1 ? " have it" : " has it");
        return haveIt + ", " + label + " " + String.join(", ", no) + (no.size() > 1 ? " lack it" : " lacks it");
    }

    /** The Javadoc paragraph of a name that some recorded releases lack; empty for the others. */
    String note(String name) {
        List<Release> has = partialReleases(name);
        if (has == null) {
            return "";
        }
        String lead = newest(has) ? "Since " + label + " " + has.getFirst().majorMinor() + " at the latest"
                : "Not in every " + label + " release";
        return lead + " (recorded releases: " + availabilityText(has) + ").";
    }

    /**
     * The shared class's record of releases: which recorded releases have the names some lack, the availability
     * message, and, with a library hook that gives the loaded release, the version test that release-dependent
     * constants use. Call after every class has been rendered.
     */
    String sharedMembers(String hook) {
        String recorded = releases.stream().map(r -> Text.javaString(r.version)).collect(Collectors.joining(", "));
        Map<String, List<String>> byReleases = new TreeMap<>();
        for (Map.Entry<String, List<Release>> e : partial.entrySet()) {
            String key = String.join(", ", e.getValue().stream().map(r -> Text.javaString(r.version)).toList());
            byReleases.computeIfAbsent(key, k -> new ArrayList<>()).add(e.getKey());
        }
        StringBuilder cases = new StringBuilder();
        for (Map.Entry<String, List<String>> e : byReleases.entrySet()) {
            List<String> names = e.getValue();
            List<String> items = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                items.add(Text.javaString(names.get(i)) + (i + 1 < names.size() ? "," : ""));
            }
            String labels = String.join("\n            ", Text.wrap(items, "        case ".length(), 12, 116));
            cases.append("""
                            case %s
                                -> List.of(%s);
                    """.formatted(labels, e.getKey()));
        }
        String members = """

                /** The releases of %1$s whose records these bindings were generated with, oldest first. */
                static final List<String> RECORDED_RELEASES = List.of(%2$s);

                /**
                 * The recorded releases that declare {@code name} (a function, constant, record, typedef or variable of
                 * these bindings), oldest first, when some recorded releases lack it; null when all or none of them
                 * declare it.
                 */
                static List<String> releasesOf(String name) {
                    return switch (name) {
                %3$s        default -> null;
                    };
                }

                /** Which recorded releases have {@code name} and which lack it, for messages; null when all have it. */
                static String availability(String name) {
                    List<String> has = releasesOf(name);
                    if (has == null) {
                        return null;
                    }
                    List<String> lacks = new ArrayList<>(RECORDED_RELEASES);
                    lacks.removeAll(has);
                    boolean newest = RECORDED_RELEASES.subList(RECORDED_RELEASES.size() - has.size(),
                        RECORDED_RELEASES.size()).equals(has);
                    String haveIt = newest && has.size() > 1 ? "%1$s " + has.getFirst() + " and later have it"
                        : "%1$s " + String.join(", ", has) + (has.size() > 1 ? " have it" : " has it");
                    return haveIt + ", %1$s " + String.join(", ", lacks) + (lacks.size() > 1 ? " lack it" : " lacks it");
                }
                """.formatted(label, recorded, cases);
        if (hook == null || releases.isEmpty()) {
            return members;
        }
        return members + """

                /**
                 * Index of the newest of {@code firsts} (release codes {@code MAJOR << 16 | MINOR << 8 | PATCH},
                 * ascending) not newer than the loaded %1$s, or 0 when the loaded one is older than all of them.
                 */
                static int releaseIndex(int... firsts) {
                    int loaded = %2$s.version();
                    int i = firsts.length - 1;
                    while (i > 0 && firsts[i] > loaded) {
                        i--;
                    }
                    return i;
                }
                """.formatted(label, hook);
    }
}
