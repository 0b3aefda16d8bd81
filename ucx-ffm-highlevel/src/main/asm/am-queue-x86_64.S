/*
 * The active-message receive callback ucx-ffm installs on Linux x86-64 (AmQueue.java holds these instructions as
 * bytes; AmQueueCodeTest assembles this file and compares). It is a ucp_am_recv_callback_t:
 *
 *   ucs_status_t cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
 *                   const ucp_am_recv_param_t *param)
 *   System V arguments: rdi = arg, rsi = header, rdx = header_length, rcx = data, r8 = length, r9 = param.
 *
 * It copies a small eager message into the worker's queue and returns UCS_OK, so that no Java upcall runs for it;
 * the worker's progress() hands the queued messages to their Java handlers after ucp_worker_progress returns.
 * Anything else (a message with a recv_attr bit of the arg's mask: rendezvous, and for a handler that asked for
 * persistent data, data UCX lets it keep; a message larger than a slot; a full queue) goes on, with the registers as
 * UCX passed them, to the Java upcall stub, which first hands on what is queued so that handlers see messages in the
 * order they came.
 *
 * arg, one per active-message id:         the queue (one per worker):      a slot:
 *   0  the queue                            0  head, messages ever queued     0  header length
 *   8  the id                              64  tail, slots given back         8  data length
 *  16  the Java upcall stub               128  slot count - 1 (a power of 2) 16  param->recv_attr
 *  24  the upcall's arg                   136  slot size                     24  param->reply_ep
 *  32  recv_attr bits that go to Java     144  bytes a slot carries          32  the id
 *                                         152  the first slot                40  header, then data
 *
 * Only the thread progressing the worker runs this and reads the queue; x86 keeps stores in order, so the slot is
 * written before the head that publishes it.
 */
        .intel_syntax noprefix
        .text
        .globl  ucxffm_am_queue
        .type   ucxffm_am_queue, @function
ucxffm_am_queue:
        endbr64
        mov     rax, [r9]               /* recv_attr */
        test    rax, [rdi + 32]
        jnz     2f                      /* rendezvous, or data to keep: Java */
        mov     r11, [rdi]              /* the queue */
        lea     rax, [rdx + r8]
        cmp     rax, [r11 + 144]
        ja      2f                      /* larger than a slot: Java */
        mov     r10, [r11]              /* head */
        mov     rax, r10
        sub     rax, [r11 + 64]         /* queued = head - tail */
        cmp     rax, [r11 + 128]
        ja      2f                      /* full: Java */
        and     r10, [r11 + 128]
        imul    r10, [r11 + 136]
        add     r10, [r11 + 152]        /* the slot */
        mov     [r10], rdx
        mov     [r10 + 8], r8
        mov     rax, [r9]
        mov     [r10 + 16], rax
        mov     rax, [r9 + 8]
        mov     [r10 + 24], rax
        mov     rax, [rdi + 8]
        mov     [r10 + 32], rax
        lea     rdi, [r10 + 40]
        mov     rax, rcx                /* data */
        mov     rcx, rdx
        rep movsb                       /* the header */
        mov     rsi, rax
        mov     rcx, r8
        rep movsb                       /* the data */
        mov     rax, [r11]
        inc     rax
        mov     [r11], rax              /* publish */
        xor     eax, eax                /* UCS_OK */
        ret
2:
        mov     rax, [rdi + 16]
        mov     rdi, [rdi + 24]
        jmp     rax                     /* the upcall returns to UCX itself */
        .size   ucxffm_am_queue, .-ucxffm_am_queue
        .section .note.GNU-stack,"",@progbits
