package io.netec.hdfs.switchroute.wire;

/** A NetEC packet or control message that breaks docs/protocol.md: it is dropped or refused. */
public class ProtocolException extends Exception {
  private static final long serialVersionUID = 1L;

  public ProtocolException(String reason) {
    super(reason);
  }
}
