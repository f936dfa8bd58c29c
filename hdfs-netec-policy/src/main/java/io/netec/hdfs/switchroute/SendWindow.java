package io.netec.hdfs.switchroute;

/**
 * A survivor stream's send window (docs/protocol.md "Windows"): the stripes it may send are
 * those below the reader's last ACK plus the window that ACK allowed (EBSN: the switch's ring
 * of slots), never past the stream's end; a RETX goes back to the reader's first missing stripe
 * (go-back-N). The same for a TCP stream and a datagram stream. Plain; one thread at a time.
 */
final class SendWindow {
  private final long stripes;
  private long next;
  private long limit;

  /** A stream of {@code stripes} stripes whose setup allowed {@code window} before any ACK. */
  SendWindow(long stripes, int window) {
    this.stripes = stripes;
    this.limit = Math.max(window, 1);
  }

  /**
   * An ACK of every stripe below {@code seq}, allowing {@code window} more: the limit only
   * grows (a late ACK does not shrink it); with {@code retx}, sending goes back to {@code seq}.
   */
  void onAck(long seq, int window, boolean retx) {
    limit = Math.max(limit, seq + Math.max(window, 1));
    if (retx && seq < next) {
      next = seq;
    }
  }

  /** Whether a stripe may be sent now. */
  boolean canSend() {
    return next < Math.min(limit, stripes);
  }

  /** The next stripe to send, taken (call only when {@link #canSend}). */
  long take() {
    return next++;
  }

  /** The stripe that would be sent next. */
  long next() {
    return next;
  }
}
