/*
 * The loops of the JMH benchmarks (TagBenchmark, RmaAmBenchmark), written against UCP in C, so that the cost of one
 * operation through ucx-ffm can be set beside the same operation called natively, in the same sitting.
 *
 * Same setting as the JMH benchmarks: one context, two workers of one process on one thread, an endpoint from the
 * sender to the receiver without peer error handling (shared memory on UCX 1.13), and each operation completed by
 * progressing both workers. Completion is polled (no callbacks) as in the Java benchmarks, except that the C active
 * message handler is a C function where the Java one is an upcall.
 *
 * Usage: ucp_loops [ITERATIONS]   (default 2000000 per repetition; five repetitions, the median printed)
 * Output: one line per benchmark, "NAME NS_PER_OP", in the JMH benchmarks' names.
 */
#include <ucp/api/ucp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AM_ID       3
#define REPETITIONS 5
#define NEVER_SENT  0x7e57000000000001ull /* as TagBenchmark.NEVER_SENT */

static ucp_worker_h sender;
static ucp_worker_h receiver;
static ucp_ep_h endpoint;
static ucp_rkey_h rkey;
static uint64_t remote;
static uint64_t data;
static uint64_t in;
static uint64_t operand = 1;
static uint64_t parked;
static void *in_flight;
static long am_received;
static ucp_request_param_t polled; /* no callback: completion is polled, as ucx-ffm's polled operations */

