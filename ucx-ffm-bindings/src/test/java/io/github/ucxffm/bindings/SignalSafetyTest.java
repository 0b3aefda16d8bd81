package io.github.ucxffm.bindings;

import io.github.ucxffm.bindings.support.UcxLibraryHook;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UCX must not take HotSpot's signals: loading the bindings disables UCX's error-signal handlers in process.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SignalSafetyTest {

    private static final int SIGSEGV = 11;
    private static final int SIGBUS = 7;

    @Test
    void shouldLeaveTheJvmsSegvAndBusHandlersInPlaceAfterUcxLoads() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment context = UcpSmokeTest.init(arena, ucx_h.UCP_FEATURE_TAG());
            MemorySegment worker = UcpSmokeTest.worker(arena, context);
            try {
                for (int signal : new int[] {SIGSEGV, SIGBUS}) {
                    String owner = handlerLibrary(arena, signal);
                    assertTrue(owner.contains("libjvm"), "signal " + signal + " is handled by " + owner);
                }
            } finally {
                ucp_cleanup(context, worker);
            }
        }
    }

    private static void ucp_cleanup(MemorySegment context, MemorySegment worker) {
        ucx_h.ucp_worker_destroy(worker);
        ucx_h.ucp_cleanup(context);
    }

    /** The shared object that holds the current handler of {@code signal}, from sigaction and dladdr. */
    private static String handlerLibrary(Arena arena, int signal) throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle sigaction = linker.downcallHandle(linker.defaultLookup().find("sigaction").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        MethodHandle dladdr = linker.downcallHandle(linker.defaultLookup().find("dladdr").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        MemorySegment old = arena.allocate(152, 8); // struct sigaction on x86-64 glibc; the handler comes first
        assertEquals(0, (int) sigaction.invokeExact(signal, MemorySegment.NULL, old));
        MemorySegment handler = old.get(ADDRESS, 0);
        assertNotEquals(0L, handler.address(), "no handler for signal " + signal);
        MemorySegment info = arena.allocate(32, 8); // Dl_info: dli_fname first
        int found = (int) dladdr.invokeExact(handler, info);
        assertNotEquals(0, found, "dladdr knows no library for the handler of signal " + signal);
        return info.get(ADDRESS, 0).reinterpret(4096).getString(0);
    }

    @Test
    void shouldStillTurnNullDereferencesIntoNullPointerExceptions() throws Exception {
        Run run = probe(List.of());
        assertEquals(0, run.exit, run.output);
        assertTrue(run.output.contains("caught 30 NullPointerExceptions"), run.output);
        assertFalse(run.output.contains("Caught signal"), "UCX's handler saw a signal:\n" + run.output);
    }

    /**
     * The control: with UCX's handlers kept, UCX's handler takes the JVM's null-check signal (it prints "Caught
     * signal 11" and a backtrace). This proves the probe above detects the fault it guards against, rather than
     * passing whatever the hook does. What happens next varies: usually the process dies; in some runs UCX hands the
     * signal back to the JVM's handler, which it restores, and the probe goes on.
     */
    @Test
    void shouldLetUcxTakeTheSignalWhenItKeepsItsHandlers() throws Exception {
        Run run = probe(List.of("-D" + UcxLibraryHook.KEEP_SIGNALS_PROPERTY + "=true"));
        assertTrue(run.output.contains("Caught signal 11"), "exit " + run.exit + ":\n" + run.output);
    }

    private record Run(int exit, String output) {
    }

    private static Run probe(List<String> jvmArgs) throws Exception {
        String classpath = String.join(File.pathSeparator,
                Path.of(NullCheckProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString(),
                Path.of(ucx_h.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        List<String> flags = new ArrayList<>(List.of("--enable-native-access=ALL-UNNAMED",
                "-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=/dev/null"));
        flags.addAll(jvmArgs);
        // UCX installs its error-signal handlers only when UCX_HANDLE_ERRORS asks for an action; the default was
        // "bt" up to 1.18 and is "none" from 1.23 (ucx_info -c). Ask for it, so that every release installs them
        // unless the hook turned them off: the control then proves the probe detects UCX's handler everywhere.
        // UCX_ERROR_SIGNALS is left at UCX's default (an empty value would mean none).
        ChildProcess p = ChildProcess.java(NullCheckProbe.class).classPath(classpath).jvmFlags(flags)
                .env("UCX_HANDLE_ERRORS", "bt").unsetEnv("UCX_ERROR_SIGNALS").run(Duration.ofSeconds(60));
        return new Run(p.exitCode(), p.output());
    }
}
