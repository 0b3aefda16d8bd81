package io.github.ucxffm;

import io.github.ucxffm.bindings.ucx_h;

/**
 * {@code ucs_memory_type_t}: where memory lives. Only {@link #HOST} exists on machines without GPUs.
 */
public enum UcsMemoryType {
    /** Ordinary system memory. */
    HOST(ucx_h.UCS_MEMORY_TYPE_HOST()),
    /** NVIDIA CUDA device memory. */
    CUDA(ucx_h.UCS_MEMORY_TYPE_CUDA()),
    /** NVIDIA CUDA managed (unified) memory. */
    CUDA_MANAGED(ucx_h.UCS_MEMORY_TYPE_CUDA_MANAGED()),
    /** AMD ROCm device memory. */
    ROCM(ucx_h.UCS_MEMORY_TYPE_ROCM()),
    /** AMD ROCm managed memory. */
    ROCM_MANAGED(ucx_h.UCS_MEMORY_TYPE_ROCM_MANAGED());

    private final int code;

    UcsMemoryType(int code) {
        this.code = code;
    }

    /**
     * The native value, as in the UCX 1.13 headers (later releases keep these and add more).
     *
     * @return the {@code ucs_memory_type_t}
     */
    public int code() {
        return code;
    }
}
