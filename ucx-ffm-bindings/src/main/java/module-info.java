/**
 * Raw UCX bindings: the generated {@code io.github.ucxffm.bindings} package (C names, jextract's shape) and the
 * hand-written {@code io.github.ucxffm.bindings.support} package for what C expresses as macros and
 * {@code static inline} functions.
 */
module io.github.ucxffm.bindings {
    exports io.github.ucxffm.bindings;
    exports io.github.ucxffm.bindings.support;
}
