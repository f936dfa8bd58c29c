package io.netec.hdfs.client;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.inecroute.InecEngine;
import io.netec.hdfs.inecroute.InecNode;
import io.netec.hdfs.inecroute.InecRepair;
import io.netec.hdfs.switchroute.SwitchClient;
import io.netec.hdfs.switchroute.SwitchPlan;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.hdfs.BlockReader;
import org.apache.hadoop.hdfs.DFSClient;
import org.apache.hadoop.hdfs.client.impl.BlockReaderFactory;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedBlocks;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.server.datanode.CachingStrategy;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a complete NETEC file. For each block group range it reads the data units' cells from
 * their DataNodes (checksums verified); when a unit cannot be read, the routes in order rebuild
 * that unit's range from k survivors — the switch, or an INEC repair graph whose root is this
 * client's engine — and the client takes in one stream per missing unit instead of k (with
 * the chain or the tree). If every route declines or fails, the range is read through Hadoop's
 * own striped stream, which decodes locally: the bytes returned are always the file's. Reads of
 * one stream are serialized (they share the fetched stripes); open one stream per reading
 * thread.
 */
final class NetecStripedInputStream extends FSInputStream implements ByteBufferReadable {
  private static final Logger LOG = LoggerFactory.getLogger(NetecStripedInputStream.class);

  private final DFSClient client;
  private final String src;
  private final LocatedBlocks blocks;
  private final ErasureCodingPolicy policy;
  private final FSDataInputStream hadoop;
  private final Routes routes;
  private final Configuration conf;
  private final int payload;
  private final int timeoutMs;
  private long pos;
  private boolean closed;
  /** DataNodes that failed a read: never tried again by this stream (as DFSInputStream does). */
  private final Set<DatanodeInfo> deadNodes = ConcurrentHashMap.newKeySet();
  /** The last range of data units fetched (whole stripes), serving the reads that follow. */
  private Fetched fetched;

  /** Data units' bytes [unitStart, unitStart + length) of one group. */
  private static final class Fetched {
    final long groupStart;
    final long s0;
    final long s1;
    final byte[][] unit;

    Fetched(long groupStart, long s0, long s1, byte[][] unit) {
      this.groupStart = groupStart;
      this.s0 = s0;
      this.s1 = s1;
      this.unit = unit;
    }
  }

  /** The client's routes for rebuilding units, from netec.route.order. */
  static final class Routes {
    final List<String> order = new ArrayList<>();
    final InetSocketAddress control; // the switch's, or null
    final InecRepair.Settings inec;  // or null

    private Routes(InetSocketAddress control, InecRepair.Settings inec) {
      this.control = control;
      this.inec = inec;
    }

    /** switch (when netec.switch.address is set) and inec, in netec.route.order's order. */
    static Routes fromConf(Configuration conf) {
      String addr = conf.getTrimmed(NetecConfigKeys.SWITCH_ADDRESS);
      InetSocketAddress control = addr == null || addr.isEmpty() ? null
          : NetUtils.createSocketAddr(addr, -1, NetecConfigKeys.SWITCH_ADDRESS);
      List<String> names = new ArrayList<>();
      for (String n : conf.getTrimmedStrings(NetecConfigKeys.ROUTE_ORDER,
          NetecConfigKeys.ROUTE_ORDER_DEFAULT)) {
        names.add(n.toLowerCase(java.util.Locale.ROOT));
      }
      Routes r = new Routes(control,
          names.contains("inec") ? InecRepair.Settings.fromConf(conf) : null);
      for (String n : names) {
        if ((n.equals("switch") && control != null) || n.equals("inec")) {
          r.order.add(n);
        }
      }
      return r;
    }

    boolean isEmpty() {
      return order.isEmpty();
    }
  }

  /** Bytes of stripes fetched at once, so small sequential reads share one fetch. */
  static final long READ_AHEAD_BYTES = 4L << 20;

  NetecStripedInputStream(DFSClient client, String src, LocatedBlocks blocks,
      FSDataInputStream hadoop, Routes routes, Configuration conf) {
    this.client = client;
    this.src = src;
    this.blocks = blocks;
    this.policy = blocks.getErasureCodingPolicy();
    this.hadoop = hadoop;
    this.routes = routes;
    this.conf = conf;
    this.payload = conf.getInt(NetecConfigKeys.SWITCH_PAYLOAD,
        NetecConfigKeys.SWITCH_PAYLOAD_DEFAULT);
    this.timeoutMs = conf.getInt(NetecConfigKeys.SWITCH_TIMEOUT_MS,
        NetecConfigKeys.SWITCH_TIMEOUT_MS_DEFAULT);
  }

