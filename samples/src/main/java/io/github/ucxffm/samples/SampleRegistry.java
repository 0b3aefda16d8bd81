package io.github.ucxffm.samples;

/**
 * Registers the samples beyond the first ones; each sample adds its line here.
 */
final class SampleRegistry {

    private SampleRegistry() {
    }

    static void registerAll() {
        // Further samples register here: Samples.register(name, description, Class::run).
    }
}
