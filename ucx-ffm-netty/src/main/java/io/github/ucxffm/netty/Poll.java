package io.github.ucxffm.netty;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/** Sleeping on one file descriptor with {@code poll(2)}; one {@code struct pollfd} per event loop. */
final class Poll {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = LINKER.downcallHandle(LINKER.defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final short POLLIN = 1;

    private final MemorySegment pollFd;

    Poll(Arena arena, int fd) {
        pollFd = arena.allocate(8, 4); // struct pollfd { int fd; short events; short revents; }
        pollFd.set(JAVA_INT, 0, fd);
        pollFd.set(JAVA_SHORT, 4, POLLIN);
    }

    /** Waits until the descriptor is readable or the time passed; an interrupted poll returns early. */
    void await(int timeoutMillis) {
        pollFd.set(JAVA_SHORT, 6, (short) 0);
        try {
            int ignored = (int) POLL.invokeExact(pollFd, 1L, timeoutMillis);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
