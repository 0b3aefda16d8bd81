package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SideChannelTest {

    @Test
    void shouldSwapFramesBothWays() throws Exception {
        byte[] big = new byte[SideChannel.MAX_FRAME];
        big[0] = 1;
        big[big.length - 1] = 2;
        try (ServerSocket server = SideChannel.bind(0)) {
            int port = server.getLocalPort();
            CompletableFuture<byte[]> served = CompletableFuture.supplyAsync(() -> {
                try (SideChannel side = SideChannel.accept(server, Duration.ofSeconds(10))) {
                    return side.swap(new byte[] {9, 8, 7}, "test client");
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (SideChannel side = SideChannel.connect("127.0.0.1", port, Duration.ofSeconds(10), "test server")) {
                assertEquals(port, side.peer().getPort());
                assertArrayEquals(new byte[] {9, 8, 7}, side.swap(big, "test server"));
            }
            assertArrayEquals(big, served.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void shouldRefuseAFrameOverTheLimitOnBothSides() throws Exception {
        try (ServerSocket server = SideChannel.bind(0)) {
            CompletableFuture<IOException> served = CompletableFuture.supplyAsync(() -> {
                try (SideChannel side = SideChannel.accept(server, Duration.ofSeconds(10))) {
                    return assertThrows(IOException.class, () -> side.readFrame("test client"));
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (SideChannel side = SideChannel.connect("127.0.0.1", server.getLocalPort(), Duration.ofSeconds(10),
                    "test server")) {
                assertThrows(IllegalArgumentException.class, () -> side.writeFrame(new byte[SideChannel.MAX_FRAME + 1]));
                side.out().writeInt(SideChannel.MAX_FRAME + 1); // what a peer of another kind might send
                side.flush();
                IOException e = served.get(10, TimeUnit.SECONDS);
                assertTrue(e.getMessage().contains("bad frame length " + (SideChannel.MAX_FRAME + 1)), e.getMessage());
                assertTrue(e.getMessage().contains("test client"), e.getMessage());
            }
        }
    }

    @Test
    void shouldKeepTryingWhileTheServerIsNotYetListening() throws Exception {
        int port;
        try (ServerSocket probe = SideChannel.bind(0)) {
            port = probe.getLocalPort();
        }
        int free = port;
        CompletableFuture<Void> late = CompletableFuture.runAsync(() -> {
            try {
                Thread.sleep(500);
                try (ServerSocket server = SideChannel.bind(free); SideChannel side = SideChannel.accept(server,
                        Duration.ofSeconds(10))) {
                    side.swap(new byte[] {1}, "test client");
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try (SideChannel side = SideChannel.connect("127.0.0.1", port, Duration.ofSeconds(10), "test server")) {
            assertArrayEquals(new byte[] {1}, side.swap(new byte[] {2}, "test server"));
        }
        late.get(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldNameTheServerItExpectedWhenNoneListens() throws Exception {
        int port;
        try (ServerSocket probe = SideChannel.bind(0)) {
            port = probe.getLocalPort();
        }
        long start = System.nanoTime();
        IOException e = assertThrows(IOException.class,
                () -> SideChannel.connect("127.0.0.1", port, Duration.ofMillis(300), "ucx-ffm perftest server"));
        assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
        assertTrue(e.getMessage().contains("is a ucx-ffm perftest server listening there?"), e.getMessage());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300), "it tried until the timeout");
    }

    @Test
    void shouldGiveUpAcceptingAtTheTimeout() throws Exception {
        try (ServerSocket server = SideChannel.bind(0)) {
            IOException e = assertThrows(IOException.class, () -> SideChannel.accept(server, Duration.ofMillis(200)));
            assertTrue(e.getMessage().contains("no peer connected to port " + server.getLocalPort() + " within 200 ms"),
                    e.getMessage());
        }
    }
}
