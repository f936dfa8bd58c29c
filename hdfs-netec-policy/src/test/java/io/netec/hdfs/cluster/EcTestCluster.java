package io.netec.hdfs.cluster;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.Waits;
import io.netec.hdfs.codec.CoderCounters;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.codec.NetecCoderFactories;
import io.netec.hdfs.datanode.NetecDataNodePlugin;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockManagerTestUtil;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.namenode.FSNamesystem;
import org.apache.hadoop.hdfs.server.namenode.NameNodeAdapter;
import org.apache.hadoop.hdfs.tools.ECAdmin;
import org.apache.hadoop.hdfs.util.StripedBlockUtil;
import org.apache.hadoop.util.ToolRunner;

/**
 * A MiniDFSCluster set up as an operator would set up a NetEC cluster (plugin on every
 * DataNode, policies added with {@code hdfs ec}), plus what the suites need to check real
 * bytes: internal block snapshots, DataNode kills, rebuild waits and router metrics.
 */
public final class EcTestCluster implements AutoCloseable {
  public static final int CELL = 1024 * 1024;
  /** Two cells per internal block, so files of a few MiB span several block groups. */
  public static final long BLOCK_SIZE = 2L * CELL;

  private final MiniDFSCluster cluster;
  private final DistributedFileSystem fs;
  private final Map<String, Long> retired = new HashMap<>();

  public EcTestCluster(Configuration conf, int dataNodes) throws IOException {
    this(conf, dataNodes, null);
  }

  /** @param racks rack of each DataNode, or null for one rack */
  public EcTestCluster(Configuration conf, int dataNodes, String[] racks) throws IOException {
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(dataNodes).racks(racks).build();
    cluster.waitActive();
    fs = cluster.getFileSystem();
  }

