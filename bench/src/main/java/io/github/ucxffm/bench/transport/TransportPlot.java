package io.github.ucxffm.bench.transport;

import io.github.ucxffm.bench.plot.LogPanel;
import io.github.ucxffm.bench.transport.TransportResults.Metric;

import java.awt.Color;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;

/**
 * The sitting as a PNG: four panels (p50 latency, requests/s, MB/s, CPU per million requests), each a group of bars
 * per cell, one bar per transport (the median over the repetitions), on a log scale.
 */
final class TransportPlot {

    /** The panels, in reading order. */
    static final List<Metric> PANELS = List.of(Metric.P50, Metric.RATE, Metric.BANDWIDTH, Metric.CPU);
    static final int PANEL_HEIGHT = 360;
    static final int BAR_WIDTH = 14;
    static final int GROUP_GAP = 26;

    private TransportPlot() {
    }

    /** A panel's width: room for every bar, at least 560 pixels. */
    static int panelWidth(int cells, int transports) {
        return Math.max(560, 110 + cells * (transports * BAR_WIDTH + GROUP_GAP));
    }

    /** The color of a transport's bars: the same in every panel and sitting. */
    static Color color(TransportKind t) {
        return LogPanel.COLORS[t.ordinal() % LogPanel.COLORS.length];
    }

    static BufferedImage render(TransportResults results) {
        List<Cell> cells = results.cells();
        List<TransportKind> transports = results.transports();
        int width = panelWidth(cells.size(), transports.size());
        int reps = results.measurements().stream().mapToInt(Measurement::rep).max().orElse(1);
        String title = "Netty transports: echo and gRPC, one bar per transport"
                + (reps > 1 ? " (the median of " + reps + " repetitions)" : "");
        return LogPanel.image(2 * width, LogPanel.TITLE_HEIGHT + 2 * PANEL_HEIGHT, title, g -> {
            for (int i = 0; i < PANELS.size(); i++) {
                panel(g, results, PANELS.get(i), (i % 2) * width, LogPanel.TITLE_HEIGHT + (i / 2) * PANEL_HEIGHT,
                        width);
            }
        });
    }

    static void write(TransportResults results, Path png) {
        LogPanel.write(render(results), png);
    }

    private static void panel(Graphics2D g, TransportResults results, Metric metric, int x0, int y0, int width) {
        List<Cell> cells = results.cells();
        List<TransportKind> transports = results.transports();
        double lo = Double.NaN;
        double hi = Double.NaN;
        for (Cell cell : cells) {
            for (TransportKind t : transports) {
                double v = results.value(t, cell, metric);
                if (v > 0) {
                    lo = Double.isNaN(lo) ? v : Math.min(lo, v);
                    hi = Double.isNaN(hi) ? v : Math.max(hi, v);
                }
            }
        }
        String title = switch (metric) {
            case P50 -> "p50 round trip (us, lower is better)";
            case P99 -> "p99 round trip (us, lower is better)";
            case RATE -> "requests/s (stream: messages/s, higher is better)";
            case BANDWIDTH -> "MB/s, one direction (higher is better)";
            case CPU -> "CPU s per million requests, client + server (lower is better)";
        };
        LogPanel p = LogPanel.draw(g, x0, y0, width, PANEL_HEIGHT, title, lo, hi);
        if (p == null) {
            return;
        }
        g.setFont(LogPanel.small());
        FontMetrics fm = g.getFontMetrics();
        int groupWidth = transports.size() * BAR_WIDTH;
        double step = (double) (p.right - p.left) / Math.max(1, cells.size());
        for (int c = 0; c < cells.size(); c++) {
            int center = (int) Math.round(p.left + step * (c + 0.5));
            int x = center - groupWidth / 2;
            for (TransportKind t : transports) {
                double v = results.value(t, cells.get(c), metric);
                if (v > 0) {
                    int y = p.y(v);
                    g.setColor(color(t));
                    g.fillRect(x + 1, y, BAR_WIDTH - 2, p.bottom - y);
                }
                x += BAR_WIDTH;
            }
            g.setColor(Color.DARK_GRAY);
            String label = cells.get(c).label();
            int row = c % 2; // alternate label rows, so that long labels do not run into each other
            g.drawString(label, center - fm.stringWidth(label) / 2, p.bottom + fm.getAscent() + 4 + row * 14);
        }
        for (int i = 0; i < transports.size(); i++) {
            p.legend(g, color(transports.get(i)), transports.get(i).label(), i);
        }
    }
}
