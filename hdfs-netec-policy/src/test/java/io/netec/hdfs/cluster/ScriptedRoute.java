package io.netec.hdfs.cluster;

import io.netec.hdfs.route.InternalBlockWriter;
import io.netec.hdfs.route.ReconstructionRoute;
import io.netec.hdfs.route.ReconstructionTask;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteDeclinedException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.io.erasurecode.CodecUtil;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureDecoder;

/**
 * A test route loaded by the plugin through netec.route.class.scripted. Its mode is set by the
 * test: DECODE rebuilds for real (survivors read through the DataNodes' datasets, decoded with
 * the netec codec, written with {@link InternalBlockWriter}); FAIL_MID_WRITE streams half a
 * block of junk to the target and then fails, as a route dying mid-task would.
 */
public final class ScriptedRoute implements ReconstructionRoute {
  public enum Mode { DECODE, FAIL_MID_WRITE, DECLINE }

  static volatile Mode mode = Mode.DECLINE;
  static volatile EcTestCluster cluster;
  /** Replicas found on a target right after an abort: must stay empty. */
  static final List<String> LEFTOVERS = new CopyOnWriteArrayList<>();

  private final RouteContext ctx;

  public ScriptedRoute(RouteContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public String name() {
    return "scripted";
  }

  @Override
  public long reconstruct(ReconstructionTask t) throws IOException {
    switch (mode) {
      case DECODE:
        return decodeAndWrite(t);
      case FAIL_MID_WRITE: {
        InternalBlockWriter w = InternalBlockWriter.open(ctx.dataNode(), t, 0);
        byte[] junk = new byte[(int) (t.internalBlockLength(t.erasedIndex(0)) / 2)];
        Arrays.fill(junk, (byte) 0x5a);
        w.write(junk, 0, junk.length);
        w.abort();
        // abort() promises the target has dropped the partial replica when it returns
        DataNode target = cluster.dataNode(t.target(0));
        String replica = target.getFSDataset().getReplicaString(
            w.block().getBlockPoolId(), w.block().getBlockId());
        if (!replica.equals("null")) {
          LEFTOVERS.add(replica);
        }
        throw new IOException("scripted failure after " + junk.length + " bytes");
      }
      default:
        throw new RouteDeclinedException("scripted to decline");
    }
  }

  private long decodeAndWrite(ReconstructionTask t) throws IOException {
    int k = t.dataUnits();
    int m = t.parityUnits();
    int unitLen = (int) t.internalBlockLength(0); // the longest unit; shorter ones pad with 0
    byte[][] inputs = new byte[k + m][];
    byte[] live = t.liveIndices();
    DatanodeInfo[] sources = t.sources();
    int have = 0;
    for (int i = 0; i < live.length && have < k; i++) {
      DataNode dn = cluster.dataNode(sources[i]);
      if (dn == null) {
        continue;
      }
      byte[] unit = new byte[unitLen];
      int len = (int) t.internalBlockLength(live[i]);
      try (InputStream in = dn.getFSDataset().getBlockInputStream(t.internalBlock(live[i]), 0)) {
        IOUtils.readFully(in, unit, 0, len);
      }
      inputs[live[i]] = unit;
      have++;
    }
    if (have < k) {
      throw new IOException("only " + have + " survivors readable");
    }
    int[] erased = t.erasedIndices();
    byte[][] outputs = new byte[erased.length][unitLen];
    RawErasureDecoder decoder = CodecUtil.createRawDecoder(ctx.conf(), t.policy().getCodecName(),
        new ErasureCoderOptions(k, m));
    decoder.decode(inputs, erased, outputs);
    long written = 0;
    for (int s = 0; s < erased.length; s++) {
      int len = (int) t.internalBlockLength(erased[s]);
      try (InternalBlockWriter w = InternalBlockWriter.open(ctx.dataNode(), t, s)) {
        w.write(outputs[s], 0, len);
        w.finish();
      }
      written += len;
    }
    return written;
  }
}
