package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.compare.CompareResults.Cell;
import io.github.ucxffm.bench.compare.CompareResults.Impl;
import io.github.ucxffm.bench.perftest.PerfTestType;
import io.github.ucxffm.bench.plot.LogPanel;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.TreeSet;

/**
 * The comparison as a PNG drawn with {@code java.awt} (headless): one panel per test and transport, the reported
 * number (latency or bandwidth, log scale) against the message size (log scale), one line per implementation.
 */
public final class ComparePlot {

    static final int PANEL_WIDTH = 560;
    static final int PANEL_HEIGHT = 340;

    private ComparePlot() {
    }

    /**
     * Draws the comparison.
     *
     * @param results the runs
     * @return the image
     */
    public static BufferedImage render(CompareResults results) {
        List<String> transports = new ArrayList<>();
        List<PerfTestType> tests = new ArrayList<>();
        for (Cell c : results.cells()) {
            if (!transports.contains(c.transport())) {
                transports.add(c.transport());
            }
            if (!tests.contains(c.test())) {
                tests.add(c.test());
            }
        }
        int columns = Math.max(1, transports.size());
        int rows = Math.max(1, tests.size());
        return LogPanel.image(columns * PANEL_WIDTH, LogPanel.TITLE_HEIGHT + rows * PANEL_HEIGHT,
                "ucx-ffm vs native ucx_perftest vs JUCX: medians per message size", g -> {
                    for (int r = 0; r < tests.size(); r++) {
                        for (int c = 0; c < transports.size(); c++) {
                            panel(g, results, tests.get(r), transports.get(c), c * PANEL_WIDTH,
                                    LogPanel.TITLE_HEIGHT + r * PANEL_HEIGHT);
                        }
                    }
                });
    }

    /**
     * Draws the comparison into a PNG file.
     *
     * @param results the runs
     * @param png     the file to write
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void write(CompareResults results, Path png) {
        LogPanel.write(render(results), png);
    }

    private static void panel(Graphics2D g, CompareResults results, PerfTestType test, String transport, int x0,
                              int y0) {
        TreeSet<Long> sizeSet = new TreeSet<>();
        double lo = Double.MAX_VALUE;
        double hi = -Double.MAX_VALUE;
        for (Cell c : results.cells()) {
            if (c.test() != test || !c.transport().equals(transport)) {
                continue;
            }
            sizeSet.add(c.size());
            for (Impl impl : Impl.values()) {
                OptionalDouble m = results.median(c, impl);
                if (m.isPresent() && m.getAsDouble() > 0) {
                    lo = Math.min(lo, m.getAsDouble());
                    hi = Math.max(hi, m.getAsDouble());
                }
            }
        }
        boolean latency = CompareResults.isLatency(test);
        String title = test.testName() + " over " + transport + (latency ? ": p50 latency (us, lower is better)"
                : ": bandwidth (MB/s, higher is better)");
        LogPanel p = LogPanel.draw(g, x0, y0, PANEL_WIDTH, PANEL_HEIGHT, title,
                sizeSet.isEmpty() || lo == Double.MAX_VALUE ? Double.NaN : lo, hi);
        if (p == null) {
            return;
        }
        int left = p.left;
        int right = p.right;
        int top = p.top;
        int bottom = p.bottom;
        List<Long> sizes = new ArrayList<>(sizeSet);
        double xMin = log2(sizes.getFirst());
        double xMax = log2(sizes.getLast());
        if (xMax - xMin < 1e-9) {
            xMin -= 1;
            xMax += 1;
        }
        g.setFont(LogPanel.small());
        FontMetrics fm = g.getFontMetrics();
        for (long s : sizes) {
            int x = xPixel(log2(s), xMin, xMax, left, right);
            g.setColor(new Color(0xDDDDDD));
            g.drawLine(x, top, x, bottom);
            g.setColor(Color.DARK_GRAY);
            String label = CompareResults.formatSize(s);
            g.drawString(label, x - fm.stringWidth(label) / 2, bottom + fm.getAscent() + 4);
        }
        g.drawString("message size", (left + right) / 2 - fm.stringWidth("message size") / 2, bottom + 34);
        // one line per implementation
        int legendRow = 0;
        for (Impl impl : Impl.values()) {
            Color color = LogPanel.COLORS[impl.ordinal() % LogPanel.COLORS.length];
            List<int[]> points = new ArrayList<>();
            for (long s : sizes) {
                OptionalDouble m = results.median(new Cell(transport, test, s), impl);
                if (m.isPresent() && m.getAsDouble() > 0) {
                    points.add(new int[] {xPixel(log2(s), xMin, xMax, left, right), p.y(m.getAsDouble())});
                }
            }
            if (points.isEmpty()) {
                continue;
            }
            g.setColor(color);
            g.setStroke(new BasicStroke(2f));
            for (int i = 1; i < points.size(); i++) {
                g.drawLine(points.get(i - 1)[0], points.get(i - 1)[1], points.get(i)[0], points.get(i)[1]);
            }
            for (int[] point : points) {
                g.fillOval(point[0] - 4, point[1] - 4, 8, 8);
            }
            g.setStroke(new BasicStroke(1f));
            p.legend(g, color, impl.label(), legendRow++);
        }
    }

    private static double log2(long v) {
        return Math.log(v) / Math.log(2);
    }

    private static int xPixel(double v, double min, double max, int left, int right) {
        return (int) Math.round(left + 12 + (v - min) / (max - min) * (right - left - 24));
    }
}
