package io.netec.hdfs.inecroute;

/**
 * The one-byte status a participant answers a join with once its vertex ends, before a text
 * (docs/inec.md, "A repair, step by step"). The requester tells from it whose fault a failure
 * was: a survivor's own ({@link #SURVIVOR_FAULT}, {@link #OUTPUT_UNREACHABLE}) is run again
 * from a spare; the others fail the route's attempt.
 */
final class VertexReport {
  /** The vertex streamed its whole range. */
  static final int DONE = 0;
  /** It failed otherwise (a refused join or token, no progress). */
  static final int FAILED = 1;
  /** One of its streams was lost: another vertex failed, and closed it. */
  static final int STREAM_LOST = 2;
  /**
   * Its own survivor cannot serve: its block failed it (unreadable, corrupt) or it has no room
   * (no transfer free, every vertex thread taken). That survivor's fault.
   */
  static final int SURVIVOR_FAULT = 3;
  /**
   * It could not reach its output, another participant's data listener, and was told so at
   * once (refused, no route; a dial that timed out is {@link #FAILED}: a stuck vertex further
   * down the chain times out every dial before it): that participant's fault, as Hadoop's
   * striped reader takes a DataNode it cannot connect to for a dead source. An output that is
   * the requester itself is no survivor's fault.
   */
  static final int OUTPUT_UNREACHABLE = 4;

  private VertexReport() {
  }
}
