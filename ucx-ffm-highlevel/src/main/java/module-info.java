/**
 * The high-level ucx-ffm API: UCX contexts, workers, endpoints, listeners, registered memory and remote keys as
 * Java objects with safe lifetimes.
 */
module io.github.ucxffm {
    requires transitive io.github.ucxffm.bindings;
    exports io.github.ucxffm;
}
