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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launcher asks only for what a command uses: with the samples jar built, running a sample calls neither
 * Maven nor a C compiler nor the package manager (stand-ins for them that record being called come first on PATH).
 * And {@code --release} is checked before anything is built, installed, mounted or made.
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

    /**
     * A wrong release name or a missing one is refused with a message, before any root is made or entered (the
     * cache directory stays empty and nothing that builds, installs, mounts or enters a root is called); {@code bench}
     * without a subcommand lists them without a root. Needs no root: CI makes those in its matrix step.
     */
    @Test
    void shouldRefuseAnUnknownOrMissingReleaseBeforeMakingOrEnteringARoot(@TempDir Path dir) throws Exception {
        Path bin = Files.createDirectory(dir.resolve("bin"));
        Path calls = dir.resolve("calls.txt");
        Path cache = Files.createDirectory(dir.resolve("cache"));
        List<String> tools = new ArrayList<>(NOT_NEEDED);
        tools.addAll(List.of("mount", "unshare", "chroot", "dpkg-query"));
        for (String tool : tools) {
            Path stand = bin.resolve(tool);
            Files.writeString(stand, "#!/bin/sh\necho \"" + tool + " $*\" >> '" + calls + "'\nexit 1\n");
            Files.setPosixFilePermissions(stand, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        record Case(List<String> args, int exit, String says) {
        }
        List<Case> cases = List.of(
                new Case(List.of("bench", "compare", "--quick", "--release", "potato"), 1,
                        "ucx-ffm: unknown release 'potato' (bookworm, trixie, sid or forky)"),
                new Case(List.of("perftest", "--release=", "-p", "13400"), 1,
                        "ucx-ffm: --release needs a Debian release: bookworm, trixie, sid or forky"),
                new Case(List.of("bench", "jmh", "--release"), 1,
                        "ucx-ffm: --release needs a Debian release: bookworm, trixie, sid or forky"),
                new Case(List.of("info", "--release", "sid", "--release", "trixie"), 1,
                        "ucx-ffm: --release given twice"),
                new Case(List.of("bench", "--release", "sid"), 0, "compare [OPTIONS]"));
        Path root = DemoIT.repoRoot();
        for (Case c : cases) {
            List<String> command = new ArrayList<>(List.of("bash", root.resolve("ucx-ffm").toString()));
            command.addAll(c.args());
            ChildProcess p = ChildProcess.command(command)
                    .directory(root).name("launcher")
                    .env("PATH", bin + ":" + System.getenv("PATH"))
                    .env("JAVA_HOME", System.getProperty("java.home"))
                    .env("UCXFFM_CACHE", cache.toString())
                    .run(Duration.ofSeconds(60));
            String out = p.output();
            assertEquals(c.exit(), p.exitCode(), c.args() + ": " + out);
            assertTrue(out.contains(c.says()), c.args() + ": " + out);
            assertFalse(Files.exists(calls), () -> c.args() + ": the launcher called " + read(calls) + "\n" + out);
            try (Stream<Path> left = Files.list(cache)) {
                assertTrue(left.findAny().isEmpty(), c.args() + ": something was made in the cache\n" + out);
            }
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return e.toString();
        }
    }
}
