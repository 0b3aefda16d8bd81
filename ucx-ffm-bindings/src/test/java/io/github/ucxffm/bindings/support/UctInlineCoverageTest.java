package io.github.ucxffm.bindings.support;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Checks {@link UctInline} against the installed {@code uct/api/uct.h}: every function the header defines as
 * {@code UCT_INLINE_API} / {@code static inline} / {@code static UCS_F_ALWAYS_INLINE} has a public static Java form
 * with as many parameters, and {@code UctInline} has nothing else.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class UctInlineCoverageTest {

    private static final Path UCT_H = Path.of("/usr/include/uct/api/uct.h");

    /** A definition's specifier, then its return type (words and stars), then a uct_ name and its '('. */
    private static final Pattern INLINE_DEFINITION = Pattern.compile(
            "\\b(?:UCT_INLINE_API|static\\s+(?:inline|UCS_F_ALWAYS_INLINE)(?:\\s+inline)?)\\s+"
                    + "[\\w\\s*]*?\\b(uct_\\w+)\\s*\\(");

    /** Like {@link #INLINE_DEFINITION}, for any name (ucs_callbackq_dispatch is plain {@code static inline}). */
    private static final Pattern INLINE_BODY = Pattern.compile(
            "\\b(?:UCT_INLINE_API|static\\s+(?:inline|UCS_F_ALWAYS_INLINE)(?:\\s+inline)?)\\s+"
                    + "[\\w\\s*]*?\\b(\\w+)\\s*\\(");

    private static final Pattern COMMENTS = Pattern.compile("/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);

    @Test
    void shouldDeclareAJavaFormForEveryStaticInlineFunctionOfUctH() throws IOException {
        Map<String, Integer> inlines = staticInlineFunctions();
        assertFalse(inlines.isEmpty(), "no static inline function found in " + UCT_H + ": the pattern is stale");

        Map<String, Method> javaForms = publicStaticMethods();
        List<String> problems = new ArrayList<>();
        inlines.forEach((name, parameterCount) -> {
            Method method = javaForms.get(name);
            if (method == null) {
                problems.add(name + ": missing");
            } else if (method.getParameterCount() != parameterCount) {
                problems.add(name + ": " + method.getParameterCount() + " parameters, C has " + parameterCount);
            }
        });
        assertTrue(problems.isEmpty(), () -> "UctInline does not cover uct.h: " + problems);
    }

    @Test
    void shouldDeclareNothingButJavaFormsOfUctHInlines() throws IOException {
        TreeSet<String> extra = new TreeSet<>(publicStaticMethods().keySet());
        extra.removeAll(staticInlineFunctions().keySet());
        assertTrue(extra.isEmpty(), () -> "UctInline methods with no static inline C counterpart: " + extra);
    }

    @Test
    void shouldFindTheKnownInlinesOfUcx113() throws IOException {
        Map<String, Integer> inlines = staticInlineFunctions();
        // Spot checks that the parser sees both spellings and multi-line signatures.
        assertEquals(5, inlines.get("uct_ep_am_short"), "uct_ep_am_short(ep, id, header, payload, length)");
        assertEquals(1, inlines.get("uct_worker_progress"));
        assertEquals(2, inlines.get("uct_completion_update_status"), "the static UCS_F_ALWAYS_INLINE one");
        assertEquals(8, inlines.get("uct_ep_tag_rndv_zcopy"));
        assertFalse(inlines.containsKey("uct_ep_check"), "uct_ep_check is exported, not inline");
    }

    /**
     * What each mirrored C body was when its Java form was last checked against it: a fingerprint (the first 16 hex
     * digits of the SHA-256 of the body with comments dropped and white space squeezed) per function, the same on
     * UCX 1.13.1, 1.18.1 and 1.23.0. A release that changes a body fails here, naming the function whose mirror must
     * be read against the new body (and, if it then differs, chosen by release as {@code uct_worker_progress} is).
     * {@code ucs_callbackq_dispatch} is the loop {@code uct_worker_progress} inlines, from
     * {@code ucs/datastruct/callbackq.h}.
     */
    private static final String FINGERPRINTS = "/uct-inline-bodies.txt";

    @Test
    void shouldMirrorBodiesUnchangedSinceTheyWereChecked() throws IOException, NoSuchAlgorithmException {
        Map<String, String> recorded = new LinkedHashMap<>();
        String text;
        try (var in = UctInlineCoverageTest.class.getResourceAsStream(FINGERPRINTS)) {
            assertTrue(in != null, FINGERPRINTS + " is missing from the test resources");
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (String line : text.lines().toList()) {
            if (!line.isBlank() && !line.startsWith("#")) {
                String[] f = line.trim().split("\\s+");
                recorded.put(f[0], f[1]);
            }
        }
        Map<String, String> installed = bodyFingerprints(UCT_H, "uct_");
        installed.putAll(bodyFingerprints(UCT_H.resolveSibling("../../ucs/datastruct/callbackq.h").normalize(),
                "ucs_callbackq_dispatch"));
        List<String> changed = new ArrayList<>();
        installed.forEach((name, fingerprint) -> {
            if (!fingerprint.equals(recorded.get(name))) {
                changed.add(name + " (" + recorded.get(name) + " -> " + fingerprint + ")");
            }
        });
        assertEquals(36 + 1, installed.size(), "bodies found: " + installed.keySet());
        assertTrue(changed.isEmpty(), () -> "the installed UCX changed these static inline bodies since their Java "
                + "forms were checked; read each against the header and record it in src/test/resources" + FINGERPRINTS
                + ": " + changed);
    }

    /** Fingerprints of the bodies of the static inline functions of {@code header} whose names start with prefix. */
    private static Map<String, String> bodyFingerprints(Path header, String prefix)
            throws IOException, NoSuchAlgorithmException {
        assumeTrue(Files.isReadable(header), header + " is not installed (libucx-dev): nothing to compare with");
        String source = COMMENTS.matcher(Files.readString(header)).replaceAll(" ");
        Map<String, String> bodies = new LinkedHashMap<>();
        Matcher matcher = INLINE_BODY.matcher(source);
        while (matcher.find()) {
            if (!matcher.group(1).startsWith(prefix)) {
                continue;
            }
            int open = source.indexOf('{', matchingParenthesis(source, matcher.end() - 1));
            int depth = 0;
            int close = open;
            for (; close < source.length(); close++) {
                char c = source.charAt(close);
                if (c == '{') {
                    depth++;
                } else if (c == '}' && --depth == 0) {
                    break;
                }
            }
            String body = source.substring(open, close + 1).replaceAll("\\s+", " ");
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8));
            bodies.put(matcher.group(1), HexFormat.of().formatHex(digest, 0, 8));
        }
        return bodies;
    }

    /** Name to parameter count of each static inline {@code uct_} function defined in uct.h, in header order. */
    private static Map<String, Integer> staticInlineFunctions() throws IOException {
        assumeTrue(Files.isReadable(UCT_H), UCT_H + " is not installed (libucx-dev): nothing to compare with");
        String source = COMMENTS.matcher(Files.readString(UCT_H)).replaceAll(" ");
        Map<String, Integer> functions = new LinkedHashMap<>();
        Matcher matcher = INLINE_DEFINITION.matcher(source);
        while (matcher.find()) {
            int open = matcher.end() - 1;
            int close = matchingParenthesis(source, open);
            functions.put(matcher.group(1), countParameters(source.substring(open + 1, close)));
        }
        return functions;
    }

    private static int matchingParenthesis(String source, int open) {
        int depth = 0;
        for (int i = open; i < source.length(); i++) {
            char c = source.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')' && --depth == 0) {
                return i;
            }
        }
        throw new IllegalStateException("unbalanced parameter list at offset " + open);
    }

    private static int countParameters(String list) {
        String trimmed = list.strip();
        if (trimmed.isEmpty() || trimmed.equals("void")) {
            return 0;
        }
        int count = 1;
        int depth = 0;
        for (char c : trimmed.toCharArray()) {
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                count++;
            }
        }
        return count;
    }

    private static Map<String, Method> publicStaticMethods() {
        Map<String, Method> methods = new LinkedHashMap<>();
        for (Method method : UctInline.class.getDeclaredMethods()) {
            int modifiers = method.getModifiers();
            if (Modifier.isPublic(modifiers) && Modifier.isStatic(modifiers)) {
                methods.put(method.getName(), method);
            }
        }
        return methods;
    }
}
