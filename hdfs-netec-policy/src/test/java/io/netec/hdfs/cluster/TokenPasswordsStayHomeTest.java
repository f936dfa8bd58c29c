package io.netec.hdfs.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netec.hdfs.NetecConfigKeys;
import io.netec.hdfs.client.ClientReadCounters;
import io.netec.hdfs.client.NetecDistributedFileSystem;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.ServiceDirectory.Service;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.security.token.block.BlockPoolTokenSecretManager;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.StringUtils;
import org.junit.jupiter.api.Test;

/**
 * No block-token password leaves its host, on a cluster with block tokens and
 * {@code dfs.data.transfer.protection=authentication} (which keeps the routes): every byte sent
 * to the switch's control port, the survivor agents, the INEC participants and the proof
 * services passes a relay that keeps a copy, while the switch and then INEC rebuild a lost
 * DataNode's blocks and a client reads a lost unit through a route. In all of it no text
 * decodes to a token whose password checks, no password of a proof's token appears raw, in hex
 * or in base64, and each service was sent proofs.
 */
class TokenPasswordsStayHomeTest {
  private static final int SIZE = 3 * (int) EcTestCluster.BLOCK_SIZE + 12345;
  private static final Pattern URL_SAFE_RUN = Pattern.compile("[A-Za-z0-9_-]{24,}");
  private static final Pattern PROOF_ID = Pattern.compile("netec-proof-1\\.([A-Za-z0-9_-]+)\\.");

