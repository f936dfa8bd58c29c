package io.netec.hdfs.bench;

import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.NetecCoding;
import io.netec.hdfs.codec.RsMatrix;
import io.netec.hdfs.switchroute.SoftwareSwitch;
import io.netec.hdfs.switchroute.SurvivorAgent;
import io.netec.hdfs.switchroute.SwitchClient;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;

/**
 * End to end over TCP loopback on this machine: k survivor agents (blocks in memory), the
 * software switch and a reader ({@link SwitchClient}) rebuilding one 64 MiB unit, against the
 * baseline measured in the same run: the reader pulls the k survivor streams itself over TCP
 * and decodes with ISA-L (what Hadoop's reconstruction does, minus HDFS). Reported: rebuilt
 * MB/s, bytes the reader took in per rebuilt byte, the switch's own CPU seconds per GiB of
 * survivor input (its I/O threads: what a switch host would spend), the survivor agents' and
 * the reader's CPU seconds per rebuilt GiB (which process of a testbed would be the limit), and
 * this process's CPU seconds per rebuilt GiB on each path (agents, switch and reader, or senders
 * and reader: on one machine every hop of the switch path costs CPU that a network would carry
 * instead), and the switch path again with the rebuilt unit proven as the router proves every
 * routed row (README, "Integrity": the survivors' proof services read and fingerprint their
 * units, the reader fingerprints what it receives and checks): its rate against the unproven
 * path's and what the proof costs survivors and reader in CPU. Everything shares the machine's cores, so this measures software overhead, not a
 * network's line rate. {@code -Dpayload=}, {@code -Dwarmups=}, {@code -DwarmupSeconds=},
 * {@code -Drounds=} and {@code -Dks=} change the run.
 */
public final class SwitchEndToEndBenchmark {
  private static final int UNIT = 64 << 20;
  private static final int PAYLOAD = Integer.getInteger("payload", 32 * 1024);
  /**
   * Runs before measuring, at least this many and for at least this long: until the JIT has
   * compiled both paths (several seconds of C2 on this machine), it competes for the cores.
   */
  private static final int WARM_UPS = Integer.getInteger("warmups", 8);
  private static final int WARM_UP_SECONDS = Integer.getInteger("warmupSeconds", 20);
  private static final int ROUNDS = Integer.getInteger("rounds", 11);
  /** Survivor counts: RS(3,2), RS(6,3), RS(10,4) and one between ({@code -Dks=3,6}: fewer). */
  private static final int[] KS = java.util.Arrays.stream(System.getProperty("ks", "3,4,6,10")
      .split(",")).mapToInt(Integer::parseInt).toArray();

  public static void main(String[] args) throws Exception {
    System.out.printf(Locale.ROOT, "# End to end over TCP loopback, one %d MiB unit rebuilt,"
        + " %d-byte payloads, best of %d alternating rounds after %d warm-ups and %d s"
        + " (%d cores)%n%n", UNIT >> 20, PAYLOAD, ROUNDS, WARM_UPS, WARM_UP_SECONDS,
        Runtime.getRuntime().availableProcessors());
    System.out.println("| k | switch MB/s | switch ingress/rebuilt | switch CPU s/GiB in |"
        + " agents CPU s/GiB | reader CPU s/GiB | path CPU s/GiB | host decode MB/s |"
        + " host ingress/rebuilt | host CPU s/GiB | switch/host | proven MB/s |"
        + " proven/switch | survivors' proof CPU s/GiB | reader's proof CPU s/GiB |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (int k : KS) {
      byte[][] units = new byte[k][UNIT];
      Random rnd = new Random(k);
      for (byte[] u : units) {
        rnd.nextBytes(u);
      }
      long warmUntil = System.nanoTime() + (k == KS[0] ? WARM_UP_SECONDS * 1_000_000_000L : 0);
      // the JIT is warm after the first k
      for (int i = 0; i < (k == KS[0] ? WARM_UPS : 2) || System.nanoTime() < warmUntil; i++) {
        viaSwitch(units);
        viaHost(units);
        viaSwitch(units, true);
      }
      // alternating rounds: every path sees the same state of the machine
      double[] sw = viaSwitch(units);
      double[] host = viaHost(units);
      double[] proven = viaSwitch(units, true);
      for (int i = 1; i < ROUNDS; i++) {
        sw = faster(sw, viaSwitch(units));
        host = faster(host, viaHost(units));
        proven = faster(proven, viaSwitch(units, true));
      }
      System.out.printf(Locale.ROOT, "| %d | %.0f | %.4f | %.2f | %.2f | %.2f | %.2f | %.0f |"
          + " %.2f | %.2f | %.2fx | %.0f | %.3f | %.3f | %.3f |%n", k, sw[0], sw[1], sw[3], sw[4],
          sw[5], sw[2], host[0], host[1], host[2], sw[0] / host[0], proven[0],
          proven[0] / sw[0], proven[6], proven[7]);
    }
  }

  /** The run with the higher rate. */
  private static double[] faster(double[] a, double[] b) {
    return b[0] > a[0] ? b : a;
  }

