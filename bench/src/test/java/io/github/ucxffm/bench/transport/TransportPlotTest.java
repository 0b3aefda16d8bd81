package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.plot.Pixels;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The PNG of a sitting: four panels of bars, a color per transport. */
class TransportPlotTest {

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @Test
    void shouldDrawFourPanelsWithABarPerTransport(@TempDir Path dir) throws Exception {
        Path png = dir.resolve("transport.png");
        TransportPlot.write(TransportResultsTest.sample(), png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "not a PNG");
        int w = TransportPlot.panelWidth(3, 3);
        assertEquals(2 * w, img.getWidth());
        assertEquals(40 + 2 * TransportPlot.PANEL_HEIGHT, img.getHeight());
        int epoll = TransportPlot.color(TransportKind.EPOLL).getRGB() & 0xFFFFFF;
        int shm = TransportPlot.color(TransportKind.UCX_SHM).getRGB() & 0xFFFFFF;
        int tcp = TransportPlot.color(TransportKind.UCX_TCP).getRGB() & 0xFFFFFF;
        for (int i = 0; i < 4; i++) {
            int x0 = (i % 2) * w;
            int y0 = 40 + (i / 2) * TransportPlot.PANEL_HEIGHT;
            // bars are much larger than a legend box (14 x 8 pixels)
            for (int rgb : new int[] {epoll, shm, tcp}) {
                assertTrue(Pixels.count(img, x0, y0, w, TransportPlot.PANEL_HEIGHT, rgb) > 400,
                        "panel " + i + " color " + Integer.toHexString(rgb));
            }
        }
    }
}
