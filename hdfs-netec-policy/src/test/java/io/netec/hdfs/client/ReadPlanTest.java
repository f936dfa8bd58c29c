package io.netec.hdfs.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.route.RepairRequest;
import java.io.IOException;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo.DatanodeInfoBuilder;
import org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedStripedBlock;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.io.erasurecode.ECSchema;
import org.apache.hadoop.security.token.Token;
import org.junit.jupiter.api.Test;

/**
 * A positional read cut into cells, without a cluster: the bytes each way of serving it
 * moves (what the cost model judges by) and the repair requests the routes would serve.
 */
class ReadPlanTest {
  private static final int K = 3;
  private static final int M = 2;
  private static final int CELL = 64 * 1024;
  private static final long STRIPES = 4;
  private static final long GROUP = K * CELL * STRIPES;
  private static final ErasureCodingPolicy RS32 =
      new ErasureCodingPolicy(new ECSchema("rs", K, M), CELL);

  /** Block group {@code n} of a file of two full groups; every unit listed. */
  private static LocatedStripedBlock group(int n) {
    return group(n, GROUP);
  }

  /** Block group {@code n} of {@code bytes} bytes; every unit listed. */
  private static LocatedStripedBlock group(int n, long bytes) {
    int units = K + M;
    DatanodeInfo[] locs = new DatanodeInfo[units];
    String[] storages = new String[units];
    StorageType[] types = new StorageType[units];
    byte[] indices = new byte[units];
    @SuppressWarnings("unchecked")
    Token<BlockTokenIdentifier>[] tokens = new Token[units];
    for (int i = 0; i < units; i++) {
      locs[i] = new DatanodeInfoBuilder().setIpAddr("198.18.0." + (i + 1))
          .setHostName("dn" + i).setDatanodeUuid("dn" + i).setXferPort(9866).build();
      storages[i] = "s" + i;
      types[i] = StorageType.DISK;
      indices[i] = (byte) i;
      tokens[i] = new Token<>();
    }
    ExtendedBlock b = new ExtendedBlock("bp", -1024L * (n + 1), bytes, 1);
    LocatedStripedBlock g = new LocatedStripedBlock(b, locs, storages, types, indices,
        n * GROUP, false, new DatanodeInfo[0]);
    g.setBlockTokens(tokens);
    return g;
  }

  private static final LocatedStripedBlock G0 = group(0);
  private static final LocatedStripedBlock G1 = group(1);

  private static ReadPlan plan(long position, int length, Integer... lostUnits)
      throws IOException {
    Set<Integer> lost = Set.of(lostUnits);
    return counted(ReadPlan.of("/f", RS32, 2 * GROUP, position, length, 60_000,
        new ReadPlan.Layout() {
          @Override
          public LocatedStripedBlock groupAt(long offset) {
            return offset < GROUP ? G0 : G1;
          }

          @Override
          public boolean lost(LocatedStripedBlock g, int index) {
            return lost.contains(index);
          }
        }));
  }

  /**
   * {@code p} (null: none), whose routed bytes (counted from the lost spans, before any request is built)
   * are checked against the requests' own count.
   */
  private static ReadPlan counted(ReadPlan p) {
    if (p == null) {
      return null; // nothing to read
    }
    long before = p.routedBytes();
    assertEquals(p.requests().stream().mapToLong(RepairRequest::bytesToRebuild).sum(), before);
    assertEquals(p.requests().size(), p.groupStarts.size());
    return p;
  }

  /** File offset of unit {@code unit}'s cell in stripe {@code stripe} of group 0. */
  private static long cellAt(long stripe, int unit) {
    return (stripe * K + unit) * CELL;
  }

  private static Set<Integer> survivorsOf(RepairRequest r) {
    return r.survivors().stream().map(s -> s.index).collect(Collectors.toSet());
  }

