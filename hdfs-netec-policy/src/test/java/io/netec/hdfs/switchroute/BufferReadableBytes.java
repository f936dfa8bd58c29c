package io.netec.hdfs.switchroute;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import org.apache.hadoop.fs.ByteBufferReadable;

/**
 * Bytes in memory read as a DataNode's block is read by a survivor agent: into arrays, or
 * straight into the agent's (direct) packet buffers through Hadoop's ByteBufferReadable.
 */
public class BufferReadableBytes extends ByteArrayInputStream implements ByteBufferReadable {
  public BufferReadableBytes(byte[] b, int offset, int length) {
    super(b, offset, length);
  }

  @Override
  public synchronized int read(ByteBuffer dst) {
    if (!dst.hasRemaining()) {
      return 0;
    }
    if (pos >= count) {
      return -1;
    }
    // at most 4 KiB a call: the agent must read until the payload is full
    int n = Math.min(Math.min(dst.remaining(), count - pos), 4096);
    dst.put(buf, pos, n);
    pos += n;
    return n;
  }
}
