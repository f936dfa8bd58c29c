package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import io.netec.hdfs.switchroute.SwitchFaultInjector;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.BlockMetadataHeader;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.util.DataChecksum;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every rebuilt byte proven, on a live cluster with route order switch, inec, native: bytes
 * changed where no check below the proof can see it (a relay between switch and reader that
 * fixes the NetEC checksum, a bit flipped in the switch's own slot, a relay on an INEC stream)
 * are never kept, on a DataNode or in a client's read; each row of a two-target task stands on
 * its own; and a file written with its own checksum type keeps it, and its file checksum, through
 * each route. Every case ends with every internal block file equal to the original.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IntegrityTest {
  private static final int SIZE = 2 * 3 * (int) EcTestCluster.BLOCK_SIZE + 4321;
  /**
   * A byte inside chunk 3's payload of an INEC stream: after the dialer's 20-byte tag and
   * 48-byte hello, 64 KiB chunks of one row, each after a 16-byte header.
   */
  private static final long INEC_TAMPER_AT = 20 + 48 + 3 * (65536 + 16) + 30_000;
  private SoftwareSwitch sw;
  private TamperingRelay vip;
  private EcTestCluster c;
  private final Map<String, byte[]> files = new LinkedHashMap<>();
  private final Map<Long, byte[]> original = new java.util.HashMap<>();
  private final List<TamperingRelay> inecRelays = new ArrayList<>();

  @BeforeAll
  void start() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    sw = new SoftwareSwitch(o);
    // the reader reaches the switch's VIP through a relay that tampers when told to
    vip = new TamperingRelay(sw.dataAddress(), TamperingRelay.Stream.NETEC_RESULTS, 0);
    vip.active = false;
    o.advertisedDataPort = vip.port();
    Configuration conf = EcTestCluster.switchConf(sw, 10_000);
    conf.set(NetecConfigKeys.ROUTE_ORDER, "switch,inec,native");
    conf.setInt(NetecConfigKeys.ROUTE_RETRIES, 1);
    conf.setInt(NetecConfigKeys.ROUTE_BACKOFF_MS, 0); // every task tries every route
    conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    conf.set(NetecConfigKeys.CLIENT_READS, "routes"); // lost units' preads through routes
    c = new EcTestCluster(conf, 14);
    c.useNetecPolicy("NETEC-3-2-1024k", "/p");
  }

  @AfterAll
  void stop() throws Exception {
    c.close();
    sw.close();
    vip.close();
  }

  @AfterEach
  void healTheNetwork() throws Exception {
    SwitchFaultInjector.set(null);
    vip.active = false;
    for (TamperingRelay r : inecRelays) {
      r.close();
    }
    inecRelays.clear();
    for (DataNode dn : c.mini().getDataNodes()) {
      io.netec.hdfs.inecroute.InecEngine e =
          io.netec.hdfs.inecroute.InecNode.dataNode(dn.getXferPort());
      if (e != null) { // (none in the Java-only pass)
        ServiceDirectory.register(ServiceDirectory.Service.INEC_DATA, dn.getXferPort(),
            e.dataAddress());
      }
    }
  }

  private String write(String name, long seed) throws Exception {
    String path = "/p/" + name;
    files.put(path, c.writeFile(path, SIZE, seed));
    original.putAll(c.snapshotInternalBlocks(path));
    return path;
  }

  /** Loses the holders of units {@code indices} of group 0, waits, checks every file. */
  private void lose(String path, int... indices) throws Exception {
    List<DataNode> victims = new ArrayList<>();
    for (int i : indices) {
      victims.add(c.holder(path, 0, i));
    }
    for (DataNode v : victims) {
      c.stop(v);
    }
    c.markDead(victims);
    c.verifyRebuilt(files, original);
  }

  /**
   * Every vertex's input stream passes a relay that flips one byte inside chunk 3 (each relay
   * its own mask: two equal changes along a chain would cancel).
   */
  private void tamperEveryInecStream() throws java.io.IOException {
    for (DataNode dn : c.mini().getDataNodes()) {
      io.netec.hdfs.inecroute.InecEngine e =
          io.netec.hdfs.inecroute.InecNode.dataNode(dn.getXferPort());
      TamperingRelay r = new TamperingRelay(e.dataAddress(), TamperingRelay.Stream.RAW,
          INEC_TAMPER_AT);
      r.mask = 1 + inecRelays.size();
      inecRelays.add(r);
      ServiceDirectory.register(ServiceDirectory.Service.INEC_DATA, dn.getXferPort(),
          r.address());
    }
  }

  /** Every switch RESULT of every task has one flipped bit from now on (the switch fails). */
  private static void breakTheSwitch() {
    SwitchFaultInjector.set(new SwitchFaultInjector() {
      @Override
      public void beforeResult(int task, int row, long seq, byte[] sum, int length) {
        sum[length / 3] ^= 4;
      }
    });
  }

  @Test
  void resultsChangedBetweenSwitchAndReaderAreNeverKept() throws Exception {
    String p = write("relay", 1);
    vip.active = true;
    long wrong = c.routerMetric("switch.VerifyFailed");
    long served = c.routerMetric("switch.Served");
    lose(p, 0);
    assertTrue(vip.tampered.get() >= 1, "the relay changed RESULTs");
    assertTrue(c.routerMetric("switch.VerifyFailed") > wrong, "the changes were caught");
    assertEquals(served, c.routerMetric("switch.Served"), "no tampered attempt was kept");
  }

  @Test
  void aBitFlippedInTheSwitchsSlotIsNeverKept() throws Exception {
    String p = write("slot-flip", 2);
    AtomicInteger flips = new AtomicInteger();
    SwitchFaultInjector.set(new SwitchFaultInjector() {
      @Override
      public void beforeResult(int task, int row, long seq, byte[] sum, int length) {
        if (seq == 7 && flips.compareAndSet(0, 1)) {
          sum[100] ^= 1; // once: the retry is clean
        }
      }
    });
    long wrong = c.routerMetric("switch.VerifyFailed");
    long served = c.routerMetric("switch.Served");
    lose(p, 1);
    assertEquals(1, flips.get(), "one bit flipped");
    assertEquals(1, c.routerMetric("switch.VerifyFailed") - wrong);
    assertTrue(c.routerMetric("switch.Served") > served, "the retry through the switch served");
  }

  @Test
  void anInecStreamChangedOnTheWayIsNeverKept() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(inecRuns(),
        "the INEC engine needs libnetec.so (the suite's Java-only pass has none)");
    String p = write("inec-relay", 3);
    breakTheSwitch();
    tamperEveryInecStream();
    long wrong = c.routerMetric("inec.VerifyFailed");
    long nativeServed = c.routerMetric("native.Served");
    lose(p, 0);
    assertTrue(inecRelays.stream().mapToLong(r -> r.tampered.get()).sum() >= 1);
    assertTrue(c.routerMetric("inec.VerifyFailed") > wrong, "the changes were caught");
    // (the short last group's streams end before the changed byte: INEC may serve those)
    assertTrue(c.routerMetric("native.Served") > nativeServed, "native rebuilt the others");
  }

  @Test
  void aClientNeverReadsBytesTheSwitchGotWrong() throws Exception {
    String p = write("client", 4);
    byte[] data = files.get(p);
    vip.active = true;
    DataNode lost = c.holder(p, 0, 1);
    c.stop(lost); // still listed: the client finds unit 1 gone as it reads
    NetecDistributedFileSystem fs = (NetecDistributedFileSystem) c.fs();
    long wrong = fs.router().metrics().get("switch", "VerifyFailed");
    assertArrayEquals(data, c.readFully(p));
    c.preadUnitCells(p, data, 3, 1);
    assertTrue(fs.router().metrics().get("switch", "VerifyFailed") > wrong,
        "the client's router refused the changed bytes");
    vip.active = false;
    c.markDead(lost);
    c.verifyRebuilt(files, original);
  }

  @Test
  void eachRowOfATwoTargetTaskStandsOnItsOwn() throws Exception {
    String p = write("two-targets", 5);
    // row 1 of every switch task comes out wrong, row 0 right
    SwitchFaultInjector.set(new SwitchFaultInjector() {
      @Override
      public void beforeResult(int task, int row, long seq, byte[] sum, int length) {
        if (row == 1) {
          sum[0] ^= 8;
        }
      }
    });
    org.apache.hadoop.test.GenericTestUtils.LogCapturer log =
        org.apache.hadoop.test.GenericTestUtils.LogCapturer.captureLogs(
            org.slf4j.LoggerFactory.getLogger(io.netec.hdfs.route.ReconstructionRouter.class));
    long wrong = c.routerMetric("switch.VerifyFailed");
    try {
      lose(p, 0, 3); // one task of two targets for each group that had both units
    } finally {
      log.stopCapturing();
    }
    // The first attempt's row 0 was proven and kept alone; its row 1 was dropped and the retry,
    // a task of that row only, rebuilt it: two attempts served the task, unit by unit.
    List<String> split = new ArrayList<>();
    for (String line : log.getOutput().split("\n")) {
      if (line.matches(".*erased \\[\\d, \\d\\]\\) served by route switch \\(units \\[\\d\\]: "
          + ".*; route switch \\(units \\[\\d\\]: .*")) {
        split.add(line);
      }
    }
    assertTrue(!split.isEmpty(), "a two-target task served row by row: " + log.getOutput());
    assertTrue(c.routerMetric("switch.VerifyFailed") > wrong);
  }

  @Test
  void aFileKeepsItsChecksumTypeAndFileChecksumThroughEveryRoute() throws Exception {
    Configuration own = new Configuration(c.fs().getConf());
    own.set("dfs.checksum.type", "CRC32");
    own.setInt("dfs.bytes-per-checksum", 4096);
    FileSystem writer = FileSystem.newInstance(c.fs().getUri(), own);
    String p = "/p/own-checksum";
    byte[] data = new byte[SIZE];
    new java.util.Random(6).nextBytes(data);
    try (org.apache.hadoop.fs.FSDataOutputStream out = writer.create(new Path(p))) {
      out.write(data);
    }
    files.put(p, data);
    original.putAll(c.snapshotInternalBlocks(p));
    Map<String, FileChecksum> before = fileChecksums(p);
    // through the switch, then through INEC (switch broken), then natively (both broken); the
    // Java-only pass has no INEC engine: natively then
    String[] routes = {"switch", inecRuns() ? "inec" : "native", "native"};
    for (int round = 0; round < routes.length; round++) {
      if (round >= 1) {
        breakTheSwitch();
      }
      if (round == 2 && inecRuns()) {
        tamperEveryInecStream();
      }
      long served = c.routerMetric(routes[round] + ".Served");
      lose(p, round);
      assertTrue(c.routerMetric(routes[round] + ".Served") > served, routes[round] + " served");
      assertEquals(before, fileChecksums(p), "file checksums after a rebuild by " + routes[round]);
      // every replica of the group carries the file's own checksum: CRC32, 4096 bytes each
      ExtendedBlock unit = org.apache.hadoop.hdfs.util.StripedBlockUtil.constructInternalBlock(
          c.groups(p).get(0).getBlock(), c.policyOf(p), round);
      DataNode holder = c.holder(p, 0, round);
      File meta = new File(holder.getFSDataset().getBlockLocalPathInfo(unit).getMetaPath());
      try (DataInputStream in = new DataInputStream(new FileInputStream(meta))) {
        DataChecksum sum = BlockMetadataHeader.readHeader(in).getChecksum();
        assertEquals(DataChecksum.Type.CRC32, sum.getChecksumType(), routes[round]);
        assertEquals(4096, sum.getBytesPerChecksum(), routes[round]);
      }
      healTheNetwork();
    }
    writer.close();
  }

  private static boolean inecRuns() {
    return io.netec.hdfs.inecroute.InecEngine.unavailableReason() == null;
  }

  /** The file's checksum in both of Hadoop's combine modes. */
  private Map<String, FileChecksum> fileChecksums(String p) throws Exception {
    Map<String, FileChecksum> out = new LinkedHashMap<>();
    for (String mode : new String[] {"MD5MD5CRC", "COMPOSITE_CRC"}) {
      Configuration conf = new Configuration(c.fs().getConf());
      conf.set("dfs.checksum.combine.mode", mode);
      conf.set("fs.hdfs.impl", "org.apache.hadoop.hdfs.DistributedFileSystem");
      try (FileSystem fs = FileSystem.newInstance(c.fs().getUri(), conf)) {
        out.put(mode, fs.getFileChecksum(new Path(p)));
      }
    }
    return out;
  }
}
