package io.github.ucxffm;

/**
 * Native memory that belongs to one operation in flight (an IOV descriptor array, say) and must outlive the
 * operation's start call. Kept in {@link Pending#keep2}; the worker closes it when it recycles the operation's slot,
 * or when the worker itself is destroyed with the operation still in flight. Nothing else in {@code keep1}/{@code
 * keep2} is ever closed by the worker: buffers and handles kept there only for reachability stay the application's.
 */
interface OperationResource extends AutoCloseable {

    /** Frees the resource; called once, after UCX stopped using it. Throws nothing checked. */
    @Override
    void close();
}
