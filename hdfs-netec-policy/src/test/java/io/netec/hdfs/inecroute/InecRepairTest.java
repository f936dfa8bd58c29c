package io.netec.hdfs.inecroute;

import io.netec.hdfs.route.MemoryBlocks;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.cluster.EcTestCluster;
import io.netec.hdfs.codec.CoderBackend;
import io.netec.hdfs.codec.IsalNative;
import io.netec.hdfs.codec.NetecCoding;
import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.switchroute.SurvivorAgent;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * INEC repairs without HDFS: k+m participants, each on its own engine, serving units of real RS
 * stripes from memory (token checked), and InecRepair rooted at a further engine. Every scheme,
 * over TCP and over verbs (the test provider), whole units and ranges, a group with short and
 * empty units: the rebuilt bytes are the erased units'. Refusals come back fast and named.
 */
class InecRepairTest {
  private final List<InecEngine> engines = new ArrayList<>();
  private final List<InecParticipant> participants = new ArrayList<>();

  /** Units of one group in memory, as a DataNode's dataset would serve them: block id i is
   * unit i, read with the token "token-i". */
  private static MemoryBlocks memory(byte[][] units) {
    MemoryBlocks mem = new MemoryBlocks();
    for (int i = 0; i < units.length; i++) {
      mem.put(i, units[i]);
    }
    mem.token = id -> "token-" + id;
    return mem;
  }

  @BeforeEach
  void needsTheEngine() {
    Assumptions.assumeTrue(InecEngine.unavailableReason() == null, "needs libnetec.so");
  }

  @AfterEach
  void stop() {
    participants.forEach(InecParticipant::close);
    engines.forEach(InecEngine::close);
  }

  private InecEngine engine(InecEngine.Transport t) throws IOException {
    String lib = t == InecEngine.Transport.VERBS ? EcTestCluster.mockVerbsLibrary() : null;
    InecEngine e = InecEngine.start("127.0.0.1", 0, lib, t == InecEngine.Transport.TCP);
    engines.add(e);
    return e;
  }

  /** One participant per unit; returns the sources a planner sees. */
  private List<InecRepair.Source> participants(byte[][] units, InecEngine.Transport t)
      throws IOException {
    return participants(memory(units), units, t);
  }

  private List<InecRepair.Source> participants(MemoryBlocks mem, byte[][] units,
      InecEngine.Transport t) throws IOException {
    List<InecRepair.Source> sources = new ArrayList<>();
    for (int i = 0; i < units.length; i++) {
      InecEngine e = engine(t);
      InecParticipant p = new InecParticipant(e, mem, "127.0.0.1", 0, 8);
      participants.add(p);
      sources.add(new InecRepair.Source(i, p.address(), e.dataAddress(),
          new ExtendedBlock("pool", i, units[i].length, 1), "token-" + i));
    }
    return sources;
  }

  /** k data units of the given lengths (the rest of each cell zeros) and m parity units. */
  private static byte[][] stripe(int k, int m, int[] dataLength, long seed) {
    int len = Arrays.stream(dataLength).max().getAsInt();
    Random rnd = new Random(seed);
    byte[][] full = new byte[k][len];
    for (int i = 0; i < k; i++) {
      byte[] b = new byte[dataLength[i]];
      rnd.nextBytes(b);
      System.arraycopy(b, 0, full[i], 0, b.length);
    }
    byte[][] parity = new byte[m][len];
    new NetecCoding.Encoder(k, m, CoderBackend.JAVA, "inec-test").encode(len, full, new int[k],
        parity, new int[m]);
    byte[][] units = new byte[k + m][];
    for (int i = 0; i < k; i++) {
      units[i] = Arrays.copyOf(full[i], dataLength[i]);
    }
    System.arraycopy(parity, 0, units, k, m);
    return units;
  }

  static Stream<Arguments> cases() {
    List<Arguments> a = new ArrayList<>();
    for (String scheme : new String[] {"rs", "ppr", "ecpipe"}) {
      for (InecEngine.Transport t : new InecEngine.Transport[] {InecEngine.Transport.TCP,
          InecEngine.Transport.VERBS}) {
        a.add(Arguments.of(scheme, t, 3, 2, new int[] {0}));
        a.add(Arguments.of(scheme, t, 3, 2, new int[] {4, 1}));
        a.add(Arguments.of(scheme, t, 6, 3, new int[] {2, 7, 5}));
      }
    }
    return a.stream();
  }

