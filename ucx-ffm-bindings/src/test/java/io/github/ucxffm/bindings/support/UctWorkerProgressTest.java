package io.github.ucxffm.bindings.support;

import io.github.ucxffm.bindings.ucs_callback_t;
import io.github.ucxffm.bindings.ucx_h;
import io.github.ucxffm.testsupport.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link UctInline#uct_worker_progress} walks {@code worker->progress_q.fast_elems}, whose element size changed
 * between UCX releases (24 bytes before 1.16, 16 since). These tests check the layout {@code UctInline} chose for
 * the loaded UCX against gcc and against what a worker really does: a wrong stride calls a non-function (the JVM
 * dies), stops early (callbacks are missed) or runs off the end of the worker (the resize is too short).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UctWorkerProgressTest {

    /** More than {@code UCS_CALLBACKQ_FAST_COUNT}: every fast slot is taken, the rest go through the slow path. */
    private static final int CALLBACKS = 10;

    @TempDir
    Path tmp;

    @Test
    void shouldWalkTheCallbackQueueWithTheLayoutGccSeesInTheInstalledHeaders() throws Exception {
        Map<String, Long> gcc = gccLayout();
        assertEquals(gcc.get("UCT_VERNO_MAJOR") + "." + gcc.get("UCT_VERNO_MINOR"),
                (UcxLibraryHook.version() >>> 16) + "." + (UcxLibraryHook.version() >>> 8 & 0xff),
                "the installed uct/api/version.h must be the loaded UCX's for this comparison to mean anything");
        Map<String, Long> java = new LinkedHashMap<>();
        java.put("UCT_VERNO_MAJOR", (long) (UcxLibraryHook.version() >>> 16));
        java.put("UCT_VERNO_MINOR", (long) (UcxLibraryHook.version() >>> 8 & 0xff));
        java.put("sizeof(ucs_callbackq_elem_t)", UctInline.CALLBACKQ_ELEM_SIZE);
        java.put("offsetof(ucs_callbackq_elem_t, cb)", UctInline.CALLBACKQ_ELEM_CB);
        java.put("offsetof(ucs_callbackq_elem_t, arg)", UctInline.CALLBACKQ_ELEM_ARG);
        java.put("offsetof(uct_worker_t, progress_q.fast_elems)", UctInline.FAST_ELEMS);
        java.put("sizeof(uct_worker_t)", UctInline.WORKER_SIZE);
        assertEquals(gcc, java, UcxLibraryHook.describe() + ": the callback queue layout of gcc (expected) and of"
                + " UctInline (actual)");
    }

    @Test
    void shouldCallEveryRegisteredCallbackOnceForEachWorkerProgress() {
        try (Worker w = new Worker()) {
            long[] calls = new long[CALLBACKS];
            List<Throwable> failures = new ArrayList<>();
            // One stub for all: the argument says which callback ran. Each returns its own bit, so the sum that
            // uct_worker_progress returns can be checked against the calls counted.
            MemorySegment stub = ucs_callback_t.allocate(arg -> {
                try {
                    int index = (int) arg.address() - 1;
                    calls[index]++;
                    return 1 << index;
                } catch (Throwable t) {
                    failures.add(t);
                    return 0;
                }
            }, w.arena);
            MemorySegment ids = w.arena.allocate(JAVA_INT, CALLBACKS);
            // uct_worker_progress_unregister_safe resets the id to UCS_CALLBACKQ_ID_NULL: a second call is a no-op.
            Runnable unregisterAll = () -> {
                for (int i = 0; i < CALLBACKS; i++) {
                    ucx_h.uct_worker_progress_unregister_safe(w.worker, ids.asSlice(i * JAVA_INT.byteSize()));
                }
            };
            w.cleanups.push(unregisterAll);
            for (int i = 0; i < CALLBACKS; i++) {
                MemorySegment id = ids.asSlice(i * JAVA_INT.byteSize(), JAVA_INT);
                id.set(JAVA_INT, 0, ucx_h.UCS_CALLBACKQ_ID_NULL());
                ucx_h.uct_worker_progress_register_safe(w.worker, stub, MemorySegment.ofAddress(i + 1),
                        ucx_h.UCS_CALLBACKQ_FLAG_FAST(), id);
            }

            // The first dispatch after a "safe" registration runs the slow-path proxy, which calls every new
            // callback and moves into the fast array as many as fit; the same loop then reaches those and calls
            // them again (C does the same). From then on each callback runs exactly once per progress.
            for (int round = 1; round <= 5; round++) {
                long[] before = calls.clone();
                int work = UctInline.uct_worker_progress(w.worker);
                assertTrue(failures.isEmpty(), () -> "callback failed: " + failures);
                long[] ran = new long[CALLBACKS];
                long expectedWork = 0;
                for (int i = 0; i < CALLBACKS; i++) {
                    ran[i] = calls[i] - before[i];
                    expectedWork += ran[i] << i;
                }
                String where = UcxLibraryHook.describe() + ", progress " + round + ", calls per callback "
                        + Arrays.toString(ran);
                assertEquals(expectedWork, work, where + ": uct_worker_progress returns the sum of their results");
                for (int i = 0; i < CALLBACKS; i++) {
                    if (round == 1) {
                        assertTrue(ran[i] == 1 || ran[i] == 2, where + ": callback " + i + " runs once or twice");
                    } else {
                        assertEquals(1, ran[i], where + ": callback " + i + " runs exactly once");
                    }
                }
            }

            // Removed callbacks are no longer called (the slow path may need one more dispatch to notice).
            unregisterAll.run();
            UctInline.uct_worker_progress(w.worker);
            long[] before = calls.clone();
            assertEquals(0, UctInline.uct_worker_progress(w.worker), "an empty queue does no work");
            assertArrayEquals(before, calls, "no callback runs after its removal");
        }
    }

    /** Runs a C program compiled against the installed headers; returns what it prints, name to value. */
    private Map<String, Long> gccLayout() throws IOException, InterruptedException {
        String[] exprs = {
            "UCT_VERNO_MAJOR", "UCT_VERNO_MINOR",
            "sizeof(ucs_callbackq_elem_t)", "offsetof(ucs_callbackq_elem_t, cb)",
            "offsetof(ucs_callbackq_elem_t, arg)", "offsetof(uct_worker_t, progress_q.fast_elems)",
            "sizeof(uct_worker_t)",
        };
        StringBuilder c = new StringBuilder("#include <stddef.h>\n#include <stdio.h>\n#include <uct/api/uct.h>\n"
                + "int main(void) {\n");
        for (String e : exprs) {
            c.append("    printf(\"%s=%ld\\n\", \"").append(e).append("\", (long) (").append(e).append("));\n");
        }
        c.append("    return 0;\n}\n");
        Path src = Files.writeString(tmp.resolve("callbackq.c"), c);
        Path exe = tmp.resolve("callbackq");
        run(List.of("gcc", "-o", exe.toString(), src.toString()));
        Map<String, Long> values = new LinkedHashMap<>();
        for (String line : run(List.of(exe.toString())).split("\n")) {
            int eq = line.lastIndexOf('=');
            values.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1)));
        }
        return values;
    }

    private static String run(List<String> command) throws IOException {
        ChildProcess p = ChildProcess.command(command).run(Duration.ofSeconds(60));
        if (p.exitCode() != 0) {
            fail(command + " failed:\n" + p.output());
        }
        return p.output();
    }

    /** A UCT worker with nothing registered in its progress queue: what runs is what the test adds. */
    private static final class Worker implements AutoCloseable {

        final Arena arena = Arena.ofShared();
        final Deque<Runnable> cleanups = new ArrayDeque<>();
        final MemorySegment worker;

        Worker() {
            cleanups.push(arena::close);
            try {
                MemorySegment out = arena.allocate(ucx_h.C_POINTER);
                check(ucx_h.ucs_async_context_create(ucx_h.UCS_ASYNC_MODE_THREAD_SPINLOCK(), out),
                        "ucs_async_context_create");
                MemorySegment async = out.get(ucx_h.C_POINTER, 0);
                cleanups.push(() -> ucx_h.ucs_async_context_destroy(async));
                check(ucx_h.uct_worker_create(async, ucx_h.UCS_THREAD_MODE_SINGLE(), out), "uct_worker_create");
                // Zero-length, as a handle made from an address is (ucx_h.C_POINTER would give an unbounded one):
                // uct_worker_progress resizes it to the release's uct_worker_t, so a size too short for the walk
                // fails with an IndexOutOfBoundsException.
                worker = MemorySegment.ofAddress(out.get(ucx_h.C_POINTER, 0).address());
                cleanups.push(() -> ucx_h.uct_worker_destroy(worker));
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        private static void check(byte status, String what) {
            if (status != (byte) ucx_h.UCS_OK()) {
                fail(what + " failed: " + ucx_h.ucs_status_string(status).getString(0));
            }
        }

        @Override
        public void close() {
            while (!cleanups.isEmpty()) {
                cleanups.pop().run();
            }
        }
    }
}
