package io.netec.hdfs.inecroute;

import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.PeerNetworks;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.DataOutput;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;

/**
 * What a repair's planner asks of one participant: be one survivor vertex of a repair graph.
 * Stream {@code [offset, offset + length)} of the local internal block (zeros past
 * {@code unitLength}; no block at all when unitLength is 0), multiplied by one coefficient per
 * output row (or raw, for a star), XORed with the inputs' partial results, to the output.
 * Wire form: the fields in order with DataOutput; the participant answers one byte (0 served,
 * 1 failed, 2 failed because one of its streams was lost: another vertex's failure) and a UTF
 * message when its part ended.
 */
public final class JoinRequest {
  static final int MAGIC = 0x494e4a31; // "INJ1"
  static final int MAX_ROWS = 16;
  static final int MAX_INPUTS = 32;
  static final int MAX_CHUNK = 16 << 20;
  static final int MAX_SEGMENT = 256 << 20;

  final String task;
  final ExtendedBlock block;
  final String token;
  final long unitLength;
  final long offset;
  final long length;
  final int chunk;
  final int segment;
  final byte[] coefficients; // one per output row; a raw send: {1}
  final byte[][] inputTags;
  final InetSocketAddress output;
  final byte[] outputTag;
  final InecEngine.Transport transport;
  final int timeoutMs;

  JoinRequest(String task, ExtendedBlock block, String token, long unitLength, long offset,
      long length, int chunk, int segment, byte[] coefficients, byte[][] inputTags,
      InetSocketAddress output, byte[] outputTag, InecEngine.Transport transport,
      int timeoutMs) throws IOException {
    this.task = task;
    this.block = block;
    this.token = token;
    this.unitLength = unitLength;
    this.offset = offset;
    this.length = length;
    this.chunk = chunk;
    this.segment = segment;
    this.coefficients = coefficients;
    this.inputTags = inputTags;
    this.output = output;
    this.outputTag = outputTag;
    this.transport = transport;
    this.timeoutMs = timeoutMs;
    validate();
  }

  private void validate() throws IOException {
    check(unitLength >= 0 && offset >= 0 && length > 0, "bad range: unit " + unitLength
        + " bytes, offset " + offset + ", length " + length);
    check(chunk > 0 && chunk <= MAX_CHUNK, "bad chunk " + chunk);
    check(segment >= chunk && segment <= MAX_SEGMENT, "bad segment " + segment);
    check(coefficients.length >= 1 && coefficients.length <= MAX_ROWS,
        "bad row count " + coefficients.length);
    check(inputTags.length <= MAX_INPUTS, "too many inputs: " + inputTags.length);
    for (byte[] t : inputTags) {
      check(t.length == 16, "bad input tag");
    }
    check(outputTag.length == 16, "bad output tag");
    check(timeoutMs > 0, "bad timeout " + timeoutMs);
    // Every join proves the right to join with a block and its READ token, also a vertex that
    // streams zeros (unit length 0): a join without one is refused.
    check(block != null, "no block: every join carries a block and its READ token");
  }

  private static void check(boolean ok, String what) throws IOException {
    if (!ok) {
      throw new IOException("bad join request: " + what);
    }
  }

  void write(DataOutput out) throws IOException {
    out.writeInt(MAGIC);
    out.writeUTF(task);
    out.writeBoolean(block != null);
    if (block != null) {
      out.writeUTF(block.getBlockPoolId());
      out.writeLong(block.getBlockId());
      out.writeLong(block.getNumBytes());
      out.writeLong(block.getGenerationStamp());
    }
    out.writeUTF(token);
    out.writeLong(unitLength);
    out.writeLong(offset);
    out.writeLong(length);
    out.writeInt(chunk);
    out.writeInt(segment);
    out.writeByte(coefficients.length);
    out.write(coefficients);
    out.writeByte(inputTags.length);
    for (byte[] t : inputTags) {
      out.write(t);
    }
    out.writeUTF(output.getAddress().getHostAddress());
    out.writeInt(output.getPort());
    out.write(outputTag);
    out.writeByte(transport.ordinal());
    out.writeInt(timeoutMs);
  }

  /**
   * The join in {@code b[0, n)}, as a participant reads it: null while incomplete (more bytes
   * to come). Anything but exactly one join in its one encoding — what {@link #write} produces
   * — is refused: a flag other than 0 or 1, overlong text, an address spelled otherwise, bytes
   * after it (fuzzing found each of the first three accepted and written back differently).
   */
  static JoinRequest parse(byte[] b, int n) throws IOException {
    ByteArrayInputStream in = new ByteArrayInputStream(b, 0, n);
    JoinRequest r;
    try {
      r = read(new DataInputStream(in));
    } catch (EOFException e) {
      return null;
    }
    check(in.available() == 0, in.available() + " bytes after it");
    ByteArrayOutputStream again = new ByteArrayOutputStream(n);
    r.write(new DataOutputStream(again));
    check(Arrays.equals(again.toByteArray(), 0, again.size(), b, 0, n),
        "not in its one encoding (as the planner writes it)");
    return r;
  }

  private static JoinRequest read(DataInput in) throws IOException {
    if (in.readInt() != MAGIC) {
      throw new IOException("bad join request: not an INEC join (magic)");
    }
    String task = readText(in, "task");
    ExtendedBlock block = in.readBoolean()
        ? new ExtendedBlock(readText(in, "pool id"), in.readLong(), in.readLong(), in.readLong())
        : null;
    String token = readText(in, "token");
    long unitLength = in.readLong();
    long offset = in.readLong();
    long length = in.readLong();
    int chunk = in.readInt();
    int segment = in.readInt();
    int rows = in.readUnsignedByte();
    check(rows >= 1 && rows <= MAX_ROWS, "bad row count " + rows);
    byte[] coefficients = new byte[rows];
    in.readFully(coefficients);
    int n = in.readUnsignedByte();
    check(n <= MAX_INPUTS, "too many inputs: " + n);
    byte[][] tags = new byte[n][16];
    for (byte[] t : tags) {
      in.readFully(t);
    }
    String host = readText(in, "output host");
    // an address, never a name: a participant resolves nothing a peer chose
    check(PeerNetworks.isLiteral(host), "output host '" + LogLimiter.escape(host, 64)
        + "' is not an IP address");
    int port = in.readInt();
    check(port > 0 && port < 65536, "bad output port " + port);
    byte[] outTag = new byte[16];
    in.readFully(outTag);
    int t = in.readUnsignedByte();
    check(t < InecEngine.Transport.values().length, "bad transport " + t);
    InetAddress output = InetAddress.getByName(host);
    // one spelling per address, the one write() uses ("0:0:0:0:0:0:0:1", not "::1")
    check(output.getHostAddress().equals(host), "output host '" + host + "' is not written "
        + "as " + output.getHostAddress());
    return new JoinRequest(task, block, token, unitLength, offset, length, chunk, segment,
        coefficients, tags, new InetSocketAddress(output, port), outTag,
        InecEngine.Transport.values()[t], in.readInt());
  }

  /**
   * A string field: printable text only. (Beyond logs and messages, a control character would
   * make a second encoding of the same join: DataInput reads a raw NUL that DataOutput writes
   * as two bytes; found by JoinRequestFuzzTest.)
   */
  private static String readText(DataInput in, String what) throws IOException {
    String s = in.readUTF();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (LogLimiter.isControl(c)) {
        throw new IOException("bad join request: " + what + " has control character \\x"
            + String.format("%02x", (int) c));
      }
    }
    return s;
  }
}