  private static InecRepair.Settings settings(String scheme, InecEngine.Transport t) {
    return new InecRepair.Settings(RepairGraph.Scheme.parse(scheme), t, 16 * 1024, 64 * 1024,
        10_000);
  }

  @ParameterizedTest(name = "{0} over {1}: RS({2},{3}) erased {4}")
  @MethodSource("cases")
  void everySchemeRebuildsWholeUnitsAndRanges(String scheme, InecEngine.Transport t, int k,
      int m, int[] erased) throws Exception {
    int unit = 200_000 + 123;
    int[] lengths = new int[k];
    Arrays.fill(lengths, unit);
    lengths[k - 1] = unit / 3; // a short last data unit: zeros past its end
    byte[][] units = stripe(k, m, lengths, k * 31L + erased.length);
    List<InecRepair.Source> sources = participants(units, t);
    List<InecRepair.Source> live = new ArrayList<>();
    for (InecRepair.Source s : sources) {
      if (Arrays.stream(erased).noneMatch(e -> e == s.index)) {
        live.add(s);
      }
    }
    long[] unitLength = Arrays.stream(units).mapToLong(u -> u.length).toArray();
    InecEngine root = engine(t);
    for (long[] range : new long[][] {{0, unit}, {5000, 70_001}}) {
      byte[][] got = rebuild(root, settings(scheme, t), k, m, unitLength, erased, live,
          range[0], range[1]);
      for (int r = 0; r < erased.length; r++) {
        byte[] want = new byte[(int) range[1]];
        byte[] u = units[erased[r]];
        int have = (int) Math.max(0, Math.min(range[1], u.length - range[0]));
        System.arraycopy(u, (int) range[0], want, 0, have);
        assertArrayEquals(want, got[r], scheme + " unit " + erased[r] + " range "
            + Arrays.toString(range));
      }
    }
  }

  private static byte[][] rebuild(InecEngine root, InecRepair.Settings s, int k, int m,
      long[] unitLength, int[] erased, List<InecRepair.Source> live, long offset, long length)
      throws IOException {
    byte[][] out = new byte[erased.length][(int) length];
    InecRepair.Result res = InecRepair.run(root, s, "test", k, m, unitLength, erased, live,
        offset, length, (row, data, off, n) -> data.get(out[row], (int) off, n));
    assertEquals(s.transport == InecEngine.Transport.AUTO ? res.transport : s.transport,
        res.transport);
    return out;
  }

  /** Unit i in rack /rack(i % 3 + 1), as rack-fault-tolerant placement spreads a group. */
  private List<InecRepair.Source> racked(byte[][] units, int... erased) throws Exception {
    List<InecRepair.Source> out = new ArrayList<>();
    for (InecRepair.Source s : participants(units, InecEngine.Transport.TCP)) {
      if (Arrays.stream(erased).noneMatch(e -> e == s.index)) {
        out.add(new InecRepair.Source(s.index, s.control, s.data, s.block, s.token,
            "/rack" + (s.index % 3 + 1)));
      }
    }
    return out;
  }

