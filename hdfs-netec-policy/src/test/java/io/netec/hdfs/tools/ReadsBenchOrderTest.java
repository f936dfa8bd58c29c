package io.netec.hdfs.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The reads benchmark's order of clients within a repetition. */
class ReadsBenchOrderTest {
  @Test
  void everyRepetitionReadsEachClientOnceAndEveryClientFollowsEveryOther() {
    int n = 5;
    int[][] follows = new int[n][n];
    Random shuffle = new Random(7);
    int[] previous = null;
    for (int rep = 0; rep < 9 * 6; rep++) { // the kinds' repetitions of one run
      int[] o = ReadsBench.order(n, shuffle);
      int[] sorted = o.clone();
      Arrays.sort(sorted);
      assertArrayEquals(new int[] {0, 1, 2, 3, 4}, sorted, Arrays.toString(o));
      for (int i = 0; i < n; i++) {
        int before = i > 0 ? o[i - 1] : previous == null ? -1 : previous[n - 1];
        if (before >= 0) {
          follows[o[i]][before]++;
        }
      }
      previous = o;
    }
    for (int a = 0; a < n; a++) {
      for (int b = 0; b < n; b++) {
        if (a != b) {
          // the rotation had client a after a - 1 in all but one repetition of n, never
          // after most others; shuffled, each pair comes about 54 / 5 = 11 times
          assertTrue(follows[a][b] >= 4 && follows[a][b] <= 22,
              a + " after " + b + ": " + follows[a][b] + " times: "
              + Arrays.deepToString(follows));
        }
      }
    }
  }
}