static void check(ucs_status_t status, const char *what)
{
    if (status != UCS_OK) {
        fprintf(stderr, "ucp_loops: %s: %s\n", what, ucs_status_string(status));
        exit(1);
    }
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Progresses both workers until the request completes and frees it, as the Java benchmarks' complete(). */
static void complete(ucs_status_ptr_t request)
{
    if (UCS_PTR_IS_ERR(request)) {
        check(UCS_PTR_STATUS(request), "operation");
    }
    if (request == NULL) {
        return;
    }
    while (ucp_request_check_status(request) == UCS_INPROGRESS) {
        ucp_worker_progress(sender);
        ucp_worker_progress(receiver);
    }
    check(ucp_request_check_status(request), "completion");
    ucp_request_free(request);
}

static ucs_status_t on_am(void *arg, const void *header, size_t header_length, void *am_data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    am_received += (long)length + 1;
    return UCS_OK;
}

static long tag_send_receive8(void)
{
    ucp_tag_recv_info_t info;
    ucs_status_ptr_t recv = ucp_tag_recv_nbx(receiver, &in, 8, 42, (ucp_tag_t)-1, &polled);
    ucs_status_ptr_t send = ucp_tag_send_nbx(endpoint, &data, 8, 42, &polled);
    int sent = !UCS_PTR_IS_PTR(send);
    int received = !UCS_PTR_IS_PTR(recv);
    while (!(sent && received)) {
        ucp_worker_progress(sender);
        ucp_worker_progress(receiver);
        if (!sent && ucp_request_check_status(send) != UCS_INPROGRESS) {
            ucp_request_free(send);
            sent = 1;
        }
        if (!received && ucp_tag_recv_request_test(recv, &info) != UCS_INPROGRESS) {
            ucp_request_free(recv);
            received = 1;
        }
    }
    return (long)in;
}

static long progress_idle(void)
{
    return ucp_worker_progress(sender);
}

static long poll_in_flight(void)
{
    ucp_tag_recv_info_t info;
    return ucp_tag_recv_request_test(in_flight, &info);
}

static long am_send8(void)
{
    long before = am_received;
    complete(ucp_am_send_nbx(endpoint, AM_ID, NULL, 0, &data, 8, &polled));
    while (am_received == before) {
        ucp_worker_progress(receiver);
        ucp_worker_progress(sender);
    }
    return am_received;
}

static long put8(void)
{
    complete(ucp_put_nbx(endpoint, &data, 8, remote, rkey, &polled));
    return 0;
}

static long get8(void)
{
    complete(ucp_get_nbx(endpoint, &data, 8, remote, rkey, &polled));
    return (long)data;
}

static long atomic_add64(void)
{
    ucp_request_param_t p = polled;
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    p.datatype      = ucp_dt_make_contig(8);
    complete(ucp_atomic_op_nbx(endpoint, UCP_ATOMIC_OP_ADD, &operand, 1, remote + 8, rkey, &p));
    return 0;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static volatile long sink;

static void run(const char *name, long (*op)(void), long iterations)
{
    double ns[REPETITIONS];
    long acc = 0;
    for (long i = 0; i < iterations; i++) { /* warm-up: one repetition's worth */
        acc += op();
    }
    for (int r = 0; r < REPETITIONS; r++) {
        double start = now_ns();
        for (long i = 0; i < iterations; i++) {
            acc += op();
        }
        ns[r] = (now_ns() - start) / iterations;
    }
    sink = acc;
    qsort(ns, REPETITIONS, sizeof(double), compare_doubles);
    printf("%s %.1f\n", name, ns[REPETITIONS / 2]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 2000000;
    if (iterations <= 0) {
        fprintf(stderr, "usage: ucp_loops [ITERATIONS]\n");
        return 1;
    }

    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES,
        .features   = UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_AMO64
    };
    ucp_context_h context;
    check(ucp_init(&params, NULL, &context), "ucp_init");
    ucp_worker_params_t wp = {
        .field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE
    };
    check(ucp_worker_create(context, &wp, &sender), "ucp_worker_create");
    check(ucp_worker_create(context, &wp, &receiver), "ucp_worker_create");

    ucp_address_t *address;
    size_t address_length;
    check(ucp_worker_get_address(receiver, &address, &address_length), "ucp_worker_get_address");
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
        .address    = address,
        .err_mode   = UCP_ERR_HANDLING_MODE_NONE
    };
    check(ucp_ep_create(sender, &ep, &endpoint), "ucp_ep_create");
    ucp_worker_release_address(receiver, address);

    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .length     = 4096,
        .flags      = UCP_MEM_MAP_ALLOCATE
    };
    ucp_mem_h region;
    check(ucp_mem_map(context, &mp, &region), "ucp_mem_map");
    ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
    check(ucp_mem_query(region, &attr), "ucp_mem_query");
    remote = (uint64_t)(uintptr_t)attr.address;
    void *packed;
    size_t packed_length;
    check(ucp_rkey_pack(context, region, &packed, &packed_length), "ucp_rkey_pack");
    check(ucp_ep_rkey_unpack(endpoint, packed, &rkey), "ucp_ep_rkey_unpack");
    ucp_rkey_buffer_release(packed);

    ucp_am_handler_param_t am = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB,
        .id         = AM_ID,
        .cb         = on_am
    };
    check(ucp_worker_set_am_recv_handler(receiver, &am), "ucp_worker_set_am_recv_handler");

    in_flight = ucp_tag_recv_nbx(receiver, &parked, 8, NEVER_SENT, (ucp_tag_t)-1, &polled);
    if (!UCS_PTR_IS_PTR(in_flight)) {
        fprintf(stderr, "ucp_loops: the parked receive completed\n");
        return 1;
    }

    run("TagBenchmark.tagSendReceive8", tag_send_receive8, iterations);
    /* plainFfmTagSendReceive8 makes this loop's calls from Java: its C counterpart is the same loop, run again */
    run("TagBenchmark.plainFfmTagSendReceive8", tag_send_receive8, iterations);
    run("TagBenchmark.progressIdle", progress_idle, iterations);
    run("TagBenchmark.pollInFlight", poll_in_flight, iterations);
    run("RmaAmBenchmark.amSend8", am_send8, iterations);
    run("RmaAmBenchmark.put8", put8, iterations);
    run("RmaAmBenchmark.get8", get8, iterations);
    run("RmaAmBenchmark.atomicAdd64", atomic_add64, iterations);

    ucp_request_cancel(receiver, in_flight);
    while (ucp_request_check_status(in_flight) == UCS_INPROGRESS) {
        ucp_worker_progress(receiver);
    }
    ucp_request_free(in_flight);
    ucp_rkey_destroy(rkey);
    ucs_status_ptr_t close = ucp_ep_close_nbx(endpoint, &(ucp_request_param_t){
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE});
    if (UCS_PTR_IS_PTR(close)) {
        while (ucp_request_check_status(close) == UCS_INPROGRESS) {
            ucp_worker_progress(sender);
            ucp_worker_progress(receiver);
        }
        ucp_request_free(close);
    }
    ucp_mem_unmap(context, region);
    ucp_worker_destroy(sender);
    ucp_worker_destroy(receiver);
    ucp_cleanup(context);
    return 0;
}
