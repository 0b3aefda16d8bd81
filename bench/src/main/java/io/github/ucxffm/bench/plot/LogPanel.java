package io.github.ucxffm.bench.plot;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What the benchmarks' PNG plots share, drawn with {@code java.awt} (headless): a white image with a title line, and
 * panels with a title, a grey plotting area and a log-scale y axis whose grid lines are labelled decades (with 2 and 5
 * between them when there are few decades). A panel maps values to pixels; what is drawn in it (lines, bars) is the
 * caller's.
 */
public final class LogPanel {

    /** Height of the title line at the top of an image. */
    public static final int TITLE_HEIGHT = 40;

    /** The series colors, in order: dark grey, blue, red, green, orange, purple. */
    public static final Color[] COLORS = {new Color(0x333333), new Color(0x1F77B4), new Color(0xD62728),
        new Color(0x2CA02C), new Color(0xFF7F0E), new Color(0x9467BD)};

    private static final int MARGIN_LEFT = 78;
    private static final int MARGIN_RIGHT = 20;
    private static final int MARGIN_TOP = 34;
    private static final int MARGIN_BOTTOM = 46;

    /** Left edge of the plotting area. */
    public final int left;
    /** Right edge of the plotting area. */
    public final int right;
    /** Top edge of the plotting area. */
    public final int top;
    /** Bottom edge of the plotting area. */
    public final int bottom;
    private final double yMin;
    private final double yMax;

    private LogPanel(int left, int right, int top, int bottom, double yMin, double yMax) {
        this.left = left;
        this.right = right;
        this.top = top;
        this.bottom = bottom;
        this.yMin = yMin;
        this.yMax = yMax;
    }

    /**
     * A white image with a bold title, anti-aliased, drawn by {@code body}.
     *
     * @param width  pixels
     * @param height pixels, the title line included
     * @param title  the title
     * @param body   draws the panels, below {@link #TITLE_HEIGHT}
     * @return the image
     */
    public static BufferedImage image(int width, int height, String title, Consumer<Graphics2D> body) {
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, 12, 26);
            body.accept(g);
        } finally {
            g.dispose();
        }
        return image;
    }

    /**
     * Writes an image as a PNG file.
     *
     * @param image the image
     * @param png   the file
     * @throws UncheckedIOException if it cannot be written
     */
    public static void write(BufferedImage image, Path png) {
        try {
            if (!ImageIO.write(image, "png", png.toFile())) {
                throw new IOException("no PNG writer in this JDK");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + png, e);
        }
    }

    /**
     * Draws an image into a PNG file, or says on {@code err} why there is none: a benchmark's results stand without
     * their plot.
     *
     * @param who   the benchmark, for the message ({@code bench compare})
     * @param image draws the image
     * @param png   the file
     * @param err   where a failure is told
     * @return whether the file was written
     */
    public static boolean writeOrTell(String who, Supplier<BufferedImage> image, Path png, PrintStream err) {
        try {
            write(image.get(), png);
            return true;
        } catch (RuntimeException | Error e) {
            err.println(who + ": no plot (" + e + "); fonts for java.awt may be missing "
                    + "(Debian: apt-get install fontconfig fonts-dejavu-core)");
            return false;
        }
    }

    /**
     * Draws a panel's title and plotting area, and its y axis when there is data: labelled grid lines on a log scale
     * from the decade at or below {@code lo} to the one at or above {@code hi}.
     *
     * @param g      where to draw
     * @param x0     the panel's left edge
     * @param y0     the panel's top edge
     * @param width  the panel's width
     * @param height the panel's height
     * @param title  the panel's title
     * @param lo     the smallest positive value to show, or {@link Double#NaN} when there is none
     * @param hi     the largest value to show
     * @return the panel, or {@code null} when it has no data (it then says so)
     */
    public static LogPanel draw(Graphics2D g, int x0, int y0, int width, int height, String title, double lo,
                                double hi) {
        int left = x0 + MARGIN_LEFT;
        int right = x0 + width - MARGIN_RIGHT;
        int top = y0 + MARGIN_TOP;
        int bottom = y0 + height - MARGIN_BOTTOM;
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        g.drawString(title, x0 + 12, y0 + 20);
        g.setColor(new Color(0xF7F7F7));
        g.fillRect(left, top, right - left, bottom - top);
        g.setColor(Color.GRAY);
        g.drawRect(left, top, right - left, bottom - top);
        if (!(lo > 0) || !(hi >= lo)) {
            g.drawString("no data", left + 10, top + 20);
            return null;
        }
        double yMin = Math.floor(Math.log10(lo));
        double yMax = Math.ceil(Math.log10(hi));
        if (yMax - yMin < 1) {
            yMax = yMin + 1;
        }
        LogPanel p = new LogPanel(left, right, top, bottom, yMin, yMax);
        g.setFont(small());
        FontMetrics fm = g.getFontMetrics();
        for (int d = (int) yMin; d <= (int) yMax; d++) {
            for (int k : new int[] {1, 2, 5}) {
                double v = k * Math.pow(10, d);
                double lv = Math.log10(v);
                if (lv < yMin - 1e-9 || lv > yMax + 1e-9 || (k != 1 && yMax - yMin > 3)) {
                    continue;
                }
                int y = p.y(v);
                g.setColor(k == 1 ? new Color(0xCCCCCC) : new Color(0xE4E4E4));
                g.drawLine(left, y, right, y);
                g.setColor(Color.DARK_GRAY);
                String label = axisNumber(v);
                g.drawString(label, left - 6 - fm.stringWidth(label), y + fm.getAscent() / 2 - 1);
            }
        }
        return p;
    }

    /**
     * The pixel row of a value.
     *
     * @param value a positive value
     * @return the row
     */
    public int y(double value) {
        return (int) Math.round(bottom - (Math.log10(value) - yMin) / (yMax - yMin) * (bottom - top));
    }

    /**
     * A legend entry: a colored box and a label, at the left of the plotting area.
     *
     * @param g     where to draw
     * @param color the series' color
     * @param label its name
     * @param row   0 for the first entry, 1 for the second...
     */
    public void legend(Graphics2D g, Color color, String label, int row) {
        int y = top + 14 + 15 * row;
        g.setFont(small());
        g.setColor(color);
        g.fillRect(left + 10, y - 8, 14, 8);
        g.setColor(Color.BLACK);
        g.drawString(label, left + 30, y);
    }

    /** The font of axis labels and legends. */
    public static Font small() {
        return new Font(Font.SANS_SERIF, Font.PLAIN, 11);
    }

    private static String axisNumber(double v) {
        if (v >= 1) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return String.format(Locale.ROOT, "%s", Double.toString(v).replaceAll("0+$", ""));
    }
}
