/**
 * gRPC-java over UCX: grpc-netty's server and channel running on the UCX Netty transport of {@code ucx-ffm-netty}.
 * <p>
 * Two ways in:
 * <ul>
 *   <li>Explicitly: {@link io.github.ucxffm.grpc.UcxGrpc#serverBuilder} and
 *       {@link io.github.ucxffm.grpc.UcxGrpc#channelBuilder} return grpc-netty builders set up with the UCX channel
 *       types on an event loop group the caller owns.</li>
 *   <li>Without a line of UCX in the application: with this jar on the class path and the system property
 *       {@value io.github.ucxffm.grpc.UcxGrpc#ENABLE_PROPERTY}{@code =true} (or the environment variable
 *       {@value io.github.ucxffm.grpc.UcxGrpc#ENABLE_ENV}{@code =true}), {@link io.github.ucxffm.grpc.UcxServerProvider}
 *       and {@link io.github.ucxffm.grpc.UcxManagedChannelProvider} outrank grpc-netty's own providers, so
 *       {@code ServerBuilder.forPort}, {@code ManagedChannelBuilder.forTarget} and {@code Grpc.newServerBuilderForPort}
 *       / {@code Grpc.newChannelBuilder} build UCX servers and channels. These share one process-wide event loop
 *       group, made when the first of them is built and shut down when the last has terminated.</li>
 * </ul>
 */
package io.github.ucxffm.grpc;
