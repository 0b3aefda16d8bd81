package io.github.ucxffm.bindings.support;

import io.github.ucxffm.bindings.ucx_h;

import java.lang.foreign.MemorySegment;

import static io.github.ucxffm.bindings.ucx_h.UCP_API_MAJOR;
import static io.github.ucxffm.bindings.ucx_h.UCP_API_MINOR;
import static io.github.ucxffm.bindings.ucx_h.UCP_DATATYPE_CONTIG;
import static io.github.ucxffm.bindings.ucx_h.UCP_DATATYPE_IOV;
import static io.github.ucxffm.bindings.ucx_h.UCP_DATATYPE_SHIFT;
import static io.github.ucxffm.bindings.ucx_h.UCP_VERSION_MAJOR_SHIFT;
import static io.github.ucxffm.bindings.ucx_h.UCP_VERSION_MINOR_SHIFT;

/**
 * Java forms of what {@code ucp/api/ucp.h} defines as a {@code static inline} function or a function-like macro:
 * they exist in no library, so the generated bindings cannot contain them.
 */
public final class UcpInline {

    private UcpInline() {
    }

    /**
     * {@code ucp_init}: calls the exported {@code ucp_init_version} with the API version of the headers the
     * bindings were generated from, as the C inline function does.
     *
     * @param params    {@code const ucp_params_t *}
     * @param config    {@code const ucp_config_t *}, may be {@code NULL}
     * @param contextP  {@code ucp_context_h *} that receives the context
     * @return the {@code ucs_status_t}
     */
    public static byte ucp_init(MemorySegment params, MemorySegment config, MemorySegment contextP) {
        return ucx_h.ucp_init_version(UCP_API_MAJOR(), UCP_API_MINOR(), params, config, contextP);
    }

    /**
     * {@code ucp_dt_make_contig(elem_size)}.
     *
     * @param elemSize the size of one element in bytes
     * @return the {@code ucp_datatype_t} of a contiguous buffer of such elements
     */
    public static long ucp_dt_make_contig(long elemSize) {
        return (elemSize << UCP_DATATYPE_SHIFT()) | UCP_DATATYPE_CONTIG();
    }

    /**
     * {@code ucp_dt_make_iov()}.
     *
     * @return the {@code ucp_datatype_t} of a scatter-gather list of {@code ucp_dt_iov_t}
     */
    public static long ucp_dt_make_iov() {
        return UCP_DATATYPE_IOV();
    }

    /**
     * {@code UCP_VERSION(major, minor)}.
     *
     * @param major major version
     * @param minor minor version
     * @return the version as one number, comparable with another made the same way
     */
    public static int UCP_VERSION(int major, int minor) {
        return (major << UCP_VERSION_MAJOR_SHIFT()) | (minor << UCP_VERSION_MINOR_SHIFT());
    }
}
