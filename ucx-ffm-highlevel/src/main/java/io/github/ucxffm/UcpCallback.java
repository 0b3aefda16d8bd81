package io.github.ucxffm;

/**
 * Completion of a non-blocking operation, delivered on the thread that progresses the worker, from inside
 * {@link UcpWorker#progress()} (or from the call that started the operation when it completes at once).
 * <p>
 * The body must be short and must not progress the worker. An exception it throws does not reach UCX: the worker
 * collects it and rethrows it from the {@code progress()} call that ran the callback.
 */
@FunctionalInterface
public interface UcpCallback {

    /**
     * Called once per operation.
     *
     * @param status {@code 0} ({@code UCS_OK}) on success, else a negative {@code ucs_status_t}; turn it into an
     *               exception with {@link UcxException#of(String, int)} where one is wanted
     * @param length for receives, the number of bytes received; {@code 0} for other operations
     * @param tag    for tag receives, the sender's tag; {@code 0} for other operations
     */
    void onComplete(int status, long length, long tag);
}