  // ---- FSInputStream -------------------------------------------------------------------------

  @Override
  public synchronized int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) <= 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    checkOpen();
    if (len == 0) {
      return 0;
    }
    int n = read(pos, b, off, len);
    if (n > 0) {
      pos += n;
    }
    return n;
  }

  @Override
  public synchronized int read(ByteBuffer buf) throws IOException {
    byte[] tmp = new byte[Math.min(buf.remaining(), 4 * 1024 * 1024)];
    int n = read(tmp, 0, tmp.length);
    if (n > 0) {
      buf.put(tmp, 0, n);
    }
    return n;
  }

  /** Positional read; does not move the stream's position. */
  @Override
  public int read(long position, byte[] buffer, int offset, int length) throws IOException {
    checkOpen();
    long fileLength = blocks.getFileLength();
    if (position < 0 || offset < 0 || length < 0 || offset + length > buffer.length) {
      throw new IndexOutOfBoundsException("position " + position + " offset " + offset
          + " length " + length);
    }
    if (position >= fileLength) {
      return -1;
    }
    int n = (int) Math.min(length, fileLength - position);
    int done = 0;
    while (done < n) {
      LocatedStripedBlock g = groupAt(position + done);
      long inGroup = position + done - g.getStartOffset();
      int chunk = (int) Math.min(n - done, g.getBlockSize() - inGroup);
      readGroup(g, inGroup, buffer, offset + done, chunk);
      done += chunk;
    }
    return n;
  }

  @Override
  public synchronized void seek(long target) throws IOException {
    checkOpen();
    if (target < 0 || target > blocks.getFileLength()) {
      throw new EOFException("cannot seek to " + target + " in " + src + " of "
          + blocks.getFileLength() + " bytes");
    }
    pos = target;
  }

  @Override
  public synchronized long getPos() {
    return pos;
  }

  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public synchronized int available() throws IOException {
    checkOpen();
    return (int) Math.min(Integer.MAX_VALUE, blocks.getFileLength() - pos);
  }

  @Override
  public synchronized void close() throws IOException {
    if (!closed) {
      closed = true;
      hadoop.close();
    }
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("stream of " + src + " is closed");
    }
  }

  private LocatedStripedBlock groupAt(long offset) throws IOException {
    for (LocatedBlock lb : blocks.getLocatedBlocks()) {
      if (offset >= lb.getStartOffset() && offset < lb.getStartOffset() + lb.getBlockSize()) {
        return (LocatedStripedBlock) lb;
      }
    }
    throw new IOException("no block group of " + src + " holds offset " + offset);
  }

  // ---- one block group ------------------------------------------------------------------------

  /**
   * Fills buf[off, off+n) with the group's logical bytes [start, start+n) from the data units'
   * cells of the stripes covered (fetched whole, with read-ahead, and kept for the next read);
   * units that cannot be read are rebuilt through the switch; failing that, the range is read
   * through Hadoop's stream.
   */
  private synchronized void readGroup(LocatedStripedBlock g, long start, byte[] buf, int off,
      int n) throws IOException {
    int k = policy.getNumDataUnits();
    int cell = policy.getCellSize();
    long stripeBytes = (long) k * cell;
    long s0 = start / stripeBytes;
    long s1 = (start + n - 1) / stripeBytes;
    Fetched f = fetched;
    if (f == null || f.groupStart != g.getStartOffset() || f.s0 > s0 || f.s1 < s1) {
      long last = (g.getBlockSize() - 1) / stripeBytes;
      long ahead = Math.max(1, READ_AHEAD_BYTES / stripeBytes);
      f = fetch(g, s0, Math.min(last, Math.max(s1, s0 + ahead - 1)));
      if (f == null) {
        ClientReadCounters.NATIVE.increment();
        hadoop.readFully(g.getStartOffset() + start, buf, off, n);
        return;
      }
      fetched = f;
    }
    // Logical byte x of the group is in stripe x / (k*cell), unit (x % (k*cell)) / cell.
    long unitStart = f.s0 * cell;
    long x = start;
    int at = off;
    while (x < start + n) {
      long stripe = x / stripeBytes;
      int i = (int) ((x % stripeBytes) / cell);
      int inCell = (int) (x % cell);
      int take = (int) Math.min(cell - inCell, start + n - x);
      System.arraycopy(f.unit[i], (int) (stripe * cell + inCell - unitStart), buf, at, take);
      x += take;
      at += take;
    }
  }

  /** Data units' cells of stripes s0..s1, rebuilt through a route where needed; or null. */
  private Fetched fetch(LocatedStripedBlock g, long s0, long s1) {
    int k = policy.getNumDataUnits();
    int cell = policy.getCellSize();
    long unitStart = s0 * cell;
    long unitEnd = (s1 + 1) * cell;
    byte[][] unit = new byte[k][];
    List<Integer> failed = new ArrayList<>();
    List<Integer> good = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      long len = Math.max(0, Math.min(unitLength(g, i), unitEnd) - unitStart);
      unit[i] = new byte[(int) len];
      if (len > 0) {
        if (readUnit(g, i, unitStart, unit[i])) {
          good.add(i);
        } else {
          failed.add(i);
        }
      }
    }
    if (failed.isEmpty()) {
      ClientReadCounters.HEALTHY.increment();
    } else if (!rebuild(g, failed, good, unitStart, unit)) {
      return null;
    }
    return new Fetched(g.getStartOffset(), s0, s1, unit);
  }

  /** The routes in order; true when one rebuilt the failed units into unit[]. */
  private boolean rebuild(LocatedStripedBlock g, List<Integer> failed, List<Integer> good,
      long unitStart, byte[][] unit) {
    List<Integer> survivors = null;
    int[] erased = failed.stream().mapToInt(Integer::intValue).toArray();
    for (String route : routes.order) {
      if (survivors == null) {
        survivors = survivors(g, failed, good);
      }
      if (route.equals("switch") && rebuildThroughSwitch(g, erased, survivors, unitStart, unit)) {
        ClientReadCounters.SWITCH.increment();
        return true;
      }
      if (route.equals("inec") && rebuildThroughInec(g, erased, survivors, unitStart, unit)) {
        ClientReadCounters.INEC.increment();
        return true;
      }
    }
    return false;
  }

  /**
   * Survivors a route can count on: data units just read, then other units whose DataNode
   * answers a one-byte probe (a dead one would fail the whole repair).
   */
  private List<Integer> survivors(LocatedStripedBlock g, List<Integer> failed,
      List<Integer> good) {
    int k = policy.getNumDataUnits();
    int m = policy.getNumParityUnits();
    int needed = k;
    for (int i = 0; i < k + m; i++) {
      needed -= unitLength(g, i) == 0 && !failed.contains(i) ? 1 : 0;
    }
    List<Integer> survivors = new ArrayList<>(good);
    for (int i = k; i < k + m && survivors.size() < needed; i++) {
      if (unitLength(g, i) > 0 && readUnit(g, i, 0, new byte[1])) {
        survivors.add(i);
      }
    }
    return survivors;
  }

  /**
   * Rebuilds the failed units' bytes [unitStart, unitStart + their length) through an INEC
   * repair graph rooted at this client into unit[]; false when it declines or fails (unit[]
   * may then hold partial bytes of the failed units, which the next route overwrites).
   */
  private boolean rebuildThroughInec(LocatedStripedBlock g, int[] erased,
      List<Integer> survivors, long unitStart, byte[][] unit) {
    int k = policy.getNumDataUnits();
    int m = policy.getNumParityUnits();
    long[] unitLength = unitLengths(g);
    long length = 0;
    for (int e : erased) {
      length = Math.max(length, unit[e].length);
    }
    try {
      InecEngine engine = InecNode.client(conf);
      List<InecRepair.Source> sources = new ArrayList<>();
      for (int i : survivors) {
        int j = slot(g, i);
        DatanodeInfo dn = g.getLocations()[j];
        sources.add(new InecRepair.Source(i,
            ServiceDirectory.resolve(ServiceDirectory.Service.INEC_CONTROL, dn, conf),
            ServiceDirectory.resolve(ServiceDirectory.Service.INEC_DATA, dn, conf),
            StripedBlockUtil.constructInternalBlock(g.getBlock(), policy, i), token(g, j)));
      }
      InecRepair.Result res = InecRepair.run(engine, routes.inec, src + " " + g.getBlock(), k,
          m, unitLength, erased, sources, unitStart, length, (row, data, off, n) -> {
            byte[] target = unit[erased[row]];
            int want = (int) Math.max(0, Math.min(n, target.length - off));
            data.get(target, (int) off, want);
          });
      ClientReadCounters.INEC_BYTES_IN.add(res.bytesReceived);
      return true;
    } catch (IOException e) {
      LOG.info("{}: INEC did not rebuild units {} of {} ({})", src, Arrays.toString(erased),
          g.getBlock(), e.getMessage());
      return false;
    }
  }

  private long unitLength(LocatedStripedBlock g, int index) {
    return StripedBlockUtil.getInternalBlockLength(g.getBlockSize(), policy, index);
  }

  private long[] unitLengths(LocatedStripedBlock g) {
    long[] a = new long[policy.getNumDataUnits() + policy.getNumParityUnits()];
    for (int i = 0; i < a.length; i++) {
      a[i] = unitLength(g, i);
    }
    return a;
  }

  /** Where internal block {@code index} of the group is listed, or -1. */
  private static int slot(LocatedStripedBlock g, int index) {
    byte[] idx = g.getBlockIndices();
    for (int j = 0; j < idx.length; j++) {
      if (idx[j] == index) {
        return j;
      }
    }
    return -1;
  }

  /** Reads unit bytes [from, from + out.length); false if its DataNode cannot serve them. */
  private boolean readUnit(LocatedStripedBlock g, int index, long from, byte[] out) {
    int j = slot(g, index);
    if (j < 0) {
      return false;
    }
    DatanodeInfo dn = g.getLocations()[j];
    if (deadNodes.contains(dn)) {
      return false;
    }
    ExtendedBlock block = StripedBlockUtil.constructInternalBlock(g.getBlock(), policy, index);
    BlockReader reader = null;
    try {
      reader = new BlockReaderFactory(client.getConf())
          .setInetSocketAddress(NetUtils.createSocketAddr(dn.getXferAddr(
              client.getConf().isConnectToDnViaHostname())))
          .setRemotePeerFactory(client).setDatanodeInfo(dn)
          .setStorageType(g.getStorageTypes()[j]).setFileName(src).setBlock(block)
          .setBlockToken(g.getBlockTokens()[j]).setStartOffset(from)
          .setVerifyChecksum(true).setClientName(client.getClientName())
          .setLength(out.length).setCachingStrategy(CachingStrategy.newDefaultStrategy())
          .setAllowShortCircuitLocalReads(false).setClientCacheContext(client.getClientContext())
          .setUserGroupInformation(UserGroupInformation.getCurrentUser())
          .setConfiguration(conf).build();
      int got = 0;
      while (got < out.length) {
        int r = reader.read(out, got, out.length - got);
        if (r < 0) {
          throw new EOFException(block + " ended at " + (from + got));
        }
        got += r;
      }
      return true;
    } catch (IOException e) {
      deadNodes.add(dn);
      LOG.info("{}: unit {} of {} unreadable on {}, not tried again by this stream: {}", src,
          index, g.getBlock(), dn, e.toString());
      return false;
    } finally {
      IOUtils.closeStream(reader);
    }
  }

  /**
   * Rebuilds the failed units' bytes [unitStart, unitStart + their length) through the switch
   * into unit[]; false (nothing written to unit[]) when the switch declines or fails.
   */
  private boolean rebuildThroughSwitch(LocatedStripedBlock g, int[] erased,
      List<Integer> survivors, long unitStart, byte[][] unit) {
    int k = policy.getNumDataUnits();
    int m = policy.getNumParityUnits();
    long[] unitLength = unitLengths(g);
    long length = 0;
    long[] rowLength = new long[erased.length];
    for (int r = 0; r < erased.length; r++) {
      rowLength[r] = unit[erased[r]].length;
      length = Math.max(length, rowLength[r]);
    }
    List<SwitchPlan.Available> available = new ArrayList<>();
    for (int i : survivors) {
      int j = slot(g, i);
      available.add(new SwitchPlan.Available(i, ServiceDirectory.hostPort(
          ServiceDirectory.Service.SWITCH_AGENT, g.getLocations()[j], conf),
          StripedBlockUtil.constructInternalBlock(g.getBlock(), policy, i).toString(),
          token(g, j)));
    }
    try {
      SetupRequest setup = SwitchPlan.plan(g.getBlock().toString(), k, m, unitLength, erased,
          available, unitStart, length, payload, timeoutMs);
      SwitchClient.Result res = SwitchClient.rebuild(routes.control, setup, rowLength, () -> {
        SwitchClient.Sink[] sinks = new SwitchClient.Sink[erased.length];
        for (int r = 0; r < erased.length; r++) {
          byte[] target = unit[erased[r]];
          int[] filled = {0};
          sinks[r] = (b, o, l) -> {
            System.arraycopy(b, o, target, filled[0], l);
            filled[0] += l;
          };
        }
        return sinks;
      });
      ClientReadCounters.SWITCH_BYTES_IN.add(res.bytesReceived);
      return true;
    } catch (IOException e) {
      LOG.info("{}: switch did not rebuild units {} of {} ({})", src, Arrays.toString(erased),
          g.getBlock(), e.getMessage());
      return false;
    }
  }

  /** The READ token of the group's j-th location, as survivors check it ("" if none). */
  private static String token(LocatedStripedBlock g, int j) {
    try {
      return g.getBlockTokens()[j].encodeToUrlString();
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public String toString() {
    return "NetecStripedInputStream{" + src + ", pos " + pos + "}";
  }
}
