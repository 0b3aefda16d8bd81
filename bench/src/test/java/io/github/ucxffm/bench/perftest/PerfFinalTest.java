package io.github.ucxffm.bench.perftest;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One parser for ucx_perftest's Final line and the runners'. */
class PerfFinalTest {

    @Test
    void shouldReadUcxPerftestsFinalLine() {
        PerfFinal f = PerfFinal.lastIn(PerfReportTest.NATIVE_TAG_LAT).orElseThrow();
        assertEquals(100000, f.iterations());
        assertEquals(0.110, f.percentileMicros());
        assertEquals(0.110, f.averageMicros());
        assertEquals(0.110, f.overallMicros());
        assertEquals(69.18, f.bandwidthAverage());
        assertEquals(69.18, f.bandwidthOverall());
        assertEquals(9067393, f.rateAverage());
        assertEquals(9067393, f.rateOverall());
    }

    @Test
    void shouldTakeTheLastFinalLineAndIgnoreProgressRows() {
        PerfFinal f = PerfFinal.lastIn("noise\n" + PerfReportTest.NATIVE_ROWS + "ucx-ffm perftest: transports: tcp\n")
                .orElseThrow();
        assertEquals(3000000, f.iterations());
        assertEquals(6.771, f.overallMicros());
        assertEquals(147697, f.rateOverall());
    }

    @Test
    void shouldAcceptThousandsSeparators() {
        PerfFinal f = PerfFinal.parse("Final:    1,000,000      0.110     0.110     0.110       69.18      69.18  "
                + "9,067,393  9,067,393").orElseThrow();
        assertEquals(1_000_000, f.iterations());
        assertEquals(9_067_393, f.rateAverage());
    }

    @Test
    void shouldRejectMalformedLines() {
        assertEquals(Optional.empty(), PerfFinal.parse("Final: 1 2 3 4 5 6 7"));
        assertEquals(Optional.empty(), PerfFinal.parse("Final: 1 2 3 4 5 6 7 8 9"));
        assertEquals(Optional.empty(), PerfFinal.parse("Final: 1 2 3 x 5 6 7 8"));
        assertEquals(Optional.empty(), PerfFinal.parse("Final: 1 2 3 -4 5 6 7 8"));
        assertEquals(Optional.empty(), PerfFinal.parse("Final: 1.5 2 3 4 5 6 7 8"));
        assertEquals(Optional.empty(), PerfFinal.parse("Final: 1 2 3 NaN 5 6 7 8"));
        assertEquals(Optional.empty(), PerfFinal.parse("[thread 0] 1 2 3 4 5 6 7 8"));
        assertTrue(PerfFinal.lastIn("").isEmpty());
    }

    @Test
    void shouldReadTheAggregateOfSeveralThreadsWithItsBlankColumns() {
        // ucx_perftest 1.13.1 -t tag_bw -T 2: one row for the threads together, four numbers
        String line = "Final:               3000000                         4.720                   3.23"
                + "                  423760";
        PerfFinal f = PerfFinal.parse(line).orElseThrow();
        assertTrue(f.isAggregate());
        assertEquals(3000000, f.iterations());
        assertEquals(4.720, f.overallMicros());
        assertEquals(3.23, f.bandwidthOverall());
        assertEquals(423760, f.rateOverall());
        assertTrue(Double.isNaN(f.percentileMicros()) && Double.isNaN(f.rateAverage()));
        // and the runners print it character for character
        assertEquals(line, PerfReport.formatRow("Final:", f));
        assertTrue(PerfFinal.numbers("  100000   9.750   1.57   205172").orElseThrow().isAggregate(), "-f");
        assertTrue(PerfFinal.parse("Final: 1 2 3").isEmpty());
        assertTrue(PerfFinal.parse("Final: 1 2 3 4 5").isEmpty());
        assertTrue(!PerfFinal.parse("Final: 1 1 1 1 1 1 1 1").orElseThrow().isAggregate());
    }
}
