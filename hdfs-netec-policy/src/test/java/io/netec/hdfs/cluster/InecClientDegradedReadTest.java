package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.codec.CoderCounters;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.inecroute.InecNode;
import io.netec.hdfs.inecroute.InecParticipant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Client degraded reads through INEC (RS(6,3), ECPipe chain rooted at the client): with 1..m
 * data holders down, every file shape reads back byte for byte, the missing cells come from
 * the DataNodes' participants (the client's own decoder stays idle) and the client takes in
 * about one stream per missing unit. With the participants gone, Hadoop's stream serves.
 */
class InecClientDegradedReadTest {
  private static final int CELL = EcTestCluster.CELL;

  @Test
  void degradedReadsGoThroughInecAndFallBackToHadoop() throws Exception {
    Assumptions.assumeTrue(IsalNative.libraryUnavailableReason() == null, "needs libnetec.so");
    int k = 6;
    int m = 3;
    Configuration conf = EcTestCluster.inecConf("ecpipe", 10_000, "tcp");
    conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
    conf.set(NetecConfigKeys.CLIENT_READS, "routes"); // lost units' preads through routes
    try (EcTestCluster c = new EcTestCluster(conf, k + m + 1)) {
      assertInstanceOf(NetecDistributedFileSystem.class, c.fs());
      c.useNetecPolicy("NETEC-6-3-1024k", "/read");
      Map<String, byte[]> files = new LinkedHashMap<>();
      long group = (long) k * EcTestCluster.BLOCK_SIZE;
      int[] sizes = {1, CELL - 1, k * CELL, (int) (group + 2 * CELL + CELL / 2)};
      for (int i = 0; i < sizes.length; i++) {
        files.put("/read/f" + i, c.writeFile("/read/f" + i, sizes[i], 70 + i));
      }
      String big = "/read/f3";
      CoderCounters clientCoder = EcTestCluster.activeCounters();
      int down = 0;
      for (int lost = 1; lost <= m; lost++) {
        while (down < lost) {
          c.stop(c.holder(big, 0, down)); // data units 0, 1, ...
          down++;
        }
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
          assertArrayEquals(f.getValue(), c.readFully(f.getKey()), "read " + f.getKey());
        }
        long viaInec = ClientReadCounters.inecRanges();
        long in = ClientReadCounters.inecBytesIn();
        long decodes = clientCoder.decodeCalls();
        long read = 0;
        for (int u = 0; u < lost; u++) {
          read += c.preadUnitCells(big, files.get(big), k, u);
        }
        assertTrue(ClientReadCounters.inecRanges() > viaInec, "served by INEC");
        // each unit's first cell is read once more, through Hadoop's stream (it finds the node
        // dead); the client decodes nothing else
        assertTrue(clientCoder.decodeCalls() - decodes <= lost, "client decodes");
        // one stream per lost unit: the client's ingress is about the bytes it asked for
        long got = ClientReadCounters.inecBytesIn() - in;
        assertTrue(got > 0 && got <= 1.05 * read, "client ingress " + got + " for " + read);
      }

      // The participants go away: Hadoop's stream serves the degraded ranges, same bytes.
      for (DataNode dn : c.mini().getDataNodes()) {
        InecParticipant p = InecNode.participant(dn.getXferPort());
        if (p != null) {
          p.close();
        }
      }
      long failedOrPassed = ClientReadCounters.routesFailed() + ClientReadCounters.hadoopChosen();
      for (Map.Entry<String, byte[]> f : files.entrySet()) {
        assertArrayEquals(f.getValue(), c.readFully(f.getKey()), "read " + f.getKey());
      }
      c.preadUnitCells(big, files.get(big), k, 0);
      assertTrue(ClientReadCounters.routesFailed() + ClientReadCounters.hadoopChosen()
          > failedOrPassed, "fell back to Hadoop's stream");
    }
  }
}
