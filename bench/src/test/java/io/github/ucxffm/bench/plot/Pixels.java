package io.github.ucxffm.bench.plot;

import java.awt.image.BufferedImage;

/** What the plot tests look for in an image. */
public final class Pixels {

    private Pixels() {
    }

    /**
     * Counts the pixels of one color in a rectangle.
     *
     * @param img the image
     * @param x0  the rectangle's left edge
     * @param y0  its top edge
     * @param w   its width
     * @param h   its height
     * @param rgb the color, {@code 0xRRGGBB}
     * @return how many pixels have it
     */
    public static int count(BufferedImage img, int x0, int y0, int w, int h, int rgb) {
        int n = 0;
        for (int y = y0; y < y0 + h; y++) {
            for (int x = x0; x < x0 + w; x++) {
                if ((img.getRGB(x, y) & 0xFFFFFF) == rgb) {
                    n++;
                }
            }
        }
        return n;
    }
}
