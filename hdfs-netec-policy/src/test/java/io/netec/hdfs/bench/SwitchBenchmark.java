package io.netec.hdfs.bench;

import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.MatrixAccumulator;
import io.netec.hdfs.codec.MatrixCoder;
import io.netec.hdfs.codec.RsMatrix;
import io.netec.hdfs.switchroute.SwitchTask;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The software switch's aggregation on one core: {@link SwitchTask#onData} over k senders'
 * packets (multiply by coefficient, XOR into the slot, emit on completion), as GB/s of survivor
 * data in and rebuilt data out, with ISA-L's multiply-accumulate and with Java tables; baseline
 * in the same run: the pure-Java decode of the same bytes ({@code JavaMatrixCoder}).
 *
 * <p>Usage: SwitchBenchmark [seconds per measurement, default 2]
 */
public final class SwitchBenchmark {
  private static final int PAYLOAD = 32 * 1024;
  private static final int SLOTS = 64;
  private static final int STRIPES = 256; // 8 MiB per survivor per task

  public static void main(String[] args) throws Exception {
    double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
    System.out.printf(Locale.ROOT, "# Software switch aggregation, one core, %d-byte payloads,"
        + " %d slots (best of 3 rounds of %.1f s)%n%n", PAYLOAD, SLOTS, secs);
    boolean isal = io.netec.hdfs.codec.IsalNative.isAvailable();
    System.out.println("| k | rows | switch, ISA-L: GB/s in | GB/s out | switch, Java: GB/s in |"
        + " GB/s out | Java decode GB/s in | ISA-L/Java |");
    System.out.println("|---|---|---|---|---|---|---|---|");
    for (int k : new int[] {3, 6}) {
      for (int rows : new int[] {1, 2}) {
        double in = isal ? best(() -> switchRun(k, rows, secs, MatrixAccumulator::isal)) : 0;
        double javaIn = best(() -> switchRun(k, rows, secs, MatrixAccumulator::java));
        double java = best(() -> javaRun(k, rows, secs));
        System.out.printf(Locale.ROOT, "| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.1fx |%n",
            k, rows, in, in * rows / k, javaIn, javaIn * rows / k, java, in / javaIn);
      }
    }
  }

  private interface Run {
    double gbps() throws Exception;
  }

  private static double best(Run r) throws Exception {
    r.gbps(); // warm-up
    double best = 0;
    for (int i = 0; i < 3; i++) {
      best = Math.max(best, r.gbps());
    }
    return best;
  }

  private static SetupRequest setup(int k, int rows) throws Exception {
    int m = Math.max(rows, 2);
    int[] survivors = new int[k];
    int[] erased = new int[rows];
    for (int i = 0; i < rows; i++) {
      erased[i] = i;
    }
    for (int i = 0; i < k; i++) {
      survivors[i] = rows + i;
    }
    byte[] decode = RsMatrix.decodeRows(k, m, survivors, erased);
    byte[][] co = new byte[rows][];
    for (int r = 0; r < rows; r++) {
      co[r] = java.util.Arrays.copyOfRange(decode, r * k, (r + 1) * k);
    }
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    for (int s = 0; s < k; s++) {
      sv.add(new SetupRequest.Survivor(s, "h:1", "bp:blk_1_1", (long) STRIPES * PAYLOAD, ""));
    }
    return new SetupRequest("bench", PAYLOAD, (long) STRIPES * PAYLOAD, 30_000, sv, co);
  }

  /** GB/s of survivor data through SwitchTask.onData, stripes in order, ACK every S/4. */
  private static double switchRun(int k, int rows, double secs,
      SwitchTask.AccumulatorFactory multiplier) throws Exception {
    SetupRequest setup = setup(k, rows);
    byte[][] payload = new byte[k][PAYLOAD];
    Random rnd = new Random(k);
    for (byte[] p : payload) {
      rnd.nextBytes(p);
    }
    NetecPacket[][] packets = new NetecPacket[STRIPES][k];
    for (int q = 0; q < STRIPES; q++) {
      for (int s = 0; s < k; s++) {
        packets[q][s] = new NetecPacket(NetecPacket.DATA, 0, 0, s, 0, q % SLOTS, q, 0,
            payload[s]);
      }
    }
    long bytes = 0;
    long[] sink = new long[1];
    long end = System.nanoTime() + (long) (secs * 1e9);
    long start = System.nanoTime();
    while (System.nanoTime() < end) {
      SwitchTask t = new SwitchTask(0, 0, SLOTS, setup, multiplier);
      for (int q = 0; q < STRIPES; q++) {
        for (int s = 0; s < k; s++) {
          t.onData(packets[q][s], r -> sink[0] += r.payloadLength());
        }
        if (q % (SLOTS / 4) == SLOTS / 4 - 1) {
          t.onAck(new NetecPacket(NetecPacket.ACK, 0, 0, NetecPacket.READER, 0, 0, q + 1,
              SLOTS, new byte[0]));
        }
      }
      bytes += (long) STRIPES * k * PAYLOAD;
    }
    if (sink[0] == 0) {
      throw new IllegalStateException("no results");
    }
    return bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
  }

  /** GB/s of survivor data through the Java matrix coder, same rows, same chunk size. */
  private static double javaRun(int k, int rows, double secs) throws Exception {
    SetupRequest setup = setup(k, rows);
    byte[] matrix = new byte[rows * k];
    for (int r = 0; r < rows; r++) {
      for (int s = 0; s < k; s++) {
        matrix[r * k + s] = (byte) setup.coefficient(r, s);
      }
    }
    MatrixCoder coder = CoderBackend.JAVA.create(k, rows, matrix);
    byte[][] in = new byte[k][PAYLOAD];
    byte[][] out = new byte[rows][PAYLOAD];
    new Random(1).nextBytes(in[0]);
    int[] zeros = new int[Math.max(k, rows)];
    long bytes = 0;
    long end = System.nanoTime() + (long) (secs * 1e9);
    long start = System.nanoTime();
    while (System.nanoTime() < end) {
      for (int i = 0; i < 64; i++) {
        coder.code(PAYLOAD, in, zeros, out, zeros);
      }
      bytes += 64L * k * PAYLOAD;
    }
    return bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
  }
}
