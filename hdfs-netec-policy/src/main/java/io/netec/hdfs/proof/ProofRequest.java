package io.netec.hdfs.proof;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.Hex;
import io.netec.hdfs.switchroute.wire.JsonLimits;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import java.io.IOException;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;

/**
 * What a verifier asks a survivor's proof service (docs/protocol.md, "Proofs"): the
 * {@link Fingerprint} of bytes [offset, offset + length) of a local internal block (zeros past
 * {@code unitLength}, the unit's length in its group), under the verifier's key. The READ token
 * proves the verifier's right to the block. {@link #fromJson} checks every field and names the
 * one at fault.
 */
public final class ProofRequest {
  public static final int VERSION = 1;
  /** Longest range one request covers (an internal block is far smaller). */
  public static final long MAX_LENGTH = 1L << 40;

  private final ExtendedBlock block;
  private final String token;
  private final long unitLength;
  private final long offset;
  private final long length;
  private final byte[] key;

  public ProofRequest(ExtendedBlock block, String token, long unitLength, long offset,
      long length, byte[] key) {
    if (unitLength < 0 || offset < 0 || length < 0 || length > MAX_LENGTH
        || key.length != Fingerprint.KEY_BYTES) {
      throw new IllegalArgumentException("bad proof request: unit " + unitLength + ", range "
          + offset + "+" + length + ", key of " + key.length + " bytes");
    }
    this.block = block;
    this.token = token == null ? "" : token;
    this.unitLength = unitLength;
    this.offset = offset;
    this.length = length;
    this.key = key.clone();
  }

  public ExtendedBlock block() {
    return block;
  }

  public String token() {
    return token;
  }

  /** The unit's length in its group: bytes past it are zeros, not read. */
  public long unitLength() {
    return unitLength;
  }

  public long offset() {
    return offset;
  }

  public long length() {
    return length;
  }

  public byte[] key() {
    return key.clone();
  }

  /** Bytes of the block the service reads: the part of the range inside the unit. */
  public long bytesToRead() {
    return Math.max(0, Math.min(length, unitLength - offset));
  }

  public byte[] toJson() {
    ObjectNode o = JsonLimits.mapper().createObjectNode();
    o.put("op", "fingerprint").put("version", VERSION).put("block", block.toString())
        .put("token", token).put("unitLength", unitLength).put("offset", offset)
        .put("length", length).put("key", Hex.encode(key));
    try {
      return JsonLimits.mapper().writeValueAsBytes(o);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static ProofRequest fromJson(byte[] utf8) throws ProtocolException {
    JsonNode o = JsonLimits.parse(utf8, ControlFrames.MAX_FRAME);
    if (o == null || !o.isObject() || !"fingerprint".equals(o.path("op").asText(""))) {
      throw new ProtocolException("op: expected \"fingerprint\"");
    }
    if (JsonLimits.longIn(o, "version", 0, Integer.MAX_VALUE) != VERSION) {
      throw new ProtocolException("version: " + o.get("version")
          + " not supported (this side speaks " + VERSION + ")");
    }
    ExtendedBlock block = StreamRequest.parseBlock(JsonLimits.text(o, "block"));
    String token = JsonLimits.text(o, "token");
    if (token.length() > 4096 || !token.matches("[A-Za-z0-9_=.-]*")) {
      throw new ProtocolException("token: not a block-token proof (URL-safe characters and "
          + "dots) of at most 4096 characters");
    }
    byte[] key = Hex.decode(JsonLimits.text(o, "key"), Fingerprint.KEY_BYTES, "key");
    return new ProofRequest(block, token, JsonLimits.longIn(o, "unitLength", 0, MAX_LENGTH),
        JsonLimits.longIn(o, "offset", 0, MAX_LENGTH),
        JsonLimits.longIn(o, "length", 0, MAX_LENGTH), key);
  }
}