  /**
   * The plan's cell arithmetic is Hadoop's: every part lies in one cell, the parts tile the
   * read in order, and each part's unit and unit offset map back to its file offset through
   * StripedBlockUtil.offsetInBlkToOffsetInBG, for reads of every alignment across both groups.
   */
  @Test
  void everyPartMapsBackToItsFileOffsetAsHadoopsStripingDoes() throws IOException {
    java.util.Random rnd = new java.util.Random(3);
    for (int i = 0; i < 300; i++) {
      long position = (long) (rnd.nextDouble() * 2 * GROUP);
      int length = 1 + rnd.nextInt(i % 3 == 0 ? 100 : 5 * K * CELL);
      ReadPlan p = plan(position, length);
      long at = position;
      for (ReadPlan.Part part : p.parts) {
        assertEquals(at, part.filePos, "parts tile the read");
        long inGroup = part.filePos - part.group.getStartOffset();
        assertEquals(inGroup, org.apache.hadoop.hdfs.util.StripedBlockUtil.offsetInBlkToOffsetInBG(
            CELL, K, part.unitOffset, part.unit), "unit " + part.unit + " at " + part.unitOffset);
        assertTrue(part.unitOffset % CELL + part.len <= CELL, "one cell: " + part.filePos);
        at += part.len;
      }
      assertEquals(Math.min(position + length, 2 * GROUP), at, "the read, cut at the end");
    }
  }

  @Test
  void aHealthyReadMovesItsOwnBytesAndAsksNoRoute() throws IOException {
    ReadPlan p = plan(cellAt(1, 0) + 100, 2 * CELL);
    assertEquals(2 * CELL, p.length);
    assertEquals(2 * CELL, p.hadoopBytes);
    assertEquals(2 * CELL, p.healthyBytes);
    assertTrue(p.lost.isEmpty());
    assertTrue(p.requests().isEmpty());
    assertEquals(0, p.routedBytes());
    assertEquals(3, p.parts.size(), "cut at cell edges: 100 bytes short, a cell, the rest");
  }

  @Test
  void aLostCellCostsHadoopKCellsAndTheRoutesOne() throws IOException {
    ReadPlan p = plan(cellAt(2, 1), CELL, 1);
    assertEquals((long) K * CELL, p.hadoopBytes);
    assertEquals(0, p.healthyBytes);
    assertEquals(CELL, p.routedBytes());
    assertEquals(1, p.requests().size());
    RepairRequest r = p.requests().get(0);
    assertArrayEquals(new int[] {1}, r.erased());
    assertEquals(2L * CELL, r.offset(), "unit 1's bytes of stripe 2");
    assertEquals(CELL, r.length());
    assertEquals(Set.of(0, 2, 3, 4), survivorsOf(r), "every listed unit but the lost one");
    assertEquals(60_000, r.progressTimeoutMs());
    assertEquals(G0.getStartOffset(), (long) p.groupStarts.get(0));
  }

  @Test
  void aSmallRangeInsideALostCellCostsHadoopKTimesItsLength() throws IOException {
    ReadPlan p = plan(cellAt(0, 2) + 5000, 4096, 2);
    assertEquals((long) K * 4096, p.hadoopBytes);
    assertEquals(4096, p.routedBytes());
    assertEquals(5000, p.requests().get(0).offset());
  }

  @Test
  void aWholeStripeWithALostCellCostsHadoopNoMoreThanHealthy() throws IOException {
    // Hadoop's stream reads the k - 1 healthy cells and one parity cell: k cells either way
    ReadPlan p = plan(cellAt(1, 0), K * CELL, 1);
    assertEquals((long) K * CELL, p.hadoopBytes);
    assertEquals((long) (K - 1) * CELL, p.healthyBytes);
    assertEquals(CELL, p.routedBytes());
    assertEquals(1, p.lost.size());
  }

