/**
 * High-level Java API over UCP. Every handle class owns one UCX object and is {@link java.lang.AutoCloseable}.
 */
package io.github.ucxffm;
