package io.netec.hdfs.cluster;

import io.netec.hdfs.route.ReconstructionRoute;
import io.netec.hdfs.route.RepairRequest;
import io.netec.hdfs.route.RepairSink;
import io.netec.hdfs.route.RouteContext;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.RouteFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.io.erasurecode.CodecUtil;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.RawErasureDecoder;

/**
 * A third-party route as an operator would add one: its factory is listed in this test
 * classpath's META-INF/services/io.netec.hdfs.route.RouteFactory, it is named "scripted" in
 * netec.route.order, and it reads its own key netec.scripted.tag. Its mode is set by the
 * test: DECODE rebuilds for real (survivors' bytes of the range read through the DataNodes'
 * datasets, decoded with the netec codec, written into the sink) on a DataNode and on a
 * client alike; JUNK does the same but changes one byte of every row before writing it (the
 * right length of wrong bytes: a buggy route); FAIL_MID_WRITE writes half a row of junk and then
 * fails, as a route dying mid-task would; DECODE_ONCE_HEDGED waits until the client's read
 * is hedged (Hadoop's stream started beside it) and then decodes: a route that answers past
 * its budget, but before the hedge.
 */
public final class ScriptedRoute implements ReconstructionRoute {
  public enum Mode { DECODE, JUNK, FAIL_MID_WRITE, DECLINE, THROW_ERROR, STALL, DECODE_ONCE_HEDGED }

  static volatile Mode mode = Mode.DECLINE;
  static volatile EcTestCluster cluster;
  /** The tag each route instance read from netec.scripted.tag. */
  static final List<String> TAGS = new CopyOnWriteArrayList<>();
  /** Requests served on DataNodes and on clients. */
  static final AtomicLong SERVED_ON_DATANODES = new AtomicLong();
  static final AtomicLong SERVED_ON_CLIENTS = new AtomicLong();
  /** DECODE_ONCE_HEDGED decodes once ClientReadCounters.hedged() is past this. */
  static volatile long hedgedBefore;
  /** The no-progress limit the last STALL request carried. */
  static volatile int lastStallLimitMs;
  /** Modes the next requests take, one each, before {@link #mode} again. */
  static final java.util.Queue<Mode> NEXT = new java.util.concurrent.ConcurrentLinkedQueue<>();
  /** Run after each request this route served (null: nothing). */
  static volatile Runnable afterServe;

  /** Found by ServiceLoader. */
  public static final class Factory implements RouteFactory {
    @Override
    public String name() {
      return "scripted";
    }

    @Override
    public ReconstructionRoute create(RouteContext ctx) {
      TAGS.add(ctx.conf().get("netec.scripted.tag", ""));
      return new ScriptedRoute(ctx);
    }
  }

  private final RouteContext ctx;

  ScriptedRoute(RouteContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public String name() {
    return "scripted";
  }

  @Override
  public long repair(RepairRequest req, RepairSink sink) throws IOException {
    Mode next = NEXT.poll();
    long in = serve(next == null ? mode : next, req, sink);
    Runnable after = afterServe;
    if (after != null) {
      after.run();
    }
    return in;
  }

  private long serve(Mode mode, RepairRequest req, RepairSink sink) throws IOException {
    switch (mode) {
      case DECODE:
      case JUNK:
        long in = decode(req, sink, mode == Mode.JUNK);
        (ctx.dataNode() == null ? SERVED_ON_CLIENTS : SERVED_ON_DATANODES).incrementAndGet();
        return in;
      case FAIL_MID_WRITE: {
        byte[] junk = new byte[(int) (req.rowLength(0) / 2)];
        Arrays.fill(junk, (byte) 0x5a);
        sink.write(0, ByteBuffer.wrap(junk));
        throw new IOException("scripted failure after " + junk.length + " bytes");
      }
      case DECODE_ONCE_HEDGED: {
        long hedged = hedgedBefore;
        try { // until the client hedged this read to Hadoop's stream, or a minute passed
          io.netec.hdfs.Waits.within(60_000, 5,
              () -> io.netec.hdfs.client.ClientReadCounters.hedged() > hedged);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("scripted: interrupted");
        } catch (Exception e) {
          throw new IOException(e);
        }
        long taken = decode(req, sink, false);
        (ctx.dataNode() == null ? SERVED_ON_CLIENTS : SERVED_ON_DATANODES).incrementAndGet();
        return taken;
      }
      case THROW_ERROR: // a route's bug, or its jar built against another Hadoop
        throw new NoSuchMethodError("scripted: a route built against another library");
      case STALL: { // nothing arrives; the route gives up after the request's no-progress limit
        int limit = req.progressTimeoutMs(600_000);
        lastStallLimitMs = limit;
        try {
          Thread.sleep(limit);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new io.netec.hdfs.route.RouteStalledException("scripted: nothing for " + limit
            + " ms");
      }
      default:
        throw new RouteDeclinedException("scripted to decline");
    }
  }

  private long decode(RepairRequest req, RepairSink sink, boolean junk) throws IOException {
    int k = req.dataUnits();
    int m = req.parityUnits();
    int len = (int) req.length();
    byte[][] inputs = new byte[k + m][];
    int have = 0;
    long in = 0;
    for (int i = 0; i < k + m && have < k; i++) { // units that end before the range: zeros
      int unit = i;
      if (req.unitLength(i) <= req.offset()
          && Arrays.stream(req.erased()).noneMatch(e -> e == unit)) {
        inputs[i] = new byte[len];
        have++;
      }
    }
    for (RepairRequest.Survivor s : req.survivors()) {
      if (have == k || inputs[s.index] != null) {
        continue;
      }
      DataNode dn = cluster.dataNode(s.node);
      if (dn == null) {
        continue;
      }
      byte[] unit = new byte[len];
      int n = (int) Math.max(0, Math.min(len, req.unitLength(s.index) - req.offset()));
      try (InputStream is = dn.getFSDataset().getBlockInputStream(s.block, req.offset())) {
        IOUtils.readFully(is, unit, 0, n);
      }
      in += n;
      inputs[s.index] = unit;
      have++;
    }
    if (have < k) {
      throw new IOException("only " + have + " survivors readable");
    }
    int[] erased = req.erased();
    byte[][] outputs = new byte[erased.length][len];
    RawErasureDecoder decoder = CodecUtil.createRawDecoder(ctx.conf(),
        req.policy().getCodecName(), new ErasureCoderOptions(k, m));
    decoder.decode(inputs, erased, outputs);
    for (int r = 0; r < erased.length; r++) {
      if (junk) {
        outputs[r][(int) (req.rowLength(r) / 2)] ^= 1;
      }
      sink.write(r, ByteBuffer.wrap(outputs[r], 0, (int) req.rowLength(r)));
    }
    return in;
  }
}
