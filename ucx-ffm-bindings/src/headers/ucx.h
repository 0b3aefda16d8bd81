/*
 * The C surface ucx-ffm binds: the installed UCX headers, included, never copied.
 * The generator reads this file through libclang; ucx.args names what it generates from it.
 */
#ifndef UCX_FFM_WRAPPER_H
#define UCX_FFM_WRAPPER_H

#include <ucp/api/ucp.h>
#include <ucp/api/ucp_compat.h>
#include <uct/api/uct.h>
#include <ucs/type/status.h>
#include <ucs/type/thread_mode.h>
#include <ucs/memory/memory_type.h>

#endif
