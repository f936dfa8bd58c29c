package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.codec.CoderCounters;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSStripedInputStream;
import org.apache.hadoop.hdfs.NetecStripedStreamAccess;
import org.apache.hadoop.hdfs.client.HdfsDataInputStream;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Client degraded reads through the switch, for one NETEC policy: a client with
 * fs.hdfs.impl = NetecDistributedFileSystem and netec.client.reads=routes reads every file
 * shape, healthy and then with 1..m data holders down. Its stream is Hadoop's striped stream
 * (HdfsDataInputStream, statistics), stateful reads are Hadoop's, and positional reads of the
 * lost units are rebuilt by the switch (the client's own decoder stays idle); with the switch
 * gone Hadoop's stream serves the same bytes. Other files, and all files without a switch, get
 * Hadoop's own stream class.
 */
class ClientDegradedReadTest {
  private static final int CELL = EcTestCluster.CELL;

  /** The codes, by id. */
  static Stream<Arguments> shapes() {
    return Shapes.codes().selected();
  }

  @ParameterizedTest(name = "RS({0},{1})")
  @MethodSource("shapes")
  void degradedReadsGoThroughTheSwitchAndFallBackToHadoop(int k, int m) throws Exception {
    SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options());
    Configuration conf = EcTestCluster.switchConf(sw, 5_000);
    conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    conf.set(NetecConfigKeys.CLIENT_READS, "routes");
    try (EcTestCluster c = new EcTestCluster(conf, k + m + 1)) {
      assertInstanceOf(NetecDistributedFileSystem.class, c.fs());
      String dir = "/read";
      c.useNetecPolicy("NETEC-" + k + "-" + m + "-1024k", dir);
      Map<String, byte[]> files = new LinkedHashMap<>();
      long group = (long) k * EcTestCluster.BLOCK_SIZE;
      int[] sizes = {0, 1, CELL - 1, k * CELL, (int) (2 * group + k * CELL + CELL / 2)};
      for (int i = 0; i < sizes.length; i++) {
        files.put(dir + "/f" + i, c.writeFile(dir + "/f" + i, sizes[i], 50 + i));
      }
      String big = dir + "/f4";
      try (FSDataInputStream in = c.fs().open(new Path(big))) {
        assertInstanceOf(HdfsDataInputStream.class, in);
        assertInstanceOf(NetecStripedStreamAccess.class, in.getWrappedStream());
      }

      // Healthy: Hadoop's stream, every read; counted in the FileSystem's statistics.
      // (counters are the JVM's: every shape of this suite runs in one)
      long chosen = ClientReadCounters.routesChosen();
      long ranges = ClientReadCounters.switchRanges();
      FileSystem.Statistics stats = FileSystem.getStatistics(c.fs().getUri().getScheme(),
          c.fs().getClass());
      long before = stats.getBytesRead();
      readAll(c, files, new Random(1));
      assertEquals(chosen, ClientReadCounters.routesChosen());
      assertEquals(ranges, ClientReadCounters.switchRanges());
      assertTrue(stats.getBytesRead() - before >= files.get(big).length, "bytes counted");

      // Other files, and NETEC files without a switch, read through Hadoop's own stream.
      c.fs().enableErasureCodingPolicy("RS-" + k + "-" + m + "-1024k");
      c.fs().mkdirs(new Path("/rs"));
      c.fs().setErasureCodingPolicy(new Path("/rs"), "RS-" + k + "-" + m + "-1024k");
      byte[] rs = c.writeFile("/rs/f", 3 * CELL + 5, 9);
      try (FSDataInputStream in = c.fs().open(new Path("/rs/f"))) {
        assertEquals(DFSStripedInputStream.class, in.getWrappedStream().getClass());
      }
      assertArrayEquals(rs, c.readFully("/rs/f"));

      // Degraded: 1..m data holders down (still listed by the NameNode).
      CoderCounters clientCoder = EcTestCluster.activeCounters();
      int down = 0;
      for (int lost = 1; lost <= m; lost++) {
        while (down < lost) {
          DataNode dn = c.holder(big, 0, down); // data units 0, 1, ...
          c.stop(dn);
          down++;
        }
        readAll(c, files, new Random(lost));
        long viaSwitch = ClientReadCounters.switchRanges();
        long decodes = clientCoder.decodeCalls();
        long out = sw.getBytesOut();
        long bytesRead = stats.getBytesRead();
        long read = 0;
        for (int u = 0; u < lost; u++) {
          read += c.preadUnitCells(big, files.get(big), k, u);
        }
        assertTrue(ClientReadCounters.switchRanges() > viaSwitch, "served by the switch");
        assertTrue(sw.getBytesOut() > out);
        assertTrue(stats.getBytesRead() - bytesRead >= read, "routed bytes counted");
        // each unit's first cell is read once through Hadoop's stream (it finds the node dead)
        assertTrue(clientCoder.decodeCalls() - decodes <= lost, "the client decoded only "
            + "the reads that found the nodes dead");
      }

      // The switch goes away: Hadoop's stream serves the degraded ranges, same bytes.
      sw.close();
      long decodes = clientCoder.decodeCalls();
      readAll(c, files, new Random(7));
      c.preadUnitCells(big, files.get(big), k, 0);
      assertTrue(clientCoder.decodeCalls() > decodes, "Hadoop decoded with our coder");

      // A client whose route order names no route but native reads through Hadoop's stream.
      Configuration nativeOnly = new Configuration(c.fs().getConf());
      nativeOnly.set(NetecConfigKeys.ROUTE_ORDER, "native");
      try (NetecDistributedFileSystem plain = new NetecDistributedFileSystem()) {
        plain.initialize(c.fs().getUri(), nativeOnly);
        try (FSDataInputStream in = plain.open(new Path(big))) {
          assertEquals(DFSStripedInputStream.class, in.getWrappedStream().getClass());
          byte[] b = new byte[1000];
          in.readFully(5000, b);
          assertArrayEquals(Arrays.copyOfRange(files.get(big), 5000, 6000), b);
        }
      }
      assertFalse(files.isEmpty());
    } finally {
      sw.close();
    }
  }

  /** Stateful reads of every file, and preads at random places, compared with the originals. */
  private static void readAll(EcTestCluster c, Map<String, byte[]> files, Random rnd)
      throws Exception {
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      byte[] want = f.getValue();
      assertArrayEquals(want, c.readFully(f.getKey()), "read " + f.getKey());
      for (int t = 0; t < 4 && want.length > 0; t++) {
        int pos = rnd.nextInt(want.length);
        int len = 1 + rnd.nextInt(Math.min(want.length - pos, 3 * CELL));
        assertArrayEquals(Arrays.copyOfRange(want, pos, pos + len), c.pread(f.getKey(), pos, len),
            "pread " + f.getKey() + " @" + pos + "+" + len);
      }
    }
  }
}
