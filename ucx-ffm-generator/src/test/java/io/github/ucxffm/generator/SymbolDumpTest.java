package io.github.ucxffm.generator;

import io.github.ucxffm.generator.Model.Constant;
import io.github.ucxffm.generator.Model.Function;
import io.github.ucxffm.generator.Model.FunctionType;
import io.github.ucxffm.generator.Model.Prim;
import io.github.ucxffm.generator.Model.Unit;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The argument file of --dump-includes, from a hand-made unit: no libclang needed. */
class SymbolDumpTest {

    private static final FunctionType VOID_FN = new FunctionType(new Model.Void(), List.of(), List.of(), List.of(),
            "void", false, false);

    /** Headers of three subsystems, met in the order beta, alpha, gamma, alpha again. */
    private static Unit unit() {
        Unit unit = new Unit();
        unit.functions.add(new Function("beta_f", VOID_FN, "/usr/include/beta/api/beta.h"));
        unit.functions.add(new Function("alpha_f", VOID_FN, "/usr/include/alpha/api/alpha.h"));
        unit.functions.add(new Function("gamma_f", VOID_FN, "/usr/include/gamma/gamma.h"));
        unit.functions.add(new Function("alpha_g", VOID_FN, "/usr/include/alpha/more.h"));
        unit.constants.add(new Constant("ALPHA_C", Prim.INT, 1L, false, "/usr/include/alpha/api/alpha.h"));
        unit.functions.add(new Function("libc_f", VOID_FN, "/usr/include/stdio.h"));
        return unit;
    }

    private static Options filters(String... filters) {
        Options options = new Options();
        options.headerFilters.addAll(List.of(filters));
        return options;
    }

    private static List<String> structure(String dump) {
        return dump.lines().filter(l -> l.startsWith("#")).toList();
    }

    @Test
    void shouldGroupHeadersInTheOrderOfTheFiltersThatKeepThem() {
        assertEquals(List.of("### GAMMA", "#### Extracted from: gamma/gamma.h",
                        "### ALPHA", "#### Extracted from: alpha/api/alpha.h", "#### Extracted from: alpha/more.h",
                        "### BETA", "#### Extracted from: beta/api/beta.h"),
                structure(SymbolDump.dump(unit(), filters("/gamma/", "/alpha/", "/beta/"))));
        assertEquals(List.of("### BETA", "#### Extracted from: beta/api/beta.h",
                        "### ALPHA", "#### Extracted from: alpha/api/alpha.h", "#### Extracted from: alpha/more.h"),
                structure(SymbolDump.dump(unit(), filters("/beta/", "/alpha/"))));
    }

    @Test
    void shouldListFunctionsBeforeConstantsWithinAHeaderWhateverTheirOrderInTheUnit() {
        String dump = SymbolDump.dump(unit(), filters("/alpha/api/"));
        assertEquals("""

                ### ALPHA

                #### Extracted from: alpha/api/alpha.h

                --include-function alpha_f
                --include-constant ALPHA_C
                """, dump);
    }

    @Test
    void shouldKeepEverySubsystemUnderOneHeadingWithoutFilters() {
        assertEquals(List.of("### ALPHA", "#### Extracted from: alpha/api/alpha.h", "#### Extracted from: alpha/more.h",
                        "### BETA", "#### Extracted from: beta/api/beta.h",
                        "### GAMMA", "#### Extracted from: gamma/gamma.h",
                        "### other", "#### Extracted from: stdio.h"),
                structure(SymbolDump.dump(unit(), filters())));
    }
}
