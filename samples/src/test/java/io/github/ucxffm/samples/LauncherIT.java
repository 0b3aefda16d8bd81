package io.github.ucxffm.samples;

import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher asks only for what a command uses: with the samples jar built, running a sample calls neither
 * Maven nor a C compiler nor the package manager (stand-ins for them that record being called come first on PATH).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LauncherIT {

    private static final List<String> NOT_NEEDED = List.of("mvn", "gcc", "cc", "apt-get", "debootstrap");

    @Test
    void shouldRunASampleWithABuiltJarWithoutMavenOrACompiler(@TempDir Path dir) throws Exception {
        Path root = DemoIT.repoRoot();
        assertTrue(Files.isRegularFile(root.resolve("samples/target/ucx-ffm-samples.jar")), "not packaged");
        Path bin = Files.createDirectory(dir.resolve("bin"));
        Path calls = dir.resolve("calls.txt");
        for (String tool : NOT_NEEDED) {
            Path stand = bin.resolve(tool);
            Files.writeString(stand, "#!/bin/sh\necho \"" + tool + " $*\" >> '" + calls + "'\nexit 1\n");
            Files.setPosixFilePermissions(stand, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        ChildProcess p = ChildProcess.command("bash", root.resolve("ucx-ffm").toString(), "sample", "--help")
                .directory(root).name("launcher")
                .env("PATH", bin + ":" + System.getenv("PATH"))
                .env("JAVA_HOME", System.getProperty("java.home"))
                .run(Duration.ofSeconds(90));
        String out = p.output();
        assertEquals(0, p.exitCode(), out);
        assertTrue(out.contains("tag-pingpong") && out.contains("demo"), out);
        assertFalse(Files.exists(calls), () -> "the launcher called " + read(calls) + "\n" + out);
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return e.toString();
        }
    }
}
