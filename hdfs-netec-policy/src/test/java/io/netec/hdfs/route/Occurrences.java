package io.netec.hdfs.route;

/** Test helper: how often a string occurs in captured log output. */
final class Occurrences {
  private Occurrences() {
  }

  static int count(String text, String what) {
    int n = 0;
    for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
      n++;
    }
    return n;
  }
}