  /** Unit {@code erased} rebuilt over [0, length), checked; the plan by rack it reports. */
  private String rebuildRacked(String scheme, byte[][] units, int erased, int length,
      String readerRack, boolean byRack) throws Exception {
    long[] unitLength = Arrays.stream(units).mapToLong(u -> u.length).toArray();
    byte[] got = new byte[length];
    InecRepair.Result res = InecRepair.run(engine(InecEngine.Transport.TCP),
        settings(scheme, InecEngine.Transport.TCP), "racks", 6, 3, unitLength,
        new int[] {erased}, racked(units, erased), readerRack, byRack, 0, length,
        (row, data, off, n) -> data.get(got, (int) off, n));
    assertArrayEquals(Arrays.copyOf(units[erased], length), got);
    return res.racks;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"ecpipe", "rs"})
  void aRepairPlannedByRackTakesNearSurvivorsAndChainsEachRacksTogether(String scheme)
      throws Exception {
    // RS(6,3), unit 2 lost, the rebuilding node in /rack1: /rack1 holds 0, 3, 6; /rack2 1, 4,
    // 7; /rack3 5, 8
    int unit = 90_000;
    byte[][] units = stripe(6, 3, new int[] {unit, unit, unit, unit, unit, unit}, 21);
    // the reader's rack's three, then the fullest other rack's three: /rack3 not at all; a
    // chain visits /rack2's together, then /rack1's: one edge between racks; a star's three
    // streams from /rack2 cross
    assertEquals(scheme.equals("ecpipe")
        ? "planned by rack: survivors in /rack2, /rack1, reader in /rack1: 1 edges between racks"
        : "planned by rack: survivors in /rack1, /rack2, reader in /rack1: 3 edges between racks",
        rebuildRacked(scheme, units, 2, unit, "/rack1", true));
    // the same in the sources' order (0, 1, 3, 4, 5, 6): a chain crosses at every turn
    assertEquals(scheme.equals("ecpipe")
        ? "in the NameNode's order: survivors in /rack1, /rack2, /rack3, reader in /rack1: 5 "
            + "edges between racks"
        : "in the NameNode's order: survivors in /rack1, /rack2, /rack3, reader in /rack1: 3 "
            + "edges between racks",
        rebuildRacked(scheme, units, 2, unit, "/rack1", false));
    // a reader whose rack is not known (a client): still the fewest racks
    assertEquals("planned by rack: survivors in /rack1, /rack2 (reader's rack unknown)",
        rebuildRacked(scheme, units, 2, unit, null, true));
  }

  @Test
  void aShortGroupPlannedByRackStreamsItsEmptyUnitsAsZerosBesideTheNearestSurvivor()
      throws Exception {
    // one cell of data: units 1..5 empty (zeros, run on the one streamed survivor's host),
    // unit 0 lost; the parity units 6, 7, 8 in /rack1, /rack2, /rack3: /rack1's is taken
    byte[][] units = stripe(6, 3, new int[] {70_000, 0, 0, 0, 0, 0}, 22);
    assertEquals("planned by rack: survivors in /rack1, reader in /rack1: 0 edges between racks",
        rebuildRacked("ecpipe", units, 0, 70_000, "/rack1", true));
    // a reader in a rack holding none: the first given, and one edge into the reader's rack
    assertEquals("planned by rack: survivors in /rack1, reader in /rack9: 1 edges between racks",
        rebuildRacked("ecpipe", units, 0, 70_000, "/rack9", true));
  }

  @Test
  void aGroupWithEmptyUnitsStreamsThemAsZeros() throws Exception {
    // 1 cell of data in a RS(6,3) group: units 1..5 are empty, parity equals unit 0's
    byte[][] units = stripe(6, 3, new int[] {70_000, 0, 0, 0, 0, 0}, 5);
    List<InecRepair.Source> sources = participants(units, InecEngine.Transport.TCP);
    long[] unitLength = Arrays.stream(units).mapToLong(u -> u.length).toArray();
    InecEngine root = engine(InecEngine.Transport.TCP);
    byte[][] got = rebuild(root, settings("ecpipe", InecEngine.Transport.TCP), 6, 3,
        unitLength, new int[] {0}, sources.subList(6, 9), 0, 70_000);
    assertArrayEquals(units[0], got[0]);
  }

  @Test
  void aRejectedTokenFailsTheRepairFastAndSaysWhy() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {50_000, 50_000, 50_000}, 9);
    List<InecRepair.Source> sources = participants(units, InecEngine.Transport.TCP);
    InecRepair.Source bad = sources.get(2);
    List<InecRepair.Source> live = List.of(sources.get(1), new InecRepair.Source(2, bad.control,
        bad.data, bad.block, "forged"), sources.get(3));
    long[] unitLength = Arrays.stream(units).mapToLong(u -> u.length).toArray();
    long t0 = System.nanoTime();
    IOException e = assertThrows(IOException.class, () -> rebuild(engine(
        InecEngine.Transport.TCP), settings("ecpipe", InecEngine.Transport.TCP), 3, 2,
        unitLength, new int[] {0}, live, 0, 50_000));
    assertTrue(e.getMessage().contains("block token rejected"), e.getMessage());
    assertTrue(e.getMessage().contains(bad.control.toString()), e.getMessage());
    assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "refusal ended the repair at once");
  }

  @Test
  void tooFewSurvivorsDeclinesAndAnUnreachableParticipantFails() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {10_000, 10_000, 10_000}, 3);
    List<InecRepair.Source> sources = participants(units, InecEngine.Transport.TCP);
    long[] unitLength = Arrays.stream(units).mapToLong(u -> u.length).toArray();
    InecEngine root = engine(InecEngine.Transport.TCP);
    InecRepair.Settings s = settings("ppr", InecEngine.Transport.TCP);
    RouteDeclinedException d = assertThrows(RouteDeclinedException.class, () -> rebuild(root, s,
        3, 2, unitLength, new int[] {0}, sources.subList(1, 3), 0, 10_000));
    assertTrue(d.getMessage().contains("only 2 usable survivors"), d.getMessage());
    participants.get(3).close();
    IOException e = assertThrows(IOException.class, () -> rebuild(root, s, 3, 2, unitLength,
        new int[] {0}, sources.subList(1, 4), 0, 10_000));
    assertTrue(e.getMessage().contains("unreachable"), e.getMessage());
  }

  @Test
  void aMalformedJoinRequestIsAnsweredWithAnError() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {1000, 1000, 1000}, 4);
    List<InecRepair.Source> sources = participants(units, InecEngine.Transport.TCP);
    InetSocketAddress control = sources.get(0).control;
    for (byte[] junk : new byte[][] {"GET / HTTP/1.1\r\n\r\n".getBytes(
        java.nio.charset.StandardCharsets.US_ASCII), badRows()}) {
      try (Socket s = new Socket(control.getAddress(), control.getPort())) {
        OutputStream out = s.getOutputStream();
        out.write(junk);
        out.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        assertEquals(1, in.readUnsignedByte());
        assertTrue(in.readUTF().contains("bad join request"));
      }
    }
    assertEquals(2, participants.get(0).failed());
  }

  /**
   * A join must arrive whole within joinArrivalMs of the accept, however it trickles in (a
   * byte every 100 ms keeps an idle timer from ever firing); a join larger than any real one
   * is answered with the limit and closed without waiting for more.
   */
  @Test
  void aJoinThatTricklesInIsClosedAtItsDeadlineAndAnOversizedOneAtOnce() throws Exception {
    InecParticipant.Limits limits = new InecParticipant.Limits();
    limits.joinArrivalMs = 500;
    InecParticipant p = new InecParticipant(engine(InecEngine.Transport.TCP),
        memory(stripe(3, 2, new int[] {1000, 1000, 1000}, 13)), "127.0.0.1", 0, 8,
        limits);
    participants.add(p);
    InetSocketAddress control = p.address();
    java.io.ByteArrayOutputStream raw = new java.io.ByteArrayOutputStream();
    joinOf(new ExtendedBlock("pool", 0, 1000, 1), "token-0", 1000, 4096,
        new InetSocketAddress("127.0.0.1", 1)).write(new java.io.DataOutputStream(raw));
    byte[] join = raw.toByteArray();
    long start = System.nanoTime();
    try (Socket s = new Socket(control.getAddress(), control.getPort())) {
      OutputStream out = s.getOutputStream();
      Thread trickle = new Thread(() -> {
        try {
          for (int i = 0; i < join.length - 1; i++) { // never the whole join
            out.write(join[i]);
            out.flush();
            Thread.sleep(100);
          }
        } catch (IOException | InterruptedException e) {
          // closed by the participant, or by the test
        }
      });
      trickle.setDaemon(true);
      trickle.start();
      s.setSoTimeout(5_000);
      try {
        assertEquals(-1, s.getInputStream().read(), "closed without an answer");
      } catch (java.net.SocketException e) {
        // a byte sent after the close was answered with a reset: closed all the same
      }
      trickle.interrupt();
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertTrue(ms >= 450 && ms < 4_000, "closed after " + ms + " ms");
    assertEquals(1, p.evicted());
    try (Socket s = new Socket(control.getAddress(), control.getPort())) {
      OutputStream out = s.getOutputStream();
      // a join's magic, then a task name said to be 65535 bytes long: more than any join holds
      out.write(join, 0, 4);
      out.write(new byte[] {(byte) 0xff, (byte) 0xff});
      byte[] name = new byte[InecParticipant.MAX_JOIN_BYTES];
      Arrays.fill(name, (byte) 'a');
      out.write(name);
      out.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      assertEquals(1, in.readUnsignedByte());
      String why = in.readUTF();
      assertTrue(why.contains("larger than " + InecParticipant.MAX_JOIN_BYTES), why);
    } catch (java.net.SocketException e) {
      // the reset of a close with unread bytes can overtake the answer on loopback; the
      // count below still says the join was refused
    }
    assertEquals(1, p.failed());
  }

  /** Sends one join to a participant; returns its answer (status, message). */
  private static String join(InetSocketAddress control, JoinRequest req) throws IOException {
    try (Socket s = new Socket(control.getAddress(), control.getPort())) {
      java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
      req.write(out);
      out.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      return in.readUnsignedByte() + " " + in.readUTF();
    }
  }

  private static JoinRequest joinOf(ExtendedBlock block, String token, long unitLength,
      int segment, InetSocketAddress output) throws IOException {
    return new JoinRequest("attack", block, token, unitLength, 0, segment, 4096, segment,
        new byte[] {1}, new byte[0][], output, new byte[16], InecEngine.Transport.TCP, 1000);
  }

  /**
   * A join proves its right with a block and its READ token even for a vertex that streams
   * zeros (unit length 0): without one it is refused before the participant dials anything;
   * a segment above the participant's limit is refused before any memory is taken.
   */
  @Test
  void joinsWithoutAValidTokenOrAboveTheLimitsAreRefusedBeforeAnyWork() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {1000, 1000, 1000}, 5);
    List<InecRepair.Source> sources = participants(units, InecEngine.Transport.TCP);
    InetSocketAddress control = sources.get(0).control;
    // a listener that records whether the participant dialled it
    try (java.net.ServerSocket trap = new java.net.ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      trap.setSoTimeout(300);
      InetSocketAddress out = new InetSocketAddress("127.0.0.1", trap.getLocalPort());
      ExtendedBlock block = new ExtendedBlock("pool", 0, 1000, 1);
      // no block at all: the old zero-length join is not even a valid request
      java.io.ByteArrayOutputStream raw = new java.io.ByteArrayOutputStream();
      joinOf(block, "token-0", 0, 65536, out).write(new java.io.DataOutputStream(raw));
      byte[] b = raw.toByteArray();
      int flag = 4 + 2 + "attack".length(); // magic, task: then the has-block flag
      assertEquals(1, b[flag]);
      java.io.ByteArrayOutputStream noBlock = new java.io.ByteArrayOutputStream();
      noBlock.write(b, 0, flag);
      noBlock.write(0); // no block
      int blockLen = 2 + "pool".length() + 3 * 8;
      noBlock.write(b, flag + 1 + blockLen, b.length - flag - 1 - blockLen);
      try (Socket s = new Socket(control.getAddress(), control.getPort())) {
        s.getOutputStream().write(noBlock.toByteArray());
        DataInputStream in = new DataInputStream(s.getInputStream());
        assertEquals(1, in.readUnsignedByte());
        assertTrue(in.readUTF().contains("no block"));
      }
      // a zero-length unit with a wrong token
      String answer = join(control, joinOf(block, "forged", 0, 65536, out));
      assertTrue(answer.startsWith("1 ") && answer.contains("block token rejected"), answer);
      // a 256 MiB segment with a valid token: refused, naming the limit
      answer = join(control, joinOf(block, "token-0", 1000, 256 << 20, out));
      assertTrue(answer.startsWith("1 ") && answer.contains("segment")
          && answer.contains("netec.inec.segment.bytes"), answer);
      assertThrows(java.net.SocketTimeoutException.class, trap::accept,
          "a refused join dialled its output");
    }
    assertEquals(3, participants.get(0).failed());
  }

  /**
   * 500 connections that never send a join take no thread: the participant keeps at most
   * maxPending of them, closing the oldest, and a repair through it goes on at once (with a
   * thread per connection, its 8 threads were taken and the repair was refused "busy").
   */
  @Test
  void idleConnectionsDoNotStarveARepair() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {100_000, 100_000, 100_000}, 11);
    List<InecRepair.Source> sources = participants(units, InecEngine.Transport.TCP);
    InetSocketAddress control = sources.get(1).control;
    List<Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < 500; i++) {
        idle.add(new Socket(control.getAddress(), control.getPort()));
      }
      long[] unitLength = Arrays.stream(units).mapToLong(u -> u.length).toArray();
      byte[][] got = rebuild(engine(InecEngine.Transport.TCP), settings("ecpipe",
          InecEngine.Transport.TCP), 3, 2, unitLength, new int[] {0}, sources.subList(1, 4), 0,
          100_000);
      assertArrayEquals(units[0], got[0]);
      assertTrue(participants.get(1).evicted() >= 500 - 256,
          "evicted " + participants.get(1).evicted());
      long joinThreads = Thread.getAllStackTraces().keySet().stream()
          .filter(t -> t.getName().equals("inec-join") && t.isAlive()).count();
      assertTrue(joinThreads <= 3 * 8, joinThreads + " join threads");
    } finally {
      for (Socket s : idle) {
        s.close();
      }
    }
  }

  /**
   * A vertex streams only to its requester's own address (any port) or to a peer inside the
   * peer networks on the INEC data port; a name, an address elsewhere or another port of a
   * peer is refused before anything is dialled.
   */
  @Test
  void aVertexStreamsOnlyToItsRequesterOrToPeersOnTheDataPort() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {1000, 1000, 1000}, 12);
    MemoryBlocks mem = memory(units);
    InecParticipant.Limits limits = new InecParticipant.Limits();
    limits.peers = io.netec.hdfs.route.PeerNetworks.of(List.of("127.0.0.0/8"),
        "INEC peer networks", "netec.inec.peer.networks");
    InecEngine e = engine(InecEngine.Transport.TCP);
    java.net.InetAddress peerHost = java.net.InetAddress.getByName("127.0.0.2");
    try (java.net.ServerSocket trap = new java.net.ServerSocket(0, 50, peerHost)) {
      trap.setSoTimeout(300);
      limits.peerDataPort = trap.getLocalPort() + 1; // the trap is on some other port
      InecParticipant p = new InecParticipant(e, mem, "127.0.0.1", 0, 8, limits);
      participants.add(p);
      InetSocketAddress control = p.address();
      ExtendedBlock block = new ExtendedBlock("pool", 0, 1000, 1);
      String answer = join(control, joinOf(block, "token-0", 1000, 4096,
          new InetSocketAddress("198.19.255.254", limits.peerDataPort)));
      assertTrue(answer.startsWith("1 ") && answer.contains("198.19.255.254 is outside the "
          + "INEC peer networks [127.0.0.0/8] (netec.inec.peer.networks)"), answer);
      answer = join(control, joinOf(block, "token-0", 1000, 4096,
          new InetSocketAddress(peerHost, trap.getLocalPort())));
      assertTrue(answer.startsWith("1 ") && answer.contains("output port "
          + trap.getLocalPort() + " of peer 127.0.0.2 is not the INEC data port "), answer);
      // a name: "127.0.0.1" and "localhost" have the same length on the wire
      java.io.ByteArrayOutputStream raw = new java.io.ByteArrayOutputStream();
      joinOf(block, "token-0", 1000, 4096, new InetSocketAddress("127.0.0.1", 1))
          .write(new java.io.DataOutputStream(raw));
      String wire = new String(raw.toByteArray(), java.nio.charset.StandardCharsets.ISO_8859_1)
          .replace("127.0.0.1", "localhost");
      try (Socket s = new Socket(control.getAddress(), control.getPort())) {
        s.getOutputStream().write(wire.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        DataInputStream in = new DataInputStream(s.getInputStream());
        assertEquals(1, in.readUnsignedByte());
        String why = in.readUTF();
        assertTrue(why.contains("output host 'localhost' is not an IP address"), why);
      }
      assertThrows(java.net.SocketTimeoutException.class, trap::accept,
          "a refused join dialled its output");
      assertEquals(3, p.failed());
    }
    // the requester's own address, on any port: dialled
    try (java.net.ServerSocket mine = new java.net.ServerSocket(0, 50,
        java.net.InetAddress.getByName("127.0.0.1"))) {
      mine.setSoTimeout(5_000);
      InetSocketAddress control = participants.get(0).address();
      Thread t = new Thread(() -> {
        try {
          join(control, joinOf(new ExtendedBlock("pool", 0, 1000, 1), "token-0", 1000, 4096,
              new InetSocketAddress("127.0.0.1", mine.getLocalPort())));
        } catch (IOException ignored) {
          // the vertex fails once the handshake times out: its dial is what is tested
        }
      });
      t.start();
      try (Socket dialled = mine.accept()) {
        assertTrue(dialled.isConnected());
      }
      t.join(10_000);
    }
  }

  /**
   * A vertex whose requester leaves ends at once (its streams closed, its thread freed)
   * rather than at its timeout.
   */
  @Test
  void aVertexEndsWhenItsRequesterLeaves() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {1000, 1000, 1000}, 13);
    List<InecRepair.Source> sources = participants(units, InecEngine.Transport.TCP);
    InecEngine root = engine(InecEngine.Transport.TCP);
    byte[] outTag = new byte[16];
    new Random(1).nextBytes(outTag);
    byte[] neverSent = new byte[16];
    new Random(2).nextBytes(neverSent);
    // the root takes the vertex's output, so the vertex then waits for an input never sent
    java.util.concurrent.CompletableFuture<InecEngine.Conn> taken =
        java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try {
            return root.take(outTag, InecEngine.Transport.TCP, 10_000, () -> false);
          } catch (IOException ex) {
            throw new java.io.UncheckedIOException(ex);
          }
        });
    JoinRequest req = new JoinRequest("left", new ExtendedBlock("pool", 0, 1000, 1), "token-0",
        1000, 0, 1000, 4096, 4096, new byte[] {1}, new byte[][] {neverSent},
        root.dataAddress(), outTag, InecEngine.Transport.TCP, 30_000);
    InetSocketAddress control = sources.get(0).control;
    Socket s = new Socket(control.getAddress(), control.getPort());
    java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
    req.write(out);
    out.flush();
    taken.get(10, java.util.concurrent.TimeUnit.SECONDS).close();
    Thread.sleep(200);
    assertEquals(0, participants.get(0).failed(), "the vertex waits for its input");
    s.close();
    io.netec.hdfs.Waits.until("the vertex ended when its requester left", 5_000,
        () -> participants.get(0).failed() == 1);
  }

  /** A well-formed start with 40 output rows (at most 16). */
  private static byte[] badRows() throws IOException {
    java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
    java.io.DataOutputStream d = new java.io.DataOutputStream(b);
    d.writeInt(JoinRequest.MAGIC);
    d.writeUTF("task");
    d.writeBoolean(false);
    d.writeUTF("");
    d.writeLong(0);
    d.writeLong(0);
    d.writeLong(100);
    d.writeInt(4096);
    d.writeInt(4096);
    d.writeByte(40);
    return b.toByteArray();
  }

  @Test
  void enginesDescribeTheirTransports() throws Exception {
    assertTrue(engine(InecEngine.Transport.TCP).describe().contains("verbs disabled"));
    assertTrue(engine(InecEngine.Transport.VERBS).describe().contains("mockverbs0"));
    assertTrue(IsalNative.libraryUnavailableReason() == null);
    ByteBuffer.allocateDirect(1); // direct buffers are what primitives take
  }

  @Test
  void aFailingLeafIsNamedNotTheNeighboursItBrokeDownstream() throws Exception {
    byte[][] units = stripe(3, 2, new int[] {400_000, 400_000, 400_000}, 8);
    MemoryBlocks mem = memory(units);
    // the chain 1 -> 2 -> 3 -> root: unit 1 is the leaf. It fails 100,000 bytes in, and its
    // stream is slow to close: the participant's report must not wait for the close, or its
    // neighbours' "closed by the peer" (which the teardown causes) would come first
    mem.failAt.put(1L, 100_000L);
    mem.closeMillis.put(1L, 300L);
    List<InecRepair.Source> sources = participants(mem, units, InecEngine.Transport.TCP);
    long[] unitLength = Arrays.stream(units).mapToLong(u -> u.length).toArray();
    IOException e = assertThrows(IOException.class, () -> rebuild(engine(
        InecEngine.Transport.TCP), settings("ecpipe", InecEngine.Transport.TCP), 3, 2,
        unitLength, new int[] {0}, sources.subList(1, 4), 0, 400_000));
    assertTrue(e.getMessage().contains("Checksum error: "), e.getMessage());
    assertTrue(e.getMessage().contains("(unit 1)"), e.getMessage());
  }
}
