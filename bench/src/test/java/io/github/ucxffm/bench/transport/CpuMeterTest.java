package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.compare.ProcessCpu;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The CPU accounting of a cell: each process's own time, from /proc, and nothing of the other's. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CpuMeterTest {

    private static void burn(long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        long x = 0;
        while (System.nanoTime() < end) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        assertTrue(x >= 0);
    }

    @Test
    void shouldChargeEachProcessItsOwnCpuTime() throws Exception {
        // a server that sleeps: what this process burns is the client's, none of it the server's
        Process idle = new ProcessBuilder("sleep", "30").start();
        try {
            CpuMeter meter = new CpuMeter(idle.pid());
            CpuMeter.Sample before = meter.read();
            long t0 = System.nanoTime();
            burn(400);
            CpuMeter.Sample used = meter.read().since(before);
            double wall = (System.nanoTime() - t0) / 1e9;
            // the machine may be busy: at least a quarter of the wall time, and no more than the cores allow
            assertTrue(used.client() >= 0.1 && used.client() <= wall * Runtime.getRuntime().availableProcessors()
                    + 0.05, used + " in " + wall + " s");
            assertTrue(used.server() >= 0 && used.server() <= 0.02, used.toString());
        } finally {
            idle.destroy();
            idle.waitFor(10, TimeUnit.SECONDS);
        }
        // a server that spins: its time is counted while this process mostly sleeps
        Process busy = new ProcessBuilder("sh", "-c", "while :; do :; done").start();
        try {
            CpuMeter meter = new CpuMeter(busy.pid());
            CpuMeter.Sample before = meter.read();
            Thread.sleep(600);
            CpuMeter.Sample used = meter.read().since(before);
            assertTrue(used.server() >= 0.1, used.toString());
            assertTrue(used.client() < used.server(), used.toString());
        } finally {
            busy.destroy();
            busy.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldGiveNaNForAProcessThatIsGone() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor(10, TimeUnit.SECONDS);
        CpuMeter.Sample s = new CpuMeter(p.pid()).read();
        assertTrue(Double.isNaN(s.server()), s.toString());
        assertTrue(s.client() > 0, s.toString());
        CpuMeter.Sample d = new CpuMeter.Sample(2.5, 1.0).since(new CpuMeter.Sample(1.0, 0.25));
        assertEquals(new CpuMeter.Sample(1.5, 0.75), d);
    }

    @Test
    void shouldCountOnlyTheJitCompilerThreads() throws Exception {
        // a process without a JIT that burns CPU: all of its time is its own, none is a compiler's
        Process busy = new ProcessBuilder("sh", "-c", "while :; do :; done").start();
        try {
            Thread.sleep(300);
            assertTrue(ProcessCpu.seconds(busy.pid()) >= 0.05, "the shell burns");
            assertEquals(0.0, ProcessCpu.compilerSeconds(busy.pid()), "a shell has no compiler thread");
            // this JVM has compiled the test framework by now: its compilers' time, and less than all of its time
            long self = ProcessHandle.current().pid();
            double compilers = ProcessCpu.compilerSeconds(self);
            assertTrue(compilers > 0 && compilers < ProcessCpu.seconds(self), compilers + " s");
            CpuMeter meter = new CpuMeter(busy.pid());
            assertEquals(compilers, meter.compilerSeconds(), 0.5, "the client's compilers and the shell's none");
        } finally {
            busy.destroy();
            busy.waitFor(10, TimeUnit.SECONDS);
        }
        assertTrue(Double.isNaN(ProcessCpu.compilerSeconds(busy.pid())), "gone");
        assertTrue(Double.isNaN(new CpuMeter(busy.pid()).compilerSeconds()), "gone");
    }
}
