package io.github.ucxffm.bench.compare;

import io.github.ucxffm.bench.compare.CompareResults.Cell;
import io.github.ucxffm.bench.compare.CompareResults.Impl;
import io.github.ucxffm.bench.perftest.PerfTestType;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.TreeSet;

/**
 * The comparison as a PNG drawn with {@code java.awt} (headless): one panel per test and transport, the reported
 * number (latency or bandwidth, log scale) against the message size (log scale), one line per implementation.
 */
public final class ComparePlot {

    static final int PANEL_WIDTH = 560;
    static final int PANEL_HEIGHT = 340;
    private static final int MARGIN_LEFT = 78;
    private static final int MARGIN_RIGHT = 20;
    private static final int MARGIN_TOP = 34;
    private static final int MARGIN_BOTTOM = 46;
    private static final int TITLE_HEIGHT = 40;

    private static final Color[] COLORS = {new Color(0x333333), new Color(0x1F77B4), new Color(0xD62728)};

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
        int width = columns * PANEL_WIDTH;
        int height = TITLE_HEIGHT + rows * PANEL_HEIGHT;
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString("ucx-ffm vs native ucx_perftest vs JUCX: medians per message size", 12, 26);
            for (int r = 0; r < tests.size(); r++) {
                for (int c = 0; c < transports.size(); c++) {
                    panel(g, results, tests.get(r), transports.get(c), c * PANEL_WIDTH,
                            TITLE_HEIGHT + r * PANEL_HEIGHT);
                }
            }
        } finally {
            g.dispose();
        }
        return image;
    }

    /**
     * Draws the comparison into a PNG file.
     *
     * @param results the runs
     * @param png     the file to write
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void write(CompareResults results, Path png) {
        try {
            if (!ImageIO.write(render(results), "png", png.toFile())) {
                throw new IOException("no PNG writer in this JDK");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + png, e);
        }
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
        int left = x0 + MARGIN_LEFT;
        int right = x0 + PANEL_WIDTH - MARGIN_RIGHT;
        int top = y0 + MARGIN_TOP;
        int bottom = y0 + PANEL_HEIGHT - MARGIN_BOTTOM;
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        boolean latency = CompareResults.isLatency(test);
        g.drawString(test.testName() + " over " + transport + (latency ? ": p50 latency (us, lower is better)"
                : ": bandwidth (MB/s, higher is better)"), x0 + 12, y0 + 20);
        g.setColor(new Color(0xF7F7F7));
        g.fillRect(left, top, right - left, bottom - top);
        g.setColor(Color.GRAY);
        g.drawRect(left, top, right - left, bottom - top);
        if (sizeSet.isEmpty() || lo == Double.MAX_VALUE) {
            g.drawString("no data", left + 10, top + 20);
            return;
        }
        List<Long> sizes = new ArrayList<>(sizeSet);
        double xMin = log2(sizes.getFirst());
        double xMax = log2(sizes.getLast());
        if (xMax - xMin < 1e-9) {
            xMin -= 1;
            xMax += 1;
        }
        double yMin = Math.floor(Math.log10(lo));
        double yMax = Math.ceil(Math.log10(hi));
        if (yMax - yMin < 1) {
            yMax = yMin + 1;
        }
        Font small = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
        g.setFont(small);
        FontMetrics fm = g.getFontMetrics();
        // y grid: decades, with 2 and 5 when there are few decades
        for (int d = (int) yMin; d <= (int) yMax; d++) {
            for (int k : new int[] {1, 2, 5}) {
                double v = k * Math.pow(10, d);
                double lv = Math.log10(v);
                if (lv < yMin - 1e-9 || lv > yMax + 1e-9 || (k != 1 && yMax - yMin > 3)) {
                    continue;
                }
                int y = yPixel(lv, yMin, yMax, top, bottom);
                g.setColor(k == 1 ? new Color(0xCCCCCC) : new Color(0xE4E4E4));
                g.drawLine(left, y, right, y);
                g.setColor(Color.DARK_GRAY);
                String label = axisNumber(v);
                g.drawString(label, left - 6 - fm.stringWidth(label), y + fm.getAscent() / 2 - 1);
            }
        }
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
        int legendY = top + 14;
        for (Impl impl : Impl.values()) {
            Color color = COLORS[impl.ordinal() % COLORS.length];
            List<int[]> points = new ArrayList<>();
            for (long s : sizes) {
                OptionalDouble m = results.median(new Cell(transport, test, s), impl);
                if (m.isPresent() && m.getAsDouble() > 0) {
                    points.add(new int[] {xPixel(log2(s), xMin, xMax, left, right),
                            yPixel(Math.log10(m.getAsDouble()), yMin, yMax, top, bottom)});
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
            for (int[] p : points) {
                g.fillOval(p[0] - 4, p[1] - 4, 8, 8);
            }
            g.setStroke(new BasicStroke(1f));
            g.fillRect(left + 10, legendY - 8, 14, 8);
            g.setColor(Color.BLACK);
            g.drawString(impl.label(), left + 30, legendY);
            legendY += 15;
        }
    }

    private static double log2(long v) {
        return Math.log(v) / Math.log(2);
    }

    private static int xPixel(double v, double min, double max, int left, int right) {
        return (int) Math.round(left + 12 + (v - min) / (max - min) * (right - left - 24));
    }

    private static int yPixel(double v, double min, double max, int top, int bottom) {
        return (int) Math.round(bottom - (v - min) / (max - min) * (bottom - top));
    }

    private static String axisNumber(double v) {
        if (v >= 1000) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (v >= 1) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return String.format(Locale.ROOT, "%s", Double.toString(v).replaceAll("0+$", ""));
    }
}