  @Test
  void noTokenPasswordLeavesItsHost() throws Exception {
    boolean engine = IsalNative.libraryUnavailableReason() == null;
    List<RecordingRelay> relays = new ArrayList<>();
    try (SoftwareSwitch sw = new SoftwareSwitch(new SoftwareSwitch.Options())) {
      RecordingRelay control = new RecordingRelay(sw.controlAddress(), "switch control");
      relays.add(control);
      Configuration conf = EcTestCluster.inecConf("ecpipe", 10_000, "tcp");
      conf.set(NetecConfigKeys.ROUTE_ORDER, "switch,inec,native");
      conf.set(NetecConfigKeys.SWITCH_ADDRESS, "127.0.0.1:" + control.port());
      conf.setInt(NetecConfigKeys.SWITCH_TIMEOUT_MS, 10_000);
      conf.setBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY, true);
      conf.set("dfs.data.transfer.protection", "authentication");
      conf.set("fs.hdfs.impl", NetecDistributedFileSystem.class.getName());
      conf.set(NetecConfigKeys.CLIENT_READS, "routes");
      try (EcTestCluster c = new EcTestCluster(conf, 7)) {
        for (DataNode dn : c.mini().getDataNodes()) {
          for (Service s : new Service[] {Service.SWITCH_AGENT, Service.INEC_CONTROL,
              Service.PROOF}) {
            InetSocketAddress at = ServiceDirectory.resolve(s, dn.getDatanodeId(),
                EcTestCluster.settings(dn));
            if (at.getPort() == 0) {
              continue; // not running (INEC without libnetec.so)
            }
            RecordingRelay r = new RecordingRelay(at, s.toString());
            relays.add(r);
            ServiceDirectory.register(s, dn.getXferPort(), r.address());
          }
        }
        c.useNetecPolicy("NETEC-3-2-1024k", "/t");
        Map<String, byte[]> files = new LinkedHashMap<>();
        Map<Long, byte[]> original = new HashMap<>();
        files.put("/t/a", c.writeFile("/t/a", SIZE, 1));
        original.putAll(c.snapshotInternalBlocks("/t/a"));
        long viaSwitch = ClientReadCounters.switchRanges();
        long switchServed = c.routerMetric("switch.Served");
        DataNode v = c.holder("/t/a", 0, 1);
        c.stop(v);
        c.preadUnitCells("/t/a", files.get("/t/a"), 3, 1); // the client, through the switch
        c.markDead(v);
        c.verifyRebuilt(files, original);
        assertTrue(ClientReadCounters.switchRanges() > viaSwitch, "a client read via the switch");
        assertTrue(c.routerMetric("switch.Served") > switchServed, c.recentTasks().toString());
        if (engine) { // then INEC, the switch gone
          control.close();
          files.put("/t/b", c.writeFile("/t/b", SIZE, 2));
          original.putAll(c.snapshotInternalBlocks("/t/b"));
          long inecServed = c.routerMetric("inec.Served");
          long nativeServed = c.routerMetric("native.Served");
          DataNode w = c.holder("/t/b", 1, 3); // a parity unit of the short last group
          c.stop(w);
          c.markDead(w);
          c.verifyRebuilt(files, original);
          assertTrue(c.routerMetric("inec.Served") > inecServed, c.recentTasks().toString());
          // every task, the short last group's too (its empty units are vertices streaming
          // zeros on one host, each with a proof of its own)
          assertEquals(nativeServed, c.routerMetric("native.Served"),
              c.recentTasks().toString());
        }
        BlockPoolTokenSecretManager keys = c.mini().getDataNodes().get(0)
            .getBlockPoolTokenSecretManager();
        Map<String, Integer> proofs = new HashMap<>();
        for (RecordingRelay r : relays) {
          String seen = new String(r.seen(), StandardCharsets.ISO_8859_1);
          noTokenWithItsPassword(seen, r.name, keys);
          proofs.merge(r.name, noPasswordOfItsProofs(seen, r.name, keys), Integer::sum);
        }
        for (String service : engine ? new String[] {"switch control", "SWITCH_AGENT",
            "PROOF", "INEC_CONTROL"} : new String[] {"switch control", "SWITCH_AGENT",
            "PROOF"}) {
          assertTrue(proofs.getOrDefault(service, 0) > 0, "proofs sent to " + service + ": "
              + proofs);
        }
      } finally {
        for (RecordingRelay r : relays) {
          r.close();
        }
      }
    }
  }

  /** Fails if any URL-safe run in {@code seen} is a block token whose password checks. */
  private static void noTokenWithItsPassword(String seen, String where,
      BlockPoolTokenSecretManager keys) {
    Matcher m = URL_SAFE_RUN.matcher(seen);
    while (m.find()) {
      Token<BlockTokenIdentifier> t = new Token<>();
      BlockTokenIdentifier id = new BlockTokenIdentifier();
      byte[] password;
      try {
        t.decodeFromUrlString(m.group());
        id.readFields(new DataInputStream(new ByteArrayInputStream(t.getIdentifier())));
        password = keys.retrievePassword(id);
      } catch (Exception | LinkageError e) {
        continue; // not a token of this cluster
      }
      if (Arrays.equals(password, t.getPassword())) {
        fail("a block token with its password was sent to " + where + ": " + id);
      }
    }
  }

  /**
   * Fails if the password of any proof's token appears in {@code seen} raw, in hex or in
   * base64; returns the number of proofs.
   */
  private static int noPasswordOfItsProofs(String seen, String where,
      BlockPoolTokenSecretManager keys) throws Exception {
    Matcher m = PROOF_ID.matcher(seen);
    int n = 0;
    while (m.find()) {
      BlockTokenIdentifier id = new BlockTokenIdentifier();
      id.readFields(new DataInputStream(new ByteArrayInputStream(
          Base64.getUrlDecoder().decode(m.group(1)))));
      byte[] p = keys.retrievePassword(id);
      for (String form : new String[] {new String(p, StandardCharsets.ISO_8859_1),
          StringUtils.byteToHexString(p), Base64.getEncoder().withoutPadding().encodeToString(p),
          Base64.getUrlEncoder().withoutPadding().encodeToString(p)}) {
        assertFalse(seen.contains(form), "a token password was sent to " + where);
      }
      n++;
    }
    return n;
  }
}
