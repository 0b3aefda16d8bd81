package io.github.ucxffm.bindings.support;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
