package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.compare.ProcessCpu;

/**
 * The CPU time of the two processes of a sitting, read from {@code /proc/PID/stat} ({@link ProcessCpu}): this one,
 * the client, and the server. All of each process counts, every thread (event loops, JIT, GC), at the kernel's
 * clock-tick resolution ({@link ProcessCpu#TICKS} per second).
 *
 * @param serverPid the server process
 */
record CpuMeter(long serverPid) {

    /**
     * CPU seconds used so far.
     *
     * @param client this process's
     * @param server the server's
     */
    record Sample(double client, double server) {

        /**
         * What was used from an earlier sample to this one.
         *
         * @param earlier the earlier sample
         * @return the differences; NaN where either could not be read
         */
        Sample since(Sample earlier) {
            return new Sample(client - earlier.client, server - earlier.server);
        }
    }

    /**
     * Reads both processes' CPU time.
     *
     * @return the sample; NaN for a process that cannot be read (gone, not Linux)
     */
    Sample read() {
        return new Sample(ProcessCpu.seconds(ProcessHandle.current().pid()), ProcessCpu.seconds(serverPid));
    }

    /**
     * CPU seconds the JIT compilers of both processes have used so far: the warm-up goes on while they work.
     *
     * @return seconds; NaN when either process's threads cannot be read
     */
    double compilerSeconds() {
        return ProcessCpu.compilerSeconds(ProcessHandle.current().pid()) + ProcessCpu.compilerSeconds(serverPid);
    }
}
