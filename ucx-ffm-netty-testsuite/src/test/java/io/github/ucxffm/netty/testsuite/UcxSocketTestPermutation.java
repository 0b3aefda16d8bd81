package io.github.ucxffm.netty.testsuite;

import io.github.ucxffm.netty.UcxIoHandler;
import io.github.ucxffm.netty.UcxServerSocketChannel;
import io.github.ucxffm.netty.UcxSocketChannel;
import io.netty.bootstrap.AbstractBootstrap;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.SocketTestPermutation;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.List;
import java.util.function.Supplier;

/**
 * The bootstraps Netty's socket testsuite runs with, for the UCX transport: a server on {@link UcxServerSocketChannel}
 * and a client on {@link UcxSocketChannel}, both on {@link MultiThreadIoEventLoopGroup}s of {@link UcxIoHandler}s
 * (one boss loop, several worker loops, as Netty's epoll testsuite has). UCX speaks only to UCX, so unlike epoll's
 * permutation there is no combination with NIO; TCP fast open has no UCX counterpart, so the fast-open lists are the
 * plain ones. The groups are daemon threads made once for the whole test JVM, as in Netty's own permutations, and shut down by
 * {@link EventLoopShutdown} when the JVM's tests are done.
 */
final class UcxSocketTestPermutation extends SocketTestPermutation {

    static final UcxSocketTestPermutation INSTANCE = new UcxSocketTestPermutation();

    /** Boss loops; as Netty's permutations. */
    private static final int BOSSES = 1;
    /** Worker loops: more than one, so that server and client channels land on different UCX workers. */
    private static final int WORKERS = 3;
    /**
     * {@code -Ducxffm.testsuite.singleLoop=true}: one event loop (one UCX worker) serves as boss and worker group, for
     * UCX releases where several workers in one process abort now and then on a stale event of a closed socket (UCX
     * 1.13; docs/UCX-BEHAVIOUR.md): every channel, server, accepted and client, then shares that loop.
     */
    static final boolean SINGLE_LOOP = Boolean.getBoolean("ucxffm.testsuite.singleLoop");

    static final EventLoopGroup BOSS_GROUP;
    static final EventLoopGroup WORKER_GROUP;
    static {
        if (SINGLE_LOOP) {
            BOSS_GROUP = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("testsuite-ucx-loop", true),
                    UcxIoHandler.newFactory());
            WORKER_GROUP = BOSS_GROUP;
        } else {
            BOSS_GROUP = new MultiThreadIoEventLoopGroup(BOSSES, new DefaultThreadFactory("testsuite-ucx-boss", true),
                    UcxIoHandler.newFactory());
            WORKER_GROUP = new MultiThreadIoEventLoopGroup(WORKERS,
                    new DefaultThreadFactory("testsuite-ucx-worker", true), UcxIoHandler.newFactory());
        }
        EventLoopShutdown.groupsStarted();
    }

    private UcxSocketTestPermutation() {
    }

    @Override
    public List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> socket() {
        return combo(serverSocket(), clientSocket());
    }

    @Override
    public List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> socketWithFastOpen() {
        return socket();
    }

    @Override
    public List<BootstrapFactory<ServerBootstrap>> serverSocket() {
        return List.of(named("UcxServerSocketChannel",
                () -> new ServerBootstrap().group(BOSS_GROUP, WORKER_GROUP).channel(UcxServerSocketChannel.class)));
    }

    @Override
    public List<BootstrapFactory<Bootstrap>> clientSocket() {
        return List.of(named("UcxSocketChannel",
                () -> new Bootstrap().group(WORKER_GROUP).channel(UcxSocketChannel.class)));
    }

    @Override
    public List<BootstrapFactory<Bootstrap>> clientSocketWithFastOpen() {
        return clientSocket();
    }

    /** A factory whose name shows in the testsuite's log of each permutation. */
    private static <T extends AbstractBootstrap<?, ?>> BootstrapFactory<T> named(String name, Supplier<T> make) {
        return new BootstrapFactory<>() {
            @Override
            public T newInstance() {
                return make.get();
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
