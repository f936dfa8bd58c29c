package io.netec.hdfs.proof;

import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.codec.RsMatrix;
import io.netec.hdfs.route.DecodeSurvivors;
import io.netec.hdfs.route.RepairRequest;
import io.netec.hdfs.route.RepairVerifier;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.ServiceDirectory;
import io.netec.hdfs.route.SurvivorFault;
import io.netec.hdfs.switchroute.wire.Hex;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.util.DataChecksum;

/**
 * The plugin's verifier of every route (README, "Integrity"): for each attempt it draws a fresh
 * key, picks the k units a decode of the request needs (as the routes do: all-zero units first,
 * then survivors in order), and asks each streamed one's DataNode, directly and never through a
 * switch or any hop that computes on the data, for the fingerprint of its range under that key.
 * A rebuilt row is proven when its own fingerprint equals the decode coefficients' combination
 * of the survivors' ({@link Fingerprint}: any change goes unnoticed with probability below
 * 2^-39). The key and the fingerprints never leave the verifier and the survivors.
 */
public final class ProofVerifier implements RepairVerifier {
  private static final SecureRandom RANDOM = new SecureRandom();
  /** How long a failed attempt waits for its survivors' proofs to tell who was at fault. */
  static final int SETTLE_MS = 2000;
  /**
   * Survivors are asked this long after an attempt starts, or once its route took it on, or
   * at its first byte, whichever comes first ({@link Attempt#begin}).
   */
  static final int START_DELAY_MS = 20;
  private static final java.util.concurrent.ScheduledExecutorService TIMER =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "netec-proof-timer");
        t.setDaemon(true);
        return t;
      });

  private final Function<DatanodeInfo, InetSocketAddress> services;
  private final int timeoutMs;

  /** Survivors' proof services where the settings say (netec.proof.port, this JVM's own). */
  public ProofVerifier(NetecSettings settings) {
    this(dn -> ServiceDirectory.resolve(ServiceDirectory.Service.PROOF, dn, settings),
        settings.proofTimeoutMs());
  }

  /**
   * @param services where each DataNode's proof service listens
   * @param timeoutMs how long a check waits for the survivors' fingerprints
   */
  public ProofVerifier(Function<DatanodeInfo, InetSocketAddress> services, int timeoutMs) {
    this.services = services;
    this.timeoutMs = timeoutMs;
  }

  @Override
  public Attempt start(RepairRequest req) {
    byte[] key = new byte[Fingerprint.KEY_BYTES];
    RANDOM.nextBytes(key);
    List<Integer> available = new ArrayList<>();
    for (RepairRequest.Survivor s : req.survivors()) {
      available.add(s.index);
    }
    DecodeSurvivors chosen;
    try {
      chosen = DecodeSurvivors.choose(req.dataUnits(), req.parityUnits(), req.unitLengths(),
          req.erased(), available, req.offset());
    } catch (RouteDeclinedException e) {
      return new ProofAttempt(req, key, null, null, new ArrayList<>(), timeoutMs,
          "no proof: " + e.getMessage());
    }
    int k = req.dataUnits();
    byte[] decode = RsMatrix.decodeRows(k, req.parityUnits(), chosen.units, req.erased());
    List<ProofCall> calls = new ArrayList<>();
    for (int i = chosen.zeros; i < k; i++) {
      RepairRequest.Survivor s = req.survivors().get(available.indexOf(chosen.units[i]));
      InetSocketAddress at;
      try {
        at = services.apply(s.node);
      } catch (RuntimeException e) { // a DataNode without an address: its part cannot be asked
        at = null;
      }
      String proof;
      try {
        proof = io.netec.hdfs.route.TokenProof.prove(s.token, s.block); // the token stays here
      } catch (java.io.IOException e) {
        proof = ""; // refused by the survivor, naming the block
      }
      calls.add(ProofCall.prepare(s.index, at, new ProofRequest(s.block, proof,
          req.unitLength(s.index), req.offset(), req.length(), key)));
    }
    ProofAttempt a = new ProofAttempt(req, key, chosen, decode, calls, timeoutMs, null);
    a.startLater();
    return a;
  }

  /** One attempt's proof: the survivors' calls and the rows' own fingerprints. */
  private static final class ProofAttempt implements Attempt {
    private final RepairRequest req;
    private final byte[] key;
    private final DecodeSurvivors chosen;
    private final byte[] decode;
    private final List<ProofCall> calls;
    private final int timeoutMs;
    private final String unprovable;
    private final Fingerprint[] rows;
    private final long started = System.nanoTime();
    /** When the route delivered its rows: the survivors' fingerprints are due from then. */
    private long due;
    private boolean asked;
    private java.util.concurrent.ScheduledFuture<?> timer;

    ProofAttempt(RepairRequest req, byte[] key, DecodeSurvivors chosen, byte[] decode,
        List<ProofCall> calls, int timeoutMs, String unprovable) {
      this.req = req;
      this.key = key;
      this.chosen = chosen;
      this.decode = decode;
      this.calls = calls;
      this.timeoutMs = timeoutMs;
      this.unprovable = unprovable;
      this.rows = new Fingerprint[req.rows()];
    }

    /**
     * Asks the survivors after {@value #START_DELAY_MS} ms, or sooner ({@link #begin}: the
     * route took the attempt on, or delivered its first byte): a route that declines (at once,
     * without a byte) costs the survivors no read.
     */
    void startLater() {
      timer = TIMER.schedule(this::ask, START_DELAY_MS, TimeUnit.MILLISECONDS);
    }

    /** Starts the survivors' calls (once). */
    void ask() {
      synchronized (this) {
        if (asked) {
          return;
        }
        asked = true;
      }
      for (ProofCall c : calls) {
        c.start();
      }
    }

    @Override
    public void begin() {
      ask();
    }

    @Override
    public synchronized void update(int row, long position, java.nio.ByteBuffer data) {
      if (rows[row] == null) {
        rows[row] = new Fingerprint(key);
      }
      rows[row].update(position, data);
    }

    @Override
    public DataChecksum survivorsChecksum() throws IOException {
      if (unprovable != null) {
        throw new IOException(unprovable);
      }
      ask();
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      List<String> why = new ArrayList<>();
      while (true) {
        why.clear();
        for (ProofCall c : calls) {
          DataChecksum sum = c.checksumNow();
          if (sum != null) {
            return sum;
          }
          if (c.failure() != null) {
            why.add(c.failure());
          }
        }
        if (why.size() == calls.size()) {
          throw new SurvivorFault(units(calls), "no survivor told its checksum: " + why);
        }
        if (System.nanoTime() > deadline) {
          throw new SurvivorFault(units(calls), "no survivor told its checksum within "
              + timeoutMs + " ms");
        }
        ProofCall.awaitAny(calls, 10);
      }
    }

    private static List<Integer> units(List<ProofCall> calls) {
      List<Integer> u = new ArrayList<>();
      for (ProofCall c : calls) {
        u.add(c.unit());
      }
      return u;
    }

    @Override
    public String check(int row) throws IOException {
      if (unprovable != null) {
        throw new IOException(unprovable);
      }
      ask();
      if (due == 0) {
        due = System.nanoTime();
      }
      long deadline = due + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      byte[][] fps = new byte[calls.size()][];
      for (int i = 0; i < fps.length; i++) {
        fps[i] = calls.get(i).awaitFingerprint(deadline);
      }
      List<Integer> failed = new ArrayList<>();
      List<String> why = new ArrayList<>();
      for (int i = 0; i < fps.length; i++) {
        ProofCall c = calls.get(i);
        if (fps[i] == null && c.failure() != null) {
          failed.add(c.unit());
          why.add("unit " + c.unit() + ": " + c.failure());
        }
      }
      if (!failed.isEmpty()) { // every one that failed, so that one rerun replaces them all
        throw new SurvivorFault(failed, "units " + failed + " could not prove their bytes: "
            + String.join("; ", why));
      }
      if (java.util.Arrays.stream(fps).anyMatch(f -> f == null)) {
        throw new SurvivorFault(lateUnits(), "no fingerprint from units " + lateUnits()
            + " within " + timeoutMs + " ms of the rebuilt rows");
      }
      int k = req.dataUnits();
      byte[] coefficients = new byte[calls.size()];
      for (int i = 0; i < coefficients.length; i++) {
        coefficients[i] = decode[row * k + chosen.zeros + i];
      }
      byte[] expected = Fingerprint.combine(coefficients, fps);
      byte[] got;
      synchronized (this) {
        if (rows[row] == null) {
          rows[row] = new Fingerprint(key); // a row of zeros only
        }
        got = rows[row].finish();
      }
      if (Fingerprint.matches(expected, got)) {
        return null;
      }
      return "unit " + req.erased()[row] + " as rebuilt has fingerprint " + Hex.encode(got)
          + ", the decode of units " + units(calls) + " has " + Hex.encode(expected);
    }

    private List<Integer> lateUnits() {
      List<Integer> late = new ArrayList<>();
      for (ProofCall c : calls) {
        if (!c.hasFingerprint()) {
          late.add(c.unit());
        }
      }
      return late;
    }

    @Override
    public List<Integer> culprits(boolean stalled) {
      synchronized (this) {
        if (!asked) {
          return new ArrayList<>(); // the route gave up before the survivors were asked
        }
      }
      long deadline = System.nanoTime()
          + TimeUnit.MILLISECONDS.toNanos(Math.min(SETTLE_MS, timeoutMs));
      while (true) {
        List<Integer> failed = new ArrayList<>();
        for (ProofCall c : calls) {
          if (c.failure() != null) {
            failed.add(c.unit());
          }
        }
        if (!failed.isEmpty()) {
          return failed;
        }
        List<Integer> late = lateUnits();
        if (late.isEmpty()) {
          return late; // every survivor proved its part: the route's own fault
        }
        if (stalled && late.size() < calls.size()) {
          return late; // the route waited on these while the others were done
        }
        if (System.nanoTime() > deadline) {
          return new ArrayList<>();
        }
        ProofCall.awaitAny(calls, 10);
      }
    }

    @Override
    public void close() {
      if (timer != null) {
        timer.cancel(false);
      }
      for (ProofCall c : calls) {
        c.close();
      }
    }

    @Override
    public String toString() {
      return "proof of " + req + " started " + (System.nanoTime() - started) / 1_000_000
          + " ms ago";
    }
  }
}