  @Test
  void healthyBytesAtOtherInCellOffsetsAreReadOnceMore() throws IOException {
    // the second half of unit 0's cell (healthy) and the first half of unit 1's (lost): the
    // lost half costs k times, the healthy half lies outside its in-cell offsets
    ReadPlan p = plan(cellAt(0, 0) + CELL / 2, CELL, 1);
    assertEquals((long) K * (CELL / 2) + CELL / 2, p.hadoopBytes);
    assertEquals(CELL / 2, p.healthyBytes);
    assertEquals(CELL / 2, p.routedBytes());
  }

  @Test
  void lostUnitsOverOneRangeAreOneTaskOfTwoRowsElseATaskEach() throws IOException {
    ReadPlan same = plan(cellAt(0, 0), K * CELL, 0, 2);
    assertEquals(1, same.requests().size());
    assertArrayEquals(new int[] {0, 2}, same.requests().get(0).erased());
    assertEquals(Set.of(1, 3, 4), survivorsOf(same.requests().get(0)));
    assertEquals(2L * CELL, same.routedBytes());
    // unit 0's cells of stripes 0 and 1, unit 2's of stripe 0 only: different ranges
    ReadPlan apart = plan(cellAt(0, 0), (K + 1) * CELL, 0, 2);
    assertEquals(2, apart.requests().size());
    assertArrayEquals(new int[] {0}, apart.requests().get(0).erased());
    assertArrayEquals(new int[] {2}, apart.requests().get(1).erased());
    assertEquals(2L * CELL, apart.requests().get(0).length(), "unit 0 over stripes 0 and 1");
    assertEquals(CELL, apart.requests().get(1).length(), "unit 2 over stripe 0 alone");
  }

  @Test
  void aLostUnitOutsideTheReadIsNoSurvivor() throws IOException {
    ReadPlan p = plan(cellAt(0, 0), CELL, 0, 2);
    assertEquals(1, p.requests().size(), "unit 2 is lost but not read");
    assertArrayEquals(new int[] {0}, p.requests().get(0).erased());
    assertEquals(Set.of(1, 3, 4), survivorsOf(p.requests().get(0)), "not the lost unit 2");
  }

  @Test
  void anEmptyUnitOfAShortGroupIsNoSurvivor() throws IOException {
    // a group of one cell and a half: unit 0 whole, unit 1 half, unit 2 empty, parity whole
    LocatedStripedBlock shortGroup = group(0, CELL + CELL / 2);
    ReadPlan p = ReadPlan.of("/f", RS32, CELL + CELL / 2, 0, 2 * CELL, 60_000,
        new ReadPlan.Layout() {
          @Override
          public LocatedStripedBlock groupAt(long offset) {
            return shortGroup;
          }

          @Override
          public boolean lost(LocatedStripedBlock g, int index) {
            return index <= 1;
          }
        });
    counted(p);
    assertEquals(CELL + CELL / 2, p.routedBytes(), "unit 0 whole, unit 1's half");
    assertEquals(Set.of(3, 4), survivorsOf(p.requests().get(0)), "unit 2 holds nothing");
  }

  @Test
  void aReadAcrossTwoGroupsAsksEachGroupApart() throws IOException {
    ReadPlan p = plan(GROUP - CELL, 2 * CELL, 2, 0);
    // the last cell of group 0 is unit 2's; the first of group 1 unit 0's: both lost
    assertEquals(2, p.requests().size());
    assertEquals(G0.getBlock(), p.requests().get(0).blockGroup());
    assertEquals(G1.getBlock(), p.requests().get(1).blockGroup());
    assertEquals(GROUP, (long) p.groupStarts.get(1));
    assertEquals(2L * K * CELL, p.hadoopBytes);
  }

  @Test
  void aReadIsCutAtTheFilesEndAndNothingPastIt() throws IOException {
    ReadPlan p = plan(2 * GROUP - 100, 1000);
    assertEquals(100, p.length);
    assertNull(plan(2 * GROUP, 10));
    assertNull(plan(0, 0));
    assertNull(plan(-1, 10));
  }
}
