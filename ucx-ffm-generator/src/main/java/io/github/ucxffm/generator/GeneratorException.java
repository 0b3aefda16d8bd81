package io.github.ucxffm.generator;

/** A problem with the generator's input that the user must fix; its message says what and how. */
public final class GeneratorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GeneratorException(String message) {
        super(message);
    }
}
