package io.github.ucxffm.bindings;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UCX parses fractional configuration values with {@code strtod}, which follows {@code LC_NUMERIC}; a JVM takes its
 * locale from the environment. Loading the bindings must make UCX's parsing work under a comma-decimal locale.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LocaleSafetyTest {

    @Test
    void shouldParseFractionalUcxValuesUnderACommaDecimalLocale(@TempDir Path locales) throws Exception {
        // A German locale compiled into a private folder: nothing on the machine changes.
        ChildProcess localedef = ChildProcess.command("localedef", "-c", "-i", "de_DE", "-f", "UTF-8",
                locales.resolve("de_DE.UTF-8").toString()).start();
        boolean finished = localedef.awaitExit(60);
        String defOut = localedef.output();
        localedef.close();
        Assumptions.assumeTrue(finished && Files.isDirectory(locales.resolve("de_DE.UTF-8")), () -> {
            String reason = "skipping: localedef cannot build de_DE.UTF-8 here (install the locales package): "
                    + defOut;
            System.out.println(reason);
            return reason;
        });

        String classpath = String.join(File.pathSeparator,
                Path.of(LocaleProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString(),
                Path.of(ucx_h.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        ChildProcess p = ChildProcess.java(LocaleProbe.class).classPath(classpath)
                .jvmFlags(List.of("--enable-native-access=ALL-UNNAMED"))
                .env("LOCPATH", locales.toString()).env("LC_ALL", "de_DE.UTF-8")
                .run(Duration.ofSeconds(60));
        String out = p.output();
        assertEquals(0, p.exitCode(), out);
        // The hazard is real in this process: before UCX loads, "2.5" reads as 2.
        assertTrue(out.contains("strtod before loading UCX: 2.0"), out);
        // After: UCX accepts the value, and C's numeric locale is "C".
        assertTrue(out.contains("ucp_config_read 0, ucp_config_modify(KEEPALIVE_INTERVAL=2.5s) 0"), out);
        assertTrue(out.contains("strtod after loading UCX: 2.5"), out);
    }
}
