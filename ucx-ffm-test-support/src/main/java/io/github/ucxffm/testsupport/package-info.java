/**
 * What the tests of every module share, so that each is written once: {@link io.github.ucxffm.testsupport.BytePattern}
 * (the payload every test fills and checks), {@link io.github.ucxffm.testsupport.Await} (the one wait loop, optionally
 * progressing a worker), {@link io.github.ucxffm.testsupport.ChildProcess} (a JVM or command started by a test,
 * its output captured, killed with its descendants by PID), {@link io.github.ucxffm.testsupport.ProcessMark} (a
 * test run's own processes among the machine's), {@link io.github.ucxffm.testsupport.RunnerPair} (the perftest
 * runners' server and client, for the tests of both runners) and {@link io.github.ucxffm.testsupport.UcxLogCapture}
 * (what UCX logs at WARN or worse in the test's own JVM, bound to the UCX the bindings loaded).
 *
 * <p>This module depends on the JDK alone. Maven forbids cycles, and the tests of {@code ucx-ffm-bindings} and
 * {@code ucx-ffm-highlevel} use it, so it cannot use their API. The one fixture that needs the high-level API, two
 * workers of one context with endpoints between them ({@code TwoWorkers}, on which the {@code TwoWorkerTest} base
 * class and the RMA tests' {@code RmaPeers} build), lives in the high-level module's test sources: that module's
 * tests are the only ones that run UCX workers in their own JVM (the samples' and the benchmarks' tests drive whole
 * programs in child processes through {@code ChildProcess}), so no test-jar is published for it. Being JDK-only
 * also lets child programs on a test's class path (the peers of the cross-process tests) use the same pattern as the
 * test that checks them, and keeps ucx-ffm out of the JVMs that measure JUCX.
 */
package io.github.ucxffm.testsupport;