  /** A configuration for fast, deterministic reconstruction with the NetEC plugin loaded. */
  public static Configuration conf() {
    Configuration conf = new Configuration();
    conf.setLong(DFSConfigKeys.DFS_NAMENODE_MIN_BLOCK_SIZE_KEY, 0);
    conf.setLong(DFSConfigKeys.DFS_BLOCK_SIZE_KEY, BLOCK_SIZE);
    conf.setInt(DFSConfigKeys.DFS_HEARTBEAT_INTERVAL_KEY, 1);
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY, 1);
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_REPLICATION_MAX_STREAMS_KEY, 32);
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_REPLICATION_STREAMS_HARD_LIMIT_KEY, 64);
    conf.setBoolean(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_KEY, false);
    conf.setInt(DFSConfigKeys.DFS_NAMENODE_RECONSTRUCTION_PENDING_TIMEOUT_SEC_KEY, 5);
    conf.set(DFSConfigKeys.DFS_DATANODE_PLUGINS_KEY, NetecDataNodePlugin.class.getName());
    // Many DataNodes share this JVM: each survivor agent and INEC participant takes free
    // ports and registers them.
    conf.setInt(NetecConfigKeys.AGENT_PORT, 0);
    conf.setInt(NetecConfigKeys.INEC_PORT, 0);
    conf.setInt(NetecConfigKeys.INEC_DATA_PORT, 0);
    conf.setInt(NetecConfigKeys.PROOF_PORT, 0);
    return conf;
  }

  /**
   * {@link #conf()} for the INEC route: order inec,native, the given scheme (rs, ppr, ecpipe),
   * no-progress timeout and transport; verbs run over the test provider libinec_mockverbs.so
   * that the native build leaves next to libnetec.so's objects.
   */
  public static Configuration inecConf(String scheme, int timeoutMs, String transport) {
    Configuration conf = conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "inec,native");
    conf.set(NetecConfigKeys.INEC_SCHEME, scheme);
    conf.setInt(NetecConfigKeys.INEC_TIMEOUT_MS, timeoutMs);
    conf.set(NetecConfigKeys.INEC_TRANSPORT, transport);
    if (transport.equals("verbs")) {
      conf.set(NetecConfigKeys.INEC_VERBS_LIBRARY, mockVerbsLibrary());
    }
    return conf;
  }

  /** The NetEC settings a DataNode's plugin parsed from its configuration. */
  public static io.netec.hdfs.NetecSettings settings(DataNode dn) {
    return io.netec.hdfs.NetecSettings.parse(dn.getConf(),
        io.netec.hdfs.route.RouteRegistry.load(EcTestCluster.class.getClassLoader()).names());
  }

  /** The test verbs provider built with the native code. */
  public static String mockVerbsLibrary() {
    return System.getProperty("netec.native.build", "target/native-build")
        + "/libinec_mockverbs.so";
  }

  /**
   * {@link #conf()} for DataNodes (and clients) that use this in-process switch: route order
   * switch,native, its control address, and the given no-progress timeout.
   */
  public static Configuration switchConf(
      io.netec.hdfs.switchroute.SoftwareSwitch sw, int timeoutMs) {
    Configuration conf = conf();
    conf.set(NetecConfigKeys.ROUTE_ORDER, "switch,native");
    conf.set(NetecConfigKeys.SWITCH_ADDRESS, "127.0.0.1:" + sw.controlAddress().getPort());
    conf.setInt(NetecConfigKeys.SWITCH_TIMEOUT_MS, timeoutMs);
    return conf;
  }

  /**
   * A loopback address nothing listens on (a port just let go): a connection there is
   * refused at once, a datagram goes unanswered.
   */
  public static java.net.InetSocketAddress nobodyListens() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      return new java.net.InetSocketAddress(s.getInetAddress(), s.getLocalPort());
    }
  }

  /**
   * An address that never answers a connection, as a host that drops packets does (no reset
   * comes back: the connecting side times out, where {@link #nobodyListens} refuses at once): a
   * listening socket nobody accepts on, whose accept queue this fills, after which the kernel
   * drops every further SYN. Closing it ends the hole.
   */
  public static final class Blackhole implements AutoCloseable {
    private final java.net.ServerSocket server;
    private final List<java.net.Socket> queued = new ArrayList<>();

    public Blackhole() throws IOException {
      server = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
      for (int i = 0; i < 16; i++) {
        java.net.Socket s = new java.net.Socket();
        try {
          s.connect(address(), 200);
          queued.add(s);
        } catch (java.net.SocketTimeoutException full) {
          s.close();
          return; // the queue is full: the next SYN is dropped too
        } catch (IOException e) { // a stack that resets instead: no hole, and nothing left open
          s.close();
          close();
          throw new IOException("no blackhole at " + address() + ": " + e, e);
        }
      }
      close();
      throw new IOException("the accept queue of " + address() + " never filled: no blackhole");
    }

    public java.net.InetSocketAddress address() {
      return new java.net.InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    @Override
    public void close() throws IOException {
      for (java.net.Socket s : queued) {
        s.close();
      }
      server.close();
    }
  }

  public MiniDFSCluster mini() {
    return cluster;
  }

  public DistributedFileSystem fs() {
    return fs;
  }

  /** The coder our codec uses in this JVM: ISA-L unless the run forces the library off. */
  public static String activeNetecCoder() {
    return IsalNative.isAvailable() ? NetecCoderFactories.NETEC_NATIVE
        : NetecCoderFactories.NETEC_JAVA;
  }

  public static CoderCounters activeCounters() {
    return CoderCounters.of(activeNetecCoder());
  }

  /** The repository's conf/ directory (the files operators use). */
  public static Path confDir() {
    return Paths.get(System.getProperty("netec.repo.root", ".."), "conf").toAbsolutePath();
  }

  /** Runs {@code hdfs ec ARGS} through Hadoop's ECAdmin; returns exit code and output. */
  public synchronized AdminResult ecAdmin(String... args) throws Exception {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8.name());
    System.setOut(capture);
    System.setErr(capture);
    int rc;
    try {
      rc = ToolRunner.run(new ECAdmin(new Configuration(fs.getConf())), args);
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
    return new AdminResult(rc, buf.toString(StandardCharsets.UTF_8.name()));
  }

  /** Exit code and printed text of one admin command. */
  public static final class AdminResult {
    public final int rc;
    public final String output;

    AdminResult(int rc, String output) {
      this.rc = rc;
      this.output = output;
    }

    @Override
    public String toString() {
      return "rc=" + rc + " output=" + output;
    }
  }

  /** -addPolicies with conf/netec-policies.xml, -enablePolicy, -setPolicy on {@code dir}. */
  public void useNetecPolicy(String policy, String dir) throws Exception {
    requireOk(ecAdmin("-addPolicies", "-policyFile",
        confDir().resolve("netec-policies.xml").toString()));
    requireOk(ecAdmin("-enablePolicy", "-policy", policy));
    fs.mkdirs(new org.apache.hadoop.fs.Path(dir));
    requireOk(ecAdmin("-setPolicy", "-path", dir, "-policy", policy));
  }

  private static void requireOk(AdminResult r) {
    if (r.rc != 0) {
      throw new IllegalStateException("hdfs ec failed: " + r);
    }
  }

  public byte[] writeFile(String path, int length, long seed) throws IOException {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    try (FSDataOutputStream out = fs.create(new org.apache.hadoop.fs.Path(path))) {
      out.write(data);
    }
    return data;
  }

  public byte[] readFully(String path) throws IOException {
    try (FSDataInputStream in = fs.open(new org.apache.hadoop.fs.Path(path))) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[64 * 1024 + 7]; // odd size: reads cross cell edges
      int n;
      while ((n = in.read(buf)) > 0) {
        out.write(buf, 0, n);
      }
      return out.toByteArray();
    }
  }

  /** Positional read of [pos, pos+len). */
  /**
   * Positional reads, through one stream, of every cell of data unit {@code unit} (k data
   * units) of {@code path}, each checked against {@code data}; the unit's first cell is read
   * once more first, which lets the stream find a stopped DataNode the NameNode still lists
   * (Hadoop's stream then decodes it; or a route, when another stream found it dead a moment
   * ago). Returns the bytes of every read, that one included.
   */
  public long preadUnitCells(String path, byte[] data, int k, int unit) throws IOException {
    long read = 0;
    long group = (long) k * BLOCK_SIZE;
    try (FSDataInputStream in = fs.open(new org.apache.hadoop.fs.Path(path))) {
      boolean first = true;
      for (long g = 0; g < data.length; g += group) {
        for (long at = g + (long) unit * CELL; at < Math.min(data.length, g + group);
            at += (long) k * CELL) {
          int len = (int) Math.min(CELL, data.length - at);
          byte[] b = new byte[len];
          if (first) {
            in.readFully(at, b);
            read += len;
            first = false;
          }
          in.readFully(at, b);
          org.junit.jupiter.api.Assertions.assertArrayEquals(
              java.util.Arrays.copyOfRange(data, (int) at, (int) at + len), b,
              path + " pread @" + at + "+" + len);
          read += len;
        }
      }
    }
    return read;
  }

  /**
   * Flips one byte, at {@code at}, of internal block {@code unit} of group {@code group} on its
   * DataNode's disk (its checksums left as they were); returns that DataNode.
   */
  public DataNode flipByte(String path, int group, int unit, long at) throws IOException {
    LocatedStripedBlock g = groups(path).get(group);
    ExtendedBlock b = StripedBlockUtil.constructInternalBlock(g.getBlock(), policyOf(path), unit);
    DataNode holder = holder(path, group, unit);
    java.io.File f = new java.io.File(holder.getFSDataset().getBlockLocalPathInfo(b)
        .getBlockPath());
    try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f, "rw")) {
      raf.seek(at);
      int v = raf.read();
      raf.seek(at);
      raf.write(v ^ 0x5a);
    }
    return holder;
  }

  public byte[] pread(String path, long pos, int len) throws IOException {
    byte[] b = new byte[len];
    try (FSDataInputStream in = fs.open(new org.apache.hadoop.fs.Path(path))) {
      in.readFully(pos, b);
    }
    return b;
  }

  public List<LocatedStripedBlock> groups(String path) throws IOException {
    List<LocatedStripedBlock> out = new ArrayList<>();
    for (LocatedBlock lb : fs.getClient().getLocatedBlocks(path, 0, Long.MAX_VALUE)
        .getLocatedBlocks()) {
      out.add((LocatedStripedBlock) lb);
    }
    return out;
  }

  public ErasureCodingPolicy policyOf(String path) throws IOException {
    return fs.getErasureCodingPolicy(new org.apache.hadoop.fs.Path(path));
  }

  /** The DataNode holding internal block {@code index} of group {@code group}, or null. */
  public DataNode holder(String path, int group, int index) throws IOException {
    LocatedStripedBlock g = groups(path).get(group);
    for (int i = 0; i < g.getBlockIndices().length; i++) {
      if (g.getBlockIndices()[i] == index) {
        return dataNode(g.getLocations()[i]);
      }
    }
    return null;
  }

  /** The running DataNode serving {@code info}, or null. */
  public DataNode dataNode(DatanodeInfo info) {
    for (DataNode dn : cluster.getDataNodes()) {
      if (dn.getXferPort() == info.getXferPort()) {
        return dn;
      }
    }
    return null;
  }

  /**
   * One round of a route suite, before it loses {@code lost} DataNodes: {@code dir}/lost-L (two
   * groups and a partial stripe) and {@code dir}/small-L (under a cell: one data unit, the
   * other k-1 empty), written and recorded in {@code files} (their bytes) and {@code original}
   * (their internal block files). Returns the two paths, the big file's first.
   */
  public String[] writeRound(String dir, int k, int lost, Map<String, byte[]> files,
      Map<Long, byte[]> original) throws Exception {
    String path = dir + "/lost-" + lost;
    files.put(path, writeFile(path, roundFileSize(k), lost));
    String small = dir + "/small-" + lost;
    files.put(small, writeFile(small, CELL / 3, lost + 100));
    original.putAll(snapshotInternalBlocks(path, small));
    return new String[] {path, small};
  }

  /**
   * The big file of a {@link #writeRound}: two whole block groups, then a third group of one
   * whole stripe and 4,097 bytes, so that full groups and a short, ragged one are rebuilt.
   */
  public static int roundFileSize(int k) {
    return 2 * k * (int) BLOCK_SIZE + k * CELL + 4097;
  }

  /** Block id -> bytes of the block file, for every stored internal block of the files. */
  public Map<Long, byte[]> snapshotInternalBlocks(String... paths) throws Exception {
    Map<Long, byte[]> snap = new HashMap<>();
    for (String p : paths) {
      waitFullyStored(p, 60_000);
      forEachStoredInternalBlock(p, (block, bytes) -> snap.put(block.getBlockId(), bytes));
    }
    return snap;
  }

  /** Callback for each stored internal block and the bytes of its block file. */
  public interface BlockVisitor {
    void visit(ExtendedBlock internalBlock, byte[] fileBytes) throws IOException;
  }

  /** Visits every internal block replica the NameNode lists, reading its block file. */
  public int forEachStoredInternalBlock(String path, BlockVisitor v) throws IOException {
    int n = 0;
    for (LocatedStripedBlock g : groups(path)) {
      ErasureCodingPolicy policy = policyOf(path);
      for (int i = 0; i < g.getBlockIndices().length; i++) {
        ExtendedBlock internal = StripedBlockUtil.constructInternalBlock(g.getBlock(), policy,
            g.getBlockIndices()[i]);
        DataNode dn = dataNode(g.getLocations()[i]);
        if (dn == null) {
          throw new IOException("block " + internal + " listed on stopped " + g.getLocations()[i]);
        }
        // The replica's own file on the DataNode's disk, as the dataset knows it.
        File f;
        try {
          f = new File(dn.getFSDataset().getBlockLocalPathInfo(internal).getBlockPath());
        } catch (org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException e) {
          if (!stillListed(path, internal, dn, e)) {
            continue; // an excess copy the NameNode had deleted after listing it
          }
          f = new File(dn.getFSDataset().getBlockLocalPathInfo(internal).getBlockPath());
        }
        v.visit(internal, Files.readAllBytes(f.toPath()));
        n++;
      }
    }
    return n;
  }

  /**
   * Whether the NameNode still lists {@code internal} on {@code dn} after its DataNode said
   * it has no such replica: false once the NameNode stops listing it (within 10 s: an excess
   * replica of a block rebuilt twice is deleted after the listing was taken); true if the
   * replica has appeared meanwhile; else {@code e} is rethrown.
   */
  private boolean stillListed(String path, ExtendedBlock internal, DataNode dn,
      IOException e) throws IOException {
    long deadline = System.currentTimeMillis() + 10_000;
    while (System.currentTimeMillis() < deadline) {
      boolean listed = false;
      for (LocatedStripedBlock g : groups(path)) {
        for (int i = 0; i < g.getBlockIndices().length; i++) {
          listed |= g.getBlock().getBlockId() + g.getBlockIndices()[i] == internal.getBlockId()
              && g.getLocations()[i].getXferPort() == dn.getXferPort();
        }
      }
      if (!listed) {
        return false;
      }
      try {
        dn.getFSDataset().getReplicaVisibleLength(internal);
        return true; // there now
      } catch (org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException absent) {
        // still listed, still absent: ask again
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw e;
      }
    }
    throw e;
  }

  /**
   * Stops the DataNode; the NameNode still lists it until {@link #markDead}. Its router
   * counters are kept, so {@link #routerMetric} sums stay cumulative over the whole cluster.
   */
  public void stop(DataNode dn) throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = routerMBean(dn);
    for (MBeanAttributeInfo a : jmx.getMBeanInfo(name).getAttributes()) {
      if (!a.getType().equals("long") || a.getName().equals("InFlight")) {
        continue; // counters only; a gauge of a stopped node means nothing
      }
      retired.merge(a.getName(), (Long) jmx.getAttribute(name, a.getName()), Long::sum);
    }
    cluster.stopDataNode(dn.getDatanodeId().getXferAddr());
  }

  private static ObjectName routerMBean(DataNode dn) throws Exception {
    return new ObjectName("Hadoop:service=DataNode,name=NetecRouter-" + dn.getXferPort());
  }

  public void markDead(DataNode stopped) throws IOException {
    markDead(List.of(stopped));
  }

  /**
   * Tells the NameNode that stopped DataNodes are dead, all in one heartbeat check: marked one
   * by one, the redundancy monitor could plan a task between two marks and name a stopped
   * node, not yet known dead, as a source ("Connection refused", and the route fails over).
   */
  public void markDead(List<DataNode> stopped) throws IOException {
    FSNamesystem ns = cluster.getNamesystem();
    for (DataNode dn : stopped) {
      DFSTestUtil.setDatanodeDead(NameNodeAdapter.getDatanode(ns, dn.getDatanodeId()));
    }
    BlockManagerTestUtil.checkHeartbeat(ns.getBlockManager());
  }

  /** Waits until every non-empty internal block of every group is stored on a running node. */
  public void waitFullyStored(String path, long timeoutMs) throws Exception {
    String[] missing = {null};
    if (!Waits.within(timeoutMs, 200, () -> (missing[0] = missingInternalBlocks(path)) == null)) {
      throw new AssertionError(path + " not rebuilt within " + timeoutMs + " ms: " + missing[0]);
    }
    waitRouterIdle(timeoutMs);
  }

  private String missingInternalBlocks(String path) throws IOException {
    ErasureCodingPolicy policy = policyOf(path);
    int units = policy.getNumDataUnits() + policy.getNumParityUnits();
    for (LocatedStripedBlock g : groups(path)) {
      boolean[] have = new boolean[units];
      for (int i = 0; i < g.getBlockIndices().length; i++) {
        if (dataNode(g.getLocations()[i]) != null) {
          have[g.getBlockIndices()[i]] = true;
        }
      }
      for (int i = 0; i < units; i++) {
        if (!have[i] && StripedBlockUtil.getInternalBlockLength(g.getBlockSize(), policy, i) > 0) {
          return "group " + g.getBlock() + " lacks index " + i;
        }
      }
    }
    return null;
  }

  /**
   * Waits until no running DataNode's router is working on a task, so counter deltas are
   * complete (tasks of other files, started by the same losses, may still be running).
   */
  public void waitRouterIdle(long timeoutMs) throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    long[] busy = {0};
    boolean idle = Waits.within(timeoutMs, 50, () -> {
      busy[0] = 0;
      for (DataNode dn : cluster.getDataNodes()) {
        busy[0] += (Long) jmx.getAttribute(routerMBean(dn), "InFlight");
      }
      return busy[0] == 0;
    });
    if (!idle) {
      throw new AssertionError(busy[0] + " reconstruction tasks still running after "
          + timeoutMs + " ms");
    }
  }

  /** Sum of a router metric over all DataNodes, read over JMX (stopped ones as banked). */
  public long routerMetric(String attribute) throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    long sum = retired.getOrDefault(attribute, 0L);
    for (DataNode dn : cluster.getDataNodes()) {
      sum += (Long) jmx.getAttribute(routerMBean(dn), attribute);
    }
    return sum;
  }

  /**
   * Bytes Hadoop's own reconstruction read from survivors, summed over running DataNodes
   * (DataNodeMetrics.ecReconstructionBytesRead, a package-private counter read reflectively:
   * a measurement for tests and the demo only).
   */
  public long hadoopReconstructionBytesRead() throws Exception {
    java.lang.reflect.Field f = org.apache.hadoop.hdfs.server.datanode.metrics.DataNodeMetrics
        .class.getDeclaredField("ecReconstructionBytesRead");
    f.setAccessible(true);
    long sum = 0;
    for (DataNode dn : cluster.getDataNodes()) {
      sum += ((org.apache.hadoop.metrics2.lib.MutableCounterLong) f.get(dn.getMetrics())).value();
    }
    return sum;
  }

  /** Outcome lines (RouteMetrics.RecentTasks) of every running DataNode's router, over JMX. */
  public List<String> recentTasks() throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    List<String> out = new ArrayList<>();
    for (DataNode dn : cluster.getDataNodes()) {
      out.addAll(Arrays.asList((String[]) jmx.getAttribute(routerMBean(dn), "RecentTasks")));
    }
    return out;
  }

  /**
   * Stops the holder of {@code small}'s data unit 0, then holders of {@code path}'s first
   * group's parity units from index k on, until {@code lost} DataNodes are down (a short
   * file's rebuild needs the empty units); marks them dead so the NameNode rebuilds at once.
   */
  public List<DataNode> loseHolders(String small, String path, int k, int lost)
      throws Exception {
    List<DataNode> victims = new java.util.ArrayList<>();
    victims.add(holder(small, 0, 0));
    for (int i = 1; victims.size() < lost; i++) {
      DataNode v = holder(path, 0, k + i - 1);
      if (!victims.contains(v)) {
        victims.add(v);
      }
    }
    for (DataNode v : victims) {
      if (v == null) {
        throw new IllegalStateException("no holder to stop among " + victims);
      }
      stop(v);
    }
    markDead(victims);
    return victims;
  }

  /**
   * Waits until every file is fully stored again, then checks every stored internal block
   * file against {@code original} (by block id) and every file's bytes.
   */
  public void verifyRebuilt(Map<String, byte[]> files, Map<Long, byte[]> original)
      throws Exception {
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      waitFullyStored(f.getKey(), 120_000);
      forEachStoredInternalBlock(f.getKey(), (block, bytes) ->
          org.junit.jupiter.api.Assertions.assertArrayEquals(original.get(block.getBlockId()),
              bytes, "block file " + block));
      org.junit.jupiter.api.Assertions.assertArrayEquals(f.getValue(), readFully(f.getKey()),
          "read " + f.getKey());
    }
  }

  @Override
  public void close() {
    cluster.shutdown();
  }
}