  private static final double GIB = 1 << 30;

  private static final java.lang.management.ThreadMXBean THREADS =
      java.lang.management.ManagementFactory.getThreadMXBean();

  private static long agentsCpu(List<SurvivorAgent> agents) {
    long sum = 0;
    for (SurvivorAgent a : agents) {
      sum += a.cpuNanos();
    }
    return sum;
  }

  /** CPU nanoseconds this process has used so far (every thread). */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /**
   * {MB/s rebuilt, reader bytes in per rebuilt byte, process CPU s per rebuilt GiB, switch CPU
   * s per GiB of survivor input, the agents' and the reader's CPU s per rebuilt GiB} through
   * the software switch.
   */
  private static double[] viaSwitch(byte[][] units) throws Exception {
    return viaSwitch(units, false);
  }

  /**
   * As {@link #viaSwitch(byte[][])}; with {@code prove}, the rebuilt unit is also proven as the
   * router proves every routed row: the survivors' proof service (on the same in-memory blocks)
   * fingerprints each survivor's unit, the reader fingerprints the rebuilt bytes as they arrive
   * and checks them against the survivors'. Appends {survivors' proof CPU s per GiB of range
   * read, the reader's proof CPU s per rebuilt GiB}.
   */
  static double[] viaSwitch(byte[][] units, boolean prove) throws Exception {
    int k = units.length;
    // what a DataNode's verified reads do: every read also feeds the proofs of its range
    io.netec.hdfs.proof.ReadTaps taps = new io.netec.hdfs.proof.ReadTaps();
    // units read into the agents' frames as a DataNode's blocks are (ByteBufferReadable)
    io.netec.hdfs.route.MemoryBlocks memory = new io.netec.hdfs.route.MemoryBlocks();
    memory.evenIdsArraysOnly = false;
    memory.taps = taps;
    for (int i = 0; i < k; i++) {
      memory.put(i, units[i]);
    }
    List<AutoCloseable> open = new ArrayList<>();
    List<SurvivorAgent> agents = new ArrayList<>();
    try {
      SoftwareSwitch.Options o = new SoftwareSwitch.Options();
      o.slotsPerArray = 256;
      SoftwareSwitch sw = new SoftwareSwitch(o);
      open.add(sw);
      List<SetupRequest.Survivor> sv = new ArrayList<>();
      for (int s = 0; s < k; s++) {
        SurvivorAgent a = new SurvivorAgent(memory, "127.0.0.1", 0, 8, 60_000);
        open.add(a);
        agents.add(a);
        sv.add(new SetupRequest.Survivor(s, "127.0.0.1:" + a.address().getPort(),
            new ExtendedBlock("bp", s, UNIT, 1).toString(), UNIT, ""));
      }
      byte[] row = RsMatrix.decodeRows(k, 3, survivors(k), new int[] {0});
      SetupRequest setup = new SetupRequest("bench", PAYLOAD, UNIT, 30_000, sv,
          new byte[][] {row});
      long[] got = {0};
      io.netec.hdfs.proof.ProofService proofs = null;
      io.netec.hdfs.route.RepairVerifier.Attempt proof = null;
      long[] proofNanos = {0};
      if (prove) {
        proofs = new io.netec.hdfs.proof.ProofService(memory, taps, "127.0.0.1", 0, 64, 10_000);
        open.add(proofs);
        io.netec.hdfs.proof.ProofService service = proofs;
        proof = new io.netec.hdfs.proof.ProofVerifier(dn -> service.address(), 60_000)
            .start(request(k));
      }
      io.netec.hdfs.route.RepairVerifier.Attempt attempt = proof;
      long proofCpu0 = proofs == null ? 0 : proofs.cpuNanos();
      long cpu0 = processCpuNanos();
      long switchCpu0 = sw.getCpuNanos();
      long agentsCpu0 = agentsCpu(agents);
      long readerCpu0 = THREADS.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      SwitchClient.Result res = SwitchClient.rebuild(sw.controlAddress(), setup,
          new long[] {UNIT}, () -> new SwitchClient.Sink[] {(b, off, len) -> {
            if (attempt != null) { // what the sink does: every kept byte to the proof
              long c0 = THREADS.getCurrentThreadCpuTime();
              attempt.update(0, got[0], ByteBuffer.wrap(b, off, len));
              proofNanos[0] += THREADS.getCurrentThreadCpuTime() - c0;
            }
            got[0] += len;
          }});
      if (attempt != null) {
        long c0 = THREADS.getCurrentThreadCpuTime();
        String why = attempt.check(0);
        proofNanos[0] += THREADS.getCurrentThreadCpuTime() - c0;
        attempt.close();
        if (why != null) {
          throw new IllegalStateException("the rebuilt unit failed its proof: " + why);
        }
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      double cpu = (processCpuNanos() - cpu0) / 1e9;
      double switchCpu = (sw.getCpuNanos() - switchCpu0) / 1e9;
      double agentsCpu = (agentsCpu(agents) - agentsCpu0) / 1e9;
      double readerCpu = (THREADS.getCurrentThreadCpuTime() - readerCpu0) / 1e9;
      double gib = got[0] / GIB;
      double survivorsProof = proofs == null ? 0
          : (proofs.cpuNanos() - proofCpu0) / 1e9 / (proofs.bytesRead() / GIB);
      return new double[] {got[0] / secs / 1e6, (double) res.bytesReceived / got[0],
          cpu / gib, switchCpu / (sw.getBytesIn() / GIB), agentsCpu / gib, readerCpu / gib,
          survivorsProof, proofNanos[0] / 1e9 / gib};
    } finally {
      for (AutoCloseable c : open) {
        c.close();
      }
    }
  }

  /**
   * {MB/s rebuilt, reader bytes in per rebuilt byte, process CPU s per rebuilt GiB}: k TCP
   * streams in, ISA-L decode here.
   */
  private static double[] viaHost(byte[][] units) throws Exception {
    int k = units.length;
    List<ServerSocket> servers = new ArrayList<>();
    List<Thread> senders = new ArrayList<>();
    try {
      for (int s = 0; s < k; s++) {
        ServerSocket ss = new ServerSocket(0);
        servers.add(ss);
        byte[] u = units[s];
        Thread t = new Thread(() -> {
          try (Socket c = ss.accept(); OutputStream out = c.getOutputStream()) {
            out.write(u);
          } catch (IOException e) {
            // benchmark teardown
          }
        });
        t.start();
        senders.add(t);
      }
      NetecCoding.Decoder decoder = new NetecCoding.Decoder(k, 3, CoderBackend.ISAL, "bench");
      long cpu0 = processCpuNanos();
      long t0 = System.nanoTime();
      Socket[] socks = new Socket[k];
      DataInputStream[] in = new DataInputStream[k];
      for (int s = 0; s < k; s++) {
        socks[s] = new Socket("127.0.0.1", servers.get(s).getLocalPort());
        in[s] = new DataInputStream(socks[s].getInputStream());
      }
      int chunk = 1 << 20; // Hadoop reads cell-sized chunks from each source, then decodes
      ByteBuffer[] inputs = new ByteBuffer[k + 3];
      byte[][] bufs = new byte[k][chunk];
      ByteBuffer out = ByteBuffer.allocateDirect(chunk);
      ByteBuffer[] direct = new ByteBuffer[k];
      for (int s = 0; s < k; s++) {
        direct[s] = ByteBuffer.allocateDirect(chunk);
      }
      long taken = 0;
      long rebuilt = 0;
      for (int done = 0; done < UNIT; done += chunk) {
        for (int s = 0; s < k; s++) {
          in[s].readFully(bufs[s]);
          direct[s].clear();
          direct[s].put(bufs[s]).flip();
          inputs[s + 1] = direct[s];
          taken += chunk;
        }
        out.clear();
        decoder.decode(chunk, inputs, new int[] {0}, new ByteBuffer[] {out});
        rebuilt += chunk;
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      for (Socket c : socks) {
        c.close();
      }
      for (Thread t : senders) {
        t.join(); // their CPU is the path's too
      }
      double cpu = (processCpuNanos() - cpu0) / 1e9;
      return new double[] {rebuilt / secs / 1e6, (double) taken / rebuilt,
          cpu / (rebuilt / GIB)};
    } finally {
      for (ServerSocket ss : servers) {
        ss.close();
      }
      for (Thread t : senders) {
        t.join();
      }
    }
  }

  /**
   * The repair the benchmark's switch task does, as the router would hand it to a verifier:
   * unit 0 of a group of k data and 3 parity units of {@value #UNIT} bytes, from units 1..k,
   * unit i held in block id i - 1.
   */
  private static io.netec.hdfs.route.RepairRequest request(int k) {
    org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy policy =
        new org.apache.hadoop.hdfs.protocol.ErasureCodingPolicy(
            new org.apache.hadoop.io.erasurecode.ECSchema("rs", k, 3), UNIT);
    List<io.netec.hdfs.route.RepairRequest.Survivor> sv = new ArrayList<>();
    org.apache.hadoop.hdfs.protocol.DatanodeInfo dn =
        new org.apache.hadoop.hdfs.protocol.DatanodeInfo.DatanodeInfoBuilder().build();
    for (int i = 1; i <= k; i++) {
      sv.add(new io.netec.hdfs.route.RepairRequest.Survivor(i, dn,
          new ExtendedBlock("bp", i - 1, UNIT, 1), ""));
    }
    return new io.netec.hdfs.route.RepairRequest("bench", new ExtendedBlock("bp", 1000, 0, 1),
        (long) k * UNIT, policy, new int[] {0}, 0, UNIT, sv);
  }

  /** Units 1..k: the decode uses survivors 1..k to rebuild unit 0. */
  private static int[] survivors(int k) {
    int[] s = new int[k];
    for (int i = 0; i < k; i++) {
      s[i] = i + 1;
    }
    return s;
  }
}
