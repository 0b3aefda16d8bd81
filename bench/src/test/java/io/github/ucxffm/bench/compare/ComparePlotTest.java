package io.github.ucxffm.bench.compare;

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

/** The PNG: one panel per test and transport, one colored line per implementation. */
class ComparePlotTest {

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @Test
    void shouldDrawAPanelPerTestAndTransportWithALinePerImplementation(@TempDir Path dir) throws Exception {
        Path png = dir.resolve("compare.png");
        ComparePlot.write(CompareResultsTest.sample(), png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "not a PNG");
        // two transports (columns) by one test each here, but the grid is transports x tests: 2 x 2
        assertEquals(2 * ComparePlot.PANEL_WIDTH, img.getWidth());
        assertEquals(40 + 2 * ComparePlot.PANEL_HEIGHT, img.getHeight());
        // the shm column's tag_lat panel and the tcp column's tag_bw panel have all three lines
        int[][] panels = {{0, 40}, {ComparePlot.PANEL_WIDTH, 40 + ComparePlot.PANEL_HEIGHT}};
        for (int[] p : panels) {
            assertTrue(Pixels.count(img, p[0], p[1], ComparePlot.PANEL_WIDTH, ComparePlot.PANEL_HEIGHT, 0x333333) > 50,
                    "native line in panel " + p[0] + "," + p[1]);
            assertTrue(Pixels.count(img, p[0], p[1], ComparePlot.PANEL_WIDTH, ComparePlot.PANEL_HEIGHT, 0x1F77B4) > 50,
                    "ucx-ffm line");
            assertTrue(Pixels.count(img, p[0], p[1], ComparePlot.PANEL_WIDTH, ComparePlot.PANEL_HEIGHT, 0xD62728) > 50,
                    "jucx line");
        }
        // the shm column has no tag_bw data: that panel says so and has no lines
        assertEquals(0, Pixels.count(img, 0, 40 + ComparePlot.PANEL_HEIGHT, ComparePlot.PANEL_WIDTH,
                ComparePlot.PANEL_HEIGHT, 0x1F77B4));
    }

    @Test
    void shouldDrawAnEmptyComparisonWithoutFailing() {
        BufferedImage img = ComparePlot.render(new CompareResults());
        assertEquals(ComparePlot.PANEL_WIDTH, img.getWidth());
    }
}
