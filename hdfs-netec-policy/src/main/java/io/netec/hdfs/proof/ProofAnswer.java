package io.netec.hdfs.proof;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.Hex;
import io.netec.hdfs.switchroute.wire.JsonLimits;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import java.io.IOException;
import org.apache.hadoop.util.DataChecksum;

/**
 * A proof service's answers to one {@link ProofRequest}, two frames in order: first the
 * replica's checksum (type and bytes per checksum, from its meta file: what a rebuilt replica
 * of the group must carry), then the fingerprint of the range. Either may instead be a refusal
 * or failure naming its cause and whether the replica was found corrupt.
 */
public final class ProofAnswer {
  /** Why a service could not answer. */
  public enum Fault {
    /** The request was refused (token, length, a busy DataNode): the replica may be fine. */
    REFUSED,
    /** The replica failed its checksums: it is corrupt (and reported as such there). */
    CORRUPT,
    /** Reading it failed otherwise (a disk error). */
    IO
  }

  private final DataChecksum checksum;
  private final byte[] fingerprint;
  private final long bytes;
  private final String reason;
  private final Fault fault;

  private ProofAnswer(DataChecksum checksum, byte[] fingerprint, long bytes, String reason,
      Fault fault) {
    this.checksum = checksum;
    this.fingerprint = fingerprint;
    this.bytes = bytes;
    this.reason = reason;
    this.fault = fault;
  }

  public static ProofAnswer checksum(DataChecksum c) {
    return new ProofAnswer(c, null, 0, null, null);
  }

  /** @param bytes bytes of the block read and verified to compute it */
  public static ProofAnswer fingerprint(byte[] fp, long bytes) {
    return new ProofAnswer(null, fp.clone(), bytes, null, null);
  }

  public static ProofAnswer failure(Fault fault, String reason) {
    return new ProofAnswer(null, null, 0, reason, fault);
  }

  public boolean ok() {
    return reason == null;
  }

  /** The replica's checksum (first answer), else null. */
  public DataChecksum checksum() {
    return checksum;
  }

  /** The fingerprint (second answer), else null. */
  public byte[] fingerprint() {
    return fingerprint == null ? null : fingerprint.clone();
  }

  public long bytes() {
    return bytes;
  }

  public String reason() {
    return reason;
  }

  public Fault fault() {
    return fault;
  }

  public byte[] toJson() {
    ObjectNode o = JsonLimits.mapper().createObjectNode();
    o.put("ok", ok());
    if (!ok()) {
      o.put("reason", reason).put("fault", fault.name().toLowerCase(java.util.Locale.ROOT));
    } else if (checksum != null) {
      o.put("checksum", checksum.getChecksumType().name())
          .put("bytesPerChecksum", checksum.getBytesPerChecksum());
    } else {
      o.put("fingerprint", Hex.encode(fingerprint)).put("bytes", bytes);
    }
    try {
      return JsonLimits.mapper().writeValueAsBytes(o);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static ProofAnswer fromJson(byte[] utf8) throws ProtocolException {
    JsonNode o = JsonLimits.parse(utf8, ControlFrames.MAX_FRAME);
    if (o == null || !o.isObject() || !o.path("ok").isBoolean()) {
      throw new ProtocolException("ok: missing or not a boolean");
    }
    if (!o.get("ok").booleanValue()) {
      Fault f;
      try {
        f = Fault.valueOf(JsonLimits.text(o, "fault").toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new ProtocolException("fault: not refused, corrupt or io");
      }
      return failure(f, JsonLimits.text(o, "reason"));
    }
    if (o.has("checksum")) {
      DataChecksum.Type type;
      try {
        type = DataChecksum.Type.valueOf(JsonLimits.text(o, "checksum"));
      } catch (IllegalArgumentException e) {
        type = null;
      }
      if (type != DataChecksum.Type.NULL && type != DataChecksum.Type.CRC32
          && type != DataChecksum.Type.CRC32C) {
        throw new ProtocolException("checksum: not NULL, CRC32 or CRC32C");
      }
      int bpc = JsonLimits.intIn(o, "bytesPerChecksum", 1, 64 << 20);
      DataChecksum c = DataChecksum.newDataChecksum(type, bpc);
      if (c == null) {
        throw new ProtocolException("checksum: " + type + " cannot be used");
      }
      return checksum(c);
    }
    return fingerprint(Hex.decode(JsonLimits.text(o, "fingerprint"), Fingerprint.BYTES,
        "fingerprint"), JsonLimits.longIn(o, "bytes", 0, ProofRequest.MAX_LENGTH));
  }

  @Override
  public String toString() {
    return new String(toJson(), java.nio.charset.StandardCharsets.UTF_8);
  }
}
