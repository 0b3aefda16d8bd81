/*
 * The native half of the perftest runner's paired mode (--paired): blocks of a ping-pong written in C against UCP,
 * called through FFM on the Java runner's own worker and endpoint, in turn with blocks of the same ping-pong through
 * ucx-ffm. Both halves run in the same two processes, on the same lanes, seconds apart at most, so the ratio of one
 * block to the next is the binding's cost with the machine's mode of the moment taken out.
 *
 * The loop is the runner's, step for step: send and wait for the send, then post the receive and wait for it (the
 * server the other way round); a request is polled with ucp_request_check_status before each progress call and then
 * freed, as ucx-ffm's polled operations are; the client reads CLOCK_MONOTONIC (what System.nanoTime reads on Linux)
 * after each round trip. Requests carry no callback, so nothing here calls back into Java.
 *
 * Active messages go on an id of their own (the runner's plus one), so that the binding's handler never sees the C
 * blocks' messages: a C handler registered by ucxffm_paired_am_setup counts them, as the runner's Java handler counts
 * its own, and keeps a rendezvous message's data for the waiting loop to fetch into the receive buffer, as the
 * runner does (the tag argument of the loops carries the id).
 *
 * Built as a shared library by ./ucx-ffm (bench/target/libucp_paired*.so), found through UCXFFM_PAIRED_LIBRARY.
 */
#include <ucp/api/ucp.h>

#include <stdint.h>
#include <time.h>

enum { OP_TAG = 0, OP_TAG_SYNC = 1, OP_STREAM = 2, OP_AM = 3 };

/* The C blocks' active messages: those arrived, and a rendezvous message's data kept for the waiting loop. One
 * paired loop per process, on one thread. */
static uint64_t am_arrived;
static uint64_t am_awaited;
static void *am_kept;
static size_t am_kept_length;

static ucs_status_t wait_for(ucp_worker_h worker, ucs_status_ptr_t request)
{
    ucs_status_t status;

    if (request == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return UCS_PTR_STATUS(request);
    }
    while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
    }
    ucp_request_free(request);
    return status;
}

static ucs_status_t am_handler(void *arg, const void *header, size_t header_length, void *data, size_t length,
                               const ucp_am_recv_param_t *param)
{
    (void)arg;
    (void)header;
    (void)header_length;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        am_kept = data;
        am_kept_length = length;
        am_arrived++;
        return UCS_INPROGRESS;
    }
    am_arrived++;
    return UCS_OK;
}

/* Registers the C blocks' active-message handler on id; 0, or a negative status. */
int64_t ucxffm_paired_am_setup(ucp_worker_h worker, uint32_t id)
{
    ucp_am_handler_param_t param = {0};

    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                       UCP_AM_HANDLER_PARAM_FIELD_CB;
    param.id         = id;
    param.flags      = UCP_AM_FLAG_WHOLE_MSG;
    param.cb         = am_handler;
    return ucp_worker_set_am_recv_handler(worker, &param);
}

/* Progresses until the next active message has arrived and its data, if kept, is in the receive buffer. */
static ucs_status_t await_am(ucp_worker_h worker, void *buffer, size_t size)
{
    ucp_request_param_t param = {0};
    ucs_status_t status;

    am_awaited++;
    while (am_arrived < am_awaited) {
        ucp_worker_progress(worker);
    }
    if (am_kept != NULL) {
        void *data = am_kept;

        am_kept = NULL;
        status = wait_for(worker, ucp_am_recv_data_nbx(worker, data, buffer,
                                                       am_kept_length < size ? am_kept_length : size, &param));
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

static ucs_status_t send_one(ucp_worker_h worker, ucp_ep_h ep, int op, const void *buffer, size_t size, uint64_t tag)
{
    ucp_request_param_t param = {0};

    switch (op) {
    case OP_TAG:
        return wait_for(worker, ucp_tag_send_nbx(ep, buffer, size, tag, &param));
    case OP_TAG_SYNC:
        return wait_for(worker, ucp_tag_send_sync_nbx(ep, buffer, size, tag, &param));
    case OP_AM:
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS; /* flags 0, as the runner's active-message send */
        return wait_for(worker, ucp_am_send_nbx(ep, (unsigned)tag, NULL, 0, buffer, size, &param));
    default:
        return wait_for(worker, ucp_stream_send_nbx(ep, buffer, size, &param));
    }
}

static ucs_status_t receive_one(ucp_worker_h worker, ucp_ep_h ep, int op, void *buffer, size_t size, uint64_t tag)
{
    ucp_request_param_t param = {0};
    size_t length;

    if (op == OP_AM) {
        return await_am(worker, buffer, size);
    }
    if (op != OP_STREAM) {
        return wait_for(worker, ucp_tag_recv_nbx(worker, buffer, size, tag, (ucp_tag_t)-1, &param));
    }
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_STREAM_RECV_FLAG_WAITALL;
    return wait_for(worker, ucp_stream_recv_nbx(ep, buffer, size, &length, &param));
}

static int64_t now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* n round trips from the client's side; stamps[i] is the clock after round trip i. 0, or a negative status. */
int64_t ucxffm_paired_ping(ucp_worker_h worker, ucp_ep_h ep, int32_t op, void *send, void *recv, uint64_t size,
                           uint64_t tag, int64_t n, int64_t *stamps)
{
    ucs_status_t status;
    int64_t i;

    for (i = 0; i < n; i++) {
        status = send_one(worker, ep, op, send, size, tag);
        if (status == UCS_OK) {
            status = receive_one(worker, ep, op, recv, size, tag);
        }
        if (status != UCS_OK) {
            return status;
        }
        stamps[i] = now_ns();
    }
    return 0;
}

/* n round trips from the server's side: receive, then answer. 0, or a negative status. */
int64_t ucxffm_paired_pong(ucp_worker_h worker, ucp_ep_h ep, int32_t op, void *send, void *recv, uint64_t size,
                           uint64_t tag, int64_t n)
{
    ucs_status_t status;
    int64_t i;

    for (i = 0; i < n; i++) {
        status = receive_one(worker, ep, op, recv, size, tag);
        if (status == UCS_OK) {
            status = send_one(worker, ep, op, send, size, tag);
        }
        if (status != UCS_OK) {
            return status;
        }
    }
    return 0;
}
