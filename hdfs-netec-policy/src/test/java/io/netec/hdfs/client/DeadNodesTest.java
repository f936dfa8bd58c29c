package io.netec.hdfs.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.hdfs.protocol.DatanodeID;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.junit.jupiter.api.Test;

class DeadNodesTest {
  private static DatanodeInfo node(int n) {
    return new DatanodeInfo.DatanodeInfoBuilder().setNodeID(new DatanodeID("198.18.0." + n,
        "dn" + n, "uuid-" + n, 9866, 9864, 9865, 9867)).build();
  }

  @Test
  void aNodeFoundDeadIsDeadForOnePeriodNotRenewedWithinIt() {
    AtomicLong now = new AtomicLong(1_000);
    DeadNodes d = new DeadNodes(now::get);
    DatanodeInfo a = node(1);
    DatanodeInfo b = node(2);
    assertFalse(d.isDead(a));
    d.learn(a);
    assertTrue(d.isDead(a));
    assertFalse(d.isDead(b));
    now.addAndGet(DeadNodes.TTL_MS - 1);
    assertTrue(d.isDead(a));
    d.learn(a); // found dead again within the period: not extended
    now.addAndGet(1);
    assertFalse(d.isDead(a), "forgotten after the period");
    d.learn(a); // found dead again after it: a new period
    now.addAndGet(DeadNodes.TTL_MS - 1);
    assertTrue(d.isDead(a));
  }
}
