package io.netec.hdfs.client;

import io.netec.hdfs.route.ReconstructionRouter;
import io.netec.hdfs.route.RepairRequest;
import io.netec.hdfs.route.RepairSink;
import io.netec.hdfs.route.RowDigests;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 * their DataNodes (checksums verified); when a unit cannot be read, the same router a DataNode
 * uses rebuilds that unit's range from k survivors through its routes in order — the switch,
 * or an INEC repair graph whose root is this client's engine, so that the client takes in one
 * stream per missing unit instead of k — and last through Hadoop's own striped stream, which
 * decodes locally: the bytes returned are always the file's. Reads of
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
  private final ReconstructionRouter router;
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

  /** Bytes of stripes fetched at once, so small sequential reads share one fetch. */
  static final long READ_AHEAD_BYTES = 4L << 20;

  NetecStripedInputStream(DFSClient client, String src, LocatedBlocks blocks,
      FSDataInputStream hadoop, ReconstructionRouter router) {
    this.client = client;
    this.src = src;
    this.blocks = blocks;
    this.policy = blocks.getErasureCodingPolicy();
    this.hadoop = hadoop;
    this.router = router;
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
   * units that cannot be read are rebuilt by the router.
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

  /** Data units' cells of stripes s0..s1, rebuilt by the router where needed. */
  private Fetched fetch(LocatedStripedBlock g, long s0, long s1) throws IOException {
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
    } else {
      rebuild(g, failed, good, unitStart, unit);
    }
    return new Fetched(g.getStartOffset(), s0, s1, unit);
  }

  /**
   * Rebuilds the failed units' bytes [unitStart, unitStart + their length) into unit[] through
   * the router: its routes in order, the same as a DataNode's, then Hadoop's stream.
   */
  private void rebuild(LocatedStripedBlock g, List<Integer> failed, List<Integer> good,
      long unitStart, byte[][] unit) throws IOException {
    int[] erased = failed.stream().mapToInt(Integer::intValue).toArray();
    long length = 0;
    for (int e : erased) {
      length = Math.max(length, unit[e].length);
    }
    List<RepairRequest.Survivor> survivors = new ArrayList<>();
    if (router.hasNetworkRoutes()) {
      for (int i : survivors(g, failed, good)) {
        int j = slot(g, i);
        survivors.add(new RepairRequest.Survivor(i, g.getLocations()[j],
            StripedBlockUtil.constructInternalBlock(g.getBlock(), policy, i), token(g, j)));
      }
    }
    RepairRequest req = new RepairRequest("Read of " + src + " " + g.getBlock().getLocalBlock()
        + " units " + failed + " from " + unitStart, g.getBlock(), g.getBlockSize(), policy,
        erased, unitStart, length, survivors);
    ReconstructionRouter.Outcome o = router.repair(req, new UnitSink(g, req, unit));
    if (o.route == null) {
      throw new IOException("cannot read " + src + ": units " + failed + " of "
          + g.getBlock() + " were rebuilt by no route (" + o.others + ")");
    }
    ClientReadCounters.served(o.route, o.bytesIn);
  }

  /**
   * The client's sink: row r fills unit[erased[r]]; a sealed row's bytes, as they will be
   * returned, go to the attempt's proof; the native route reads the rows' cells through
   * Hadoop's striped stream, which decodes them from the other units.
   */
  private final class UnitSink implements RepairSink {
    private final LocatedStripedBlock g;
    private final RepairRequest req;
    private final byte[][] unit;
    private final int[] erased;
    private final int[] filled;
    private RowDigests digests;

    UnitSink(LocatedStripedBlock g, RepairRequest req, byte[][] unit) {
      this.g = g;
      this.req = req;
      this.unit = unit;
      this.erased = req.erased();
      this.filled = new int[erased.length];
    }

    @Override
    public void begin(RowDigests d) {
      this.digests = d;
    }

    @Override
    public void write(int row, ByteBuffer data) throws IOException {
      byte[] target = unit[erased[row]];
      if (data.remaining() > target.length - filled[row]) {
        throw new IOException("route delivered more than unit " + erased[row] + "'s "
            + target.length + " bytes");
      }
      int n = data.remaining();
      data.get(target, filled[row], n);
      filled[row] += n;
    }

    @Override
    public void repairNatively(int[] rows) throws IOException {
      int k = policy.getNumDataUnits();
      long cell = policy.getCellSize();
      for (int r : rows) {
        byte[] target = unit[erased[r]];
        // Unit byte u of data unit i is logical byte (u / cell) * k * cell + i * cell + u % cell.
        int at = 0;
        while (at < target.length) {
          long u = req.offset() + at;
          int n = (int) Math.min(target.length - at, cell - u % cell);
          long logical = (u / cell) * k * cell + erased[r] * cell + u % cell;
          hadoop.readFully(g.getStartOffset() + logical, target, at, n);
          at += n;
        }
        filled[r] = target.length;
      }
    }

    @Override
    public void seal(int row) throws IOException {
      if (filled[row] != unit[erased[row]].length) {
        throw new IOException("route delivered " + filled[row] + " of unit " + erased[row]
            + "'s " + unit[erased[row]].length + " bytes");
      }
      if (digests != null) {
        digests.update(row, 0, ByteBuffer.wrap(unit[erased[row]]));
      }
    }

    @Override
    public long keep(int row) {
      return filled[row];
    }

    @Override
    public void drop(int row) {
      filled[row] = 0;
    }
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

  private long unitLength(LocatedStripedBlock g, int index) {
    return StripedBlockUtil.getInternalBlockLength(g.getBlockSize(), policy, index);
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
          .setConfiguration(router.context().conf()).build();
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
