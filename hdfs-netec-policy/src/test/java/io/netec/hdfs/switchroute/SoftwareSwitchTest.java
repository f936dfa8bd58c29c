package io.netec.hdfs.switchroute;

import io.netec.hdfs.Waits;
import io.netec.hdfs.route.MemoryBlocks;
import io.netec.hdfs.route.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.switchroute.wire.Frames;
import io.netec.hdfs.switchroute.wire.NetecPacket;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netec.hdfs.switchroute.wire.StreamRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The software switch over real TCP: k survivor agents stream RS units held in memory, the
 * switch aggregates, {@link SwitchClient} reads the rebuilt rows. Bytes must equal the erased
 * units; refusals and failures must surface as declines or errors, never as wrong bytes.
 */
class SoftwareSwitchTest {
  private final List<AutoCloseable> open = new ArrayList<>();
  /** The survivors' blocks (odd ids also ByteBufferReadable: every rebuild takes both paths). */
  private final MemoryBlocks memory = new MemoryBlocks();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private SoftwareSwitch startSwitch(int slotArrays, long memory) throws IOException {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.slotArrays = slotArrays;
    o.slotsPerArray = 32;
    o.memoryBudgetBytes = memory;
    SoftwareSwitch sw = new SoftwareSwitch(o);
    open.add(sw);
    return sw;
  }

  private List<SurvivorAgent> startAgents(int n) throws IOException {
    List<SurvivorAgent> agents = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      SurvivorAgent a = new SurvivorAgent(memory, "127.0.0.1", 0, 64, 60_000);
      open.add(a);
      agents.add(a);
    }
    return agents;
  }

  /** A setup for group g whose survivor s is served by agents[s]; units go in the store. */
  private SetupRequest setup(SwitchTaskTest.Group g, List<SurvivorAgent> agents, int payload,
      String token, String name) throws Exception {
    return setup(g, agents, payload, token, name, false);
  }

  private SetupRequest setup(SwitchTaskTest.Group g, List<SurvivorAgent> agents, int payload,
      String token, String name, boolean premultiplied) throws Exception {
    return setup(g, agents, payload, token, name, premultiplied, false);
  }

  private SetupRequest setup(SwitchTaskTest.Group g, List<SurvivorAgent> agents, int payload,
      String token, String name, boolean premultiplied, boolean datagram) throws Exception {
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    for (int s = 0; s < g.k; s++) {
      int unit = g.survivors[s];
      ExtendedBlock b = new ExtendedBlock("BP-test", blockId(name, unit), g.unitLength[unit],
          1001);
      byte[] bytes = java.util.Arrays.copyOf(g.units[unit], (int) g.unitLength[unit]);
      memory.put(b.getBlockId(), bytes);
      sv.add(new SetupRequest.Survivor(s, "127.0.0.1:" + agents.get(s).address().getPort(),
          b.toString(), g.unitLength[unit], token));
    }
    byte[][] co = new byte[g.erased.length][];
    for (int r = 0; r < co.length; r++) {
      co[r] = new byte[g.k];
      for (int s = 0; s < g.k; s++) {
        co[r][s] = (byte) g.setup.coefficient(r, s);
      }
    }
    return new SetupRequest(name, payload, 0, g.setup.length(), 5_000, sv, co, premultiplied,
        datagram);
  }

  /**
   * Rebuilds the erased units of a k+m group of units of {@code length} bytes through the
   * switch, k agents of their own, and checks every byte; the setup it used.
   */
  private SetupRequest rebuildsGroup(SoftwareSwitch sw, int k, int m, int[] erased, int length,
      int payload, boolean datagram, SwitchClient.Result[] res) throws Exception {
    List<SurvivorAgent> agents = startAgents(k);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(k, m, erased, length, k + m);
    SetupRequest setup = setup(g, agents, payload, "",
        (datagram ? "u" : "t") + k + m + erased.length, false, datagram);
    byte[][] rows = rebuild(sw.controlAddress(), setup, res);
    for (int r = 0; r < erased.length; r++) {
      assertArrayEquals(g.units[erased[r]], rows[r], "rebuilt unit " + erased[r]);
    }
    return setup;
  }

  /** Payload bytes one stream sends: the last stripe padded to whole words. */
  static long sentPerStream(SetupRequest setup) {
    return (setup.stripes() - 1) * setup.payload() + setup.payloadLength(setup.stripes() - 1);
  }

  private static byte[][] rebuild(InetSocketAddress control, SetupRequest setup,
      SwitchClient.Result[] result) throws IOException {
    ByteArrayOutputStream[] out = new ByteArrayOutputStream[setup.rows()];
    SwitchClient.Sink[] sinks = new SwitchClient.Sink[setup.rows()];
    long[] lengths = new long[setup.rows()];
    for (int r = 0; r < out.length; r++) {
      out[r] = new ByteArrayOutputStream();
      sinks[r] = out[r]::write;
      lengths[r] = setup.length();
    }
    SwitchClient.Result res = SwitchClient.rebuild(control, setup, lengths, () -> sinks);
    // the reader returns at its FIN; the switch's counts are final once it closed
    assertTrue(res.closed.awaitUninterruptibly(5_000), "the VIP connection closed");
    if (result != null) {
      result[0] = res;
    }
    byte[][] rows = new byte[out.length][];
    for (int r = 0; r < out.length; r++) {
      rows[r] = out[r].toByteArray();
    }
    return rows;
  }

  @ParameterizedTest
  @MethodSource("io.netec.hdfs.switchroute.SwitchTaskTest#shapes")
  void rebuildsErasedUnitsOverTcp(int k, int m, int[] erased) throws Exception {
    SoftwareSwitch sw = startSwitch(4, 64L << 20);
    SwitchClient.Result[] res = new SwitchClient.Result[1];
    SetupRequest setup = rebuildsGroup(sw, k, m, erased, 1_000_000 + 333, 16 * 1024, false, res);
    // The reader took in about one stream per row, not k: headers add 20 bytes per 16 KiB.
    long stream = sentPerStream(setup);
    long payloadOut = (long) erased.length * stream;
    assertTrue(res[0].bytesReceived <= payloadOut * 1.01, "ingress " + res[0].bytesReceived);
    assertEquals(k * stream, sw.getBytesIn(), "switch took in k streams");
    assertEquals(payloadOut, sw.getBytesOut());
    waitFor(() -> sw.getTasksCompleted() == 1 && sw.getSlotArraysInUse() == 0 && sw.getMemoryInUse() == 0);
    // the same counters over JMX
    javax.management.MBeanServer jmx = java.lang.management.ManagementFactory
        .getPlatformMBeanServer();
    javax.management.ObjectName name = new javax.management.ObjectName(
        "io.netec:type=SoftwareSwitch,port=" + sw.controlAddress().getPort());
    assertEquals(sw.getBytesIn(), jmx.getAttribute(name, "BytesIn"));
    assertEquals(1L, jmx.getAttribute(name, "TasksCompleted"));
    assertEquals(0, jmx.getAttribute(name, "SlotArraysInUse"));
    // the packet work ran on the switch's own threads, and their CPU time is counted
    long cpu = sw.getCpuNanos();
    assertTrue(cpu > 0, "switch CPU " + cpu);
    assertTrue((Long) jmx.getAttribute(name, "CpuNanos") >= cpu);
    sw.close();
    assertTrue(!jmx.isRegistered(name), "unregistered on close");
    // ended threads keep their CPU time in the sum
    waitFor(() -> sw.getCpuNanos() >= cpu);
  }

  @Test
  void rebuildsAUnitPremultipliedByTheSurvivors() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(6);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {4}, 300_001, 9);
    SetupRequest pre = setup(g, agents, 1024, "", "premultiplied", true);
    // the switch's own matrix is all ones: only the survivors' multiply makes the bytes right
    for (int s = 0; s < 6; s++) {
      assertEquals(1, pre.switchCoefficient(0, s));
      assertEquals(pre.coefficient(0, s), pre.senderCoefficient(s));
    }
    byte[][] rows = rebuild(sw.controlAddress(), pre, null);
    assertArrayEquals(g.units[4], rows[0], "rebuilt unit 4");
    // which proves the survivors multiplied only where some coefficient is not 1
    assertTrue(java.util.stream.IntStream.range(0, 6)
        .anyMatch(s -> pre.senderCoefficient(s) != 1));
  }

  @ParameterizedTest
  @MethodSource("io.netec.hdfs.switchroute.SwitchTaskTest#shapes")
  void rebuildsErasedUnitsOverDatagrams(int k, int m, int[] erased) throws Exception {
    SoftwareSwitch sw = startSwitch(4, 64L << 20);
    SwitchClient.Result[] res = new SwitchClient.Result[1];
    SetupRequest setup = rebuildsGroup(sw, k, m, erased, 300_000 + 333, 1024, true, res);
    assertTrue(sw.getBytesIn() >= k * sentPerStream(setup), "switch took in k streams");
    waitFor(() -> sw.getTasksCompleted() == 1 && sw.getSlotArraysInUse() == 0);
  }

  /**
   * Datagram mode on a lossy path: between the switch and every agent a relay drops one
   * datagram in twenty, either way (DATA, HELLO, ACK), and duplicates one in twenty; RETX and
   * the repeated HELLO recover everything, pre-multiplied too, and the bytes are the unit's.
   */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
  void datagramsRecoverLostPackets(boolean premultiplied) throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(6);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {1}, 100_001, 9);
    SetupRequest direct = setup(g, agents, 1024, "", "lossy" + premultiplied, premultiplied,
        true);
    List<SetupRequest.Survivor> relayed = new ArrayList<>();
    for (SetupRequest.Survivor v : direct.survivors()) {
      LossyUdpRelay relay = new LossyUdpRelay(agents.get(v.sender()).address(), 0.05, 0.05,
          v.sender());
      open.add(relay);
      relayed.add(new SetupRequest.Survivor(v.sender(), "127.0.0.1:" + relay.port(), v.block(),
          v.unitLength(), v.token()));
    }
    byte[][] co = {new byte[6]};
    for (int s = 0; s < 6; s++) {
      co[0][s] = (byte) direct.coefficient(0, s);
    }
    SetupRequest setup = new SetupRequest(direct.group(), 1024, 0, direct.length(), 10_000,
        relayed, co, premultiplied, true);
    SwitchClient.Result[] res = new SwitchClient.Result[1];
    byte[][] rows = rebuild(sw.controlAddress(), setup, res);
    assertArrayEquals(g.units[1], rows[0], "rebuilt unit 1");
    assertTrue(res[0].retransmitRequests > 0, "losses recovered by RETX");
    waitFor(() -> sw.getTasksCompleted() == 1 && sw.getSlotArraysInUse() == 0);
  }

  /** Forwards datagrams between the switch and one agent, dropping and duplicating some. */
  private static final class LossyUdpRelay implements AutoCloseable {
    private final java.net.DatagramSocket front = new java.net.DatagramSocket(0,
        java.net.InetAddress.getLoopbackAddress());
    private final java.net.DatagramSocket back = new java.net.DatagramSocket(0,
        java.net.InetAddress.getLoopbackAddress());
    private volatile java.net.SocketAddress switchSide;
    private final List<Thread> threads = new ArrayList<>();

    LossyUdpRelay(InetSocketAddress agent, double drop, double duplicate, long seed)
        throws IOException {
      java.util.Random rnd = new java.util.Random(seed);
      threads.add(pump(front, p -> {
        switchSide = p.getSocketAddress();
        return agent;
      }, back, rnd, drop, duplicate));
      threads.add(pump(back, p -> switchSide, front, new java.util.Random(seed + 100), drop,
          duplicate));
    }

    int port() {
      return front.getLocalPort();
    }

    private static Thread pump(java.net.DatagramSocket in,
        java.util.function.Function<java.net.DatagramPacket, java.net.SocketAddress> to,
        java.net.DatagramSocket out, java.util.Random rnd, double drop, double duplicate) {
      Thread t = new Thread(() -> {
        byte[] b = new byte[65536];
        while (!in.isClosed()) {
          try {
            java.net.DatagramPacket p = new java.net.DatagramPacket(b, b.length);
            in.receive(p);
            java.net.SocketAddress dest = to.apply(p);
            double x = rnd.nextDouble();
            if (dest == null || x < drop) {
              continue;
            }
            java.net.DatagramPacket f = new java.net.DatagramPacket(p.getData(), p.getLength(),
                dest);
            out.send(f);
            if (x > 1 - duplicate) {
              out.send(f);
            }
          } catch (IOException e) {
            return; // closed
          }
        }
      }, "lossy-relay");
      t.setDaemon(true);
      t.start();
      return t;
    }

    @Override
    public void close() {
      front.close();
      back.close();
    }
  }

  @Test
  void overTcpASlowSurvivorCostsNoResend() throws Exception {
    // survivor 1's read stops for 1.8 s a quarter of the way in (a slow disk, or its link in
    // TCP backoff): no stripe completes, and the reader asks for a resend after 1 s. Nothing
    // was lost on the streams, so the switch passes the RETX on as a plain ACK and the
    // survivors send each byte once (a resend would have sent a window again from each).
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(3);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 1_000_000, 31);
    SetupRequest setup = setup(g, agents, 16 * 1024, "", "paused");
    long slow = blockId("paused", g.survivors[1]);
    memory.pauseAt.put(slow, new long[] {250_000, 1_800});
    SwitchClient.Result[] res = new SwitchClient.Result[1];
    byte[][] rows = rebuild(sw.controlAddress(), setup, res);
    assertArrayEquals(g.units[0], rows[0], "rebuilt unit 0");
    assertTrue(res[0].retransmitRequests >= 1, "the reader asked for a resend");
    assertEquals(res[0].retransmitRequests, sw.getRetransmitRequests());
    assertEquals(sw.getRetransmitRequests(), sw.getRetransmitRequestsHeld(), "passed on");
    assertEquals(0, sw.getPacketsResent(), "packets sent again");
    assertEquals(3 * sentPerStream(setup), sw.getBytesIn(), "each stream sent once");
  }

  @Test
  void overTcpAPacketTheSwitchRefusedIsResentAtTheFirstRetx() throws Exception {
    // a relay in front of survivor 2 moves its last DATA packet to another slot: the switch
    // refuses it, no later packet shows a gap, and the reader's first RETX goes on at once
    SwitchClient.Result res = rebuildThroughRelay(33, p -> new NetecPacket(p.type(), p.task(),
        p.slotArray(), p.sender(), p.flags(), p.slot() + 1, p.seq(), p.window(), p.payload()));
    assertEquals(1, relayed.getPacketsLost());
    assertTrue(res.retransmitRequests >= 1, "the reader asked for a resend");
    assertEquals(0, relayed.getRetransmitRequestsHeld(), "the first RETX went on");
  }

  @Test
  void overTcpAPacketLostAtAStreamsEndIsResentAtTheSecondRetx() throws Exception {
    // the relay drops survivor 2's last DATA packet: nothing refused, no gap to see, so the
    // first RETX is held like a slow stream's, and the second (3 s into the stall) goes on
    SwitchClient.Result res = rebuildThroughRelay(34, p -> null);
    assertEquals(0, relayed.getPacketsLost());
    assertEquals(1, relayed.getRetransmitRequestsHeld(), "the first RETX held");
    assertTrue(res.retransmitRequests >= 2 && relayed.getRetransmitRequests() >= 2,
        res.retransmitRequests + " RETX");
  }

  /** The switch of the last rebuildThroughRelay. */
  private SoftwareSwitch relayed;

  /**
   * Rebuilds unit 1 of an RS(3,2) group through a switch whose survivor 2 is reached through a
   * {@link DataRelay} that changes (or, for null, drops) its last DATA packet; checks the
   * bytes and that the relay did it once.
   */
  private SwitchClient.Result rebuildThroughRelay(long seed,
      java.util.function.UnaryOperator<NetecPacket> change) throws Exception {
    relayed = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(3);
    int length = 300_000;
    int payload = 16 * 1024;
    long last = (length + payload - 1) / payload - 1;
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {1}, length, seed);
    try (DataRelay relay = new DataRelay(agents.get(2).address(), p -> p.seq() == last,
        change)) {
      SetupRequest direct = setup(g, agents, payload, "", "relayed" + seed);
      List<SetupRequest.Survivor> sv = new ArrayList<>(direct.survivors());
      SetupRequest.Survivor two = sv.get(2);
      sv.set(2, new SetupRequest.Survivor(2, "127.0.0.1:" + relay.port(), two.block(),
          two.unitLength(), two.token()));
      SetupRequest setup = new SetupRequest(direct.group(), direct.payload(), 0,
          direct.length(), direct.timeoutMs(), sv, coefficients(direct), false, false);
      SwitchClient.Result[] res = new SwitchClient.Result[1];
      byte[][] rows = rebuild(relayed.controlAddress(), setup, res);
      assertArrayEquals(g.units[1], rows[0], "rebuilt unit 1");
      assertEquals(1, relay.changed.get(), "packets changed");
      return res[0];
    }
  }

  /** The id setup() gives unit {@code unit}'s block in a setup named {@code name}. */
  private static long blockId(String name, int unit) {
    return -1024L * (name.hashCode() & 0xffff) + unit;
  }

  private static byte[][] coefficients(SetupRequest setup) {
    byte[][] co = new byte[setup.rows()][setup.k()];
    for (int r = 0; r < co.length; r++) {
      for (int s = 0; s < setup.k(); s++) {
        co[r][s] = (byte) setup.coefficient(r, s);
      }
    }
    return co;
  }

  /**
   * A TCP relay in front of an agent that changes the first DATA packet the agent sends that
   * {@code which} picks (re-encoded with a valid checksum), or drops it where {@code change}
   * gives null: a packet the switch must refuse, or one lost on the way.
   */
  private static final class DataRelay implements AutoCloseable {
    private final java.net.ServerSocket server = new java.net.ServerSocket(0, 50,
        java.net.InetAddress.getLoopbackAddress());
    private final java.util.function.Predicate<NetecPacket> which;
    private final java.util.function.UnaryOperator<NetecPacket> change;
    final java.util.concurrent.atomic.AtomicInteger changed =
        new java.util.concurrent.atomic.AtomicInteger();

    DataRelay(InetSocketAddress agent, java.util.function.Predicate<NetecPacket> which,
        java.util.function.UnaryOperator<NetecPacket> change) throws IOException {
      this.which = which;
      this.change = change;
      Thread t = new Thread(() -> {
        while (!server.isClosed()) {
          try {
            java.net.Socket sw = server.accept();
            java.net.Socket up = new java.net.Socket(agent.getAddress(), agent.getPort());
            sw.setTcpNoDelay(true);
            up.setTcpNoDelay(true);
            pump(() -> sw.getInputStream().transferTo(up.getOutputStream()), sw, up);
            pump(() -> changeOne(new java.io.DataInputStream(up.getInputStream()),
                sw.getOutputStream()), sw, up);
          } catch (IOException e) {
            return; // closed
          }
        }
      }, "data-relay");
      t.setDaemon(true);
      t.start();
    }

    int port() {
      return server.getLocalPort();
    }

    private interface Copy {
      void run() throws Exception;
    }

    private static void pump(Copy copy, java.net.Socket a, java.net.Socket b) {
      Thread t = new Thread(() -> {
        try {
          copy.run();
        } catch (Exception e) {
          // one side closed
        } finally {
          try {
            a.close();
            b.close();
          } catch (IOException e) {
            // closed already
          }
        }
      }, "data-relay-pump");
      t.setDaemon(true);
      t.start();
    }

    private void changeOne(java.io.DataInputStream in, java.io.OutputStream out)
        throws Exception {
      while (true) {
        byte[] frame = Frames.read(in);
        if (frame[1] == NetecPacket.DATA && changed.get() == 0) {
          NetecPacket p = NetecPacket.decodeFrame(frame, 0, frame.length);
          if (which.test(p)) {
            changed.incrementAndGet();
            NetecPacket to = change.apply(p);
            if (to == null) {
              continue; // dropped
            }
            frame = to.toBytes();
          }
        }
        out.write(frame);
        out.flush();
      }
    }

    @Override
    public void close() throws IOException {
      server.close();
    }
  }

  @Test
  void rebuildsARangeOfTheErasedUnits() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(6);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {2, 7}, 500_000, 9);
    SetupRequest whole = setup(g, agents, 8192, "", "range");
    long offset = 123_457;
    int length = 200_003;
    byte[][] co = {new byte[6], new byte[6]};
    for (int r = 0; r < 2; r++) {
      for (int s = 0; s < 6; s++) {
        co[r][s] = (byte) whole.coefficient(r, s);
      }
    }
    SetupRequest range = new SetupRequest("range", 8192, offset, length, 5_000,
        whole.survivors(), co);
    byte[][] rows = rebuild(sw.controlAddress(), range, null);
    for (int r = 0; r < 2; r++) {
      assertArrayEquals(java.util.Arrays.copyOfRange(g.units[g.erased[r]], (int) offset,
          (int) offset + length), rows[r], "range of unit " + g.erased[r]);
    }
  }

  @Test
  void thirtyTwoConcurrentTasksWithinTheMemoryBound() throws Exception {
    int tasks = 32;
    // Each task holds 32 slots x 1 row x 8 KiB = 256 KiB; the budget fits exactly 32.
    SoftwareSwitch sw = startSwitch(tasks, tasks * 32L * 8192);
    List<SurvivorAgent> agents = startAgents(6);
    ExecutorService pool = Executors.newFixedThreadPool(tasks);
    try {
      List<Future<Boolean>> done = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        SwitchTaskTest.Group g = new SwitchTaskTest.Group(6, 3, new int[] {t % 9}, 300_000 + t,
            t);
        SetupRequest setup = setup(g, agents, 8192, "", "c" + t);
        done.add(pool.submit(() ->
            java.util.Arrays.equals(g.units[g.erased[0]],
                rebuild(sw.controlAddress(), setup, null)[0])));
      }
      for (Future<Boolean> f : done) {
        assertTrue(f.get(), "a concurrent rebuild returned wrong bytes");
      }
    } finally {
      pool.shutdownNow();
    }
    // the reader returns once it has sent FIN; the switch completes the task on receipt
    waitFor(() -> sw.getTasksCompleted() == tasks && sw.getMemoryInUse() == 0,
        () -> "completed " + sw.getTasksCompleted() + ", failed " + sw.getTasksFailed()
            + ", memory in use " + sw.getMemoryInUse());
    assertEquals(0, sw.getTasksRefused());
    assertEquals(0, sw.getTasksFailed());
    // tasks spread over the switch's I/O threads (readers are accepted round-robin, a task's
    // survivors join its reader's loop): each of the two did a good part of the packet work
    long[] cpu = sw.ioThreadCpuNanos();
    assertEquals(2, cpu.length, "I/O threads");
    long sum = cpu[0] + cpu[1];
    for (long c : cpu) {
      assertTrue(c > sum / 5, "CPU of the I/O threads: " + java.util.Arrays.toString(cpu));
    }
  }

  /**
   * Only the reader that set a task up can claim its VIP or tear it down: a HELLO or a
   * teardown without the task's secret gets nothing, and the task stays its reader's.
   */
  @Test
  void aForgedHelloOrTeardownGetsNothing() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(3);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
    SetupRequest setup = setup(g, agents, 4096, "", "hijack");
    io.netec.hdfs.switchroute.wire.SetupAnswer a = control(sw, setup.toJson());
    assertTrue(a.ok() && a.secret().matches("[0-9a-f]{32}"), "secret " + a.secret());
    String[] hp = a.vip().split(":");
    for (String forged : new String[] {"", "0".repeat(32), a.secret().substring(1) + "0"}) {
      try (java.net.Socket s = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
        s.setSoTimeout(5_000);
        io.netec.hdfs.switchroute.wire.NetecPacket hello =
            io.netec.hdfs.switchroute.wire.StreamRequest.readerHello(setup, a.task(),
                a.slotArray(), a.slots(), forged);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(hello.encodedLength());
        hello.encode(b);
        s.getOutputStream().write(b.array());
        assertEquals(-1, s.getInputStream().read(), "a forged HELLO got bytes");
      }
    }
    String teardown = "{\"op\":\"teardown\",\"task\":" + a.task() + "}";
    assertEquals("no task " + a.task(), control(sw, teardown.getBytes(
        java.nio.charset.StandardCharsets.UTF_8)).reason());
    assertEquals(0, sw.getTasksFailed(), "the task is still its reader's");
    String real = "{\"op\":\"teardown\",\"task\":" + a.task() + ",\"secret\":\""
        + a.secret() + "\"}";
    assertTrue(control(sw, real.getBytes(java.nio.charset.StandardCharsets.UTF_8)).ok());
  }

  /**
   * The switch dials only agents in its agent networks, by address: a setup naming a host
   * elsewhere, a link-local address or a name is refused before anything is dialled.
   */
  @Test
  void agentsOutsideTheAgentNetworksAreRefused() throws Exception {
    List<SurvivorAgent> agents = startAgents(3);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
    SetupRequest good = setup(g, agents, 4096, "", "net");
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.agentNetworks = List.of("198.18.0.0/15");
    SoftwareSwitch elsewhere = new SoftwareSwitch(o);
    try {
      String why = control(elsewhere, good.toJson()).reason();
      assertTrue(why != null && why.startsWith("survivors[0].agent: 127.0.0.1 is outside the "
          + "agent networks [198.18.0.0/15]"), why);
    } finally {
      elsewhere.close();
    }
    SoftwareSwitch sw = startSwitch(2, 64L << 20); // default: this host's networks (lo too)
    for (String bad : new String[] {"169.254.169.254:80", "localhost:" + agents.get(0)
        .address().getPort(), "203.0.113.7:50300"}) {
      String json = new String(good.toJson(), java.nio.charset.StandardCharsets.UTF_8)
          .replaceFirst("\"agent\":\"[^\"]+\"", "\"agent\":\"" + bad + "\"");
      String why = control(sw, json.getBytes(java.nio.charset.StandardCharsets.UTF_8))
          .reason();
      assertTrue(why != null && why.startsWith("survivors[0].agent: "), bad + ": " + why);
    }
    assertEquals(0, sw.getTasksAccepted());
    assertTrue(control(sw, good.toJson()).ok(), "agents on this host's networks are dialled");
  }

  /**
   * 500 idle control connections from one address hold at most its per-peer cap, are closed
   * when idle, and do not keep a reader elsewhere from setting up a task.
   */
  @Test
  void idleControlConnectionsFromOnePeerDoNotStarveOthers() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.controlIdleMs = 1_500;
    SoftwareSwitch sw = new SoftwareSwitch(o);
    List<java.net.Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < 500; i++) {
        java.net.Socket s = new java.net.Socket();
        s.bind(new java.net.InetSocketAddress("127.0.0.2", 0));
        s.connect(sw.controlAddress(), 2_000);
        idle.add(s);
      }
      int open = 0;
      for (java.net.Socket s : idle) {
        s.setSoTimeout(2_500);
        try {
          open += s.getInputStream().read() == -1 ? 0 : 1;
        } catch (java.net.SocketTimeoutException e) {
          open++; // still held by the switch when we stopped waiting
        }
      }
      assertEquals(0, open, "every idle connection closed: over the cap at once, the rest idle");
      List<SurvivorAgent> agents = startAgents(3);
      SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
      assertTrue(control(sw, setup(g, agents, 4096, "", "after").toJson()).ok());
    } finally {
      for (java.net.Socket s : idle) {
        s.close();
      }
      sw.close();
    }
  }

  @Test
  void theCapHoldsWhileConnectionsAreBusy() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.maxControlPerPeer = 16;
    SoftwareSwitch sw = new SoftwareSwitch(o);
    List<java.net.Socket> held = new ArrayList<>();
    try {
      assertEquals(40 - 16, closedAtOnce(sw.controlAddress(), "127.0.0.3", 40, held),
          "16 held from one address, the rest closed");
      List<SurvivorAgent> agents = startAgents(3);
      SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
      assertTrue(control(sw, setup(g, agents, 4096, "", "other").toJson()).ok(),
          "a reader at another address is served");
    } finally {
      for (java.net.Socket s : held) {
        s.close();
      }
      sw.close();
    }
  }

  /**
   * Opens {@code n} connections to {@code port} from {@code from} (kept in {@code held}) and
   * returns how many the switch closed at once (within 300 ms).
   */
  private static int closedAtOnce(java.net.InetSocketAddress port, String from, int n,
      List<java.net.Socket> held) throws IOException {
    List<java.net.Socket> mine = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      java.net.Socket s = new java.net.Socket();
      held.add(s);
      s.bind(new java.net.InetSocketAddress(from, 0));
      s.connect(port, 2_000);
      s.setSoTimeout(300);
      mine.add(s);
    }
    int closed = 0;
    for (java.net.Socket s : mine) {
      try {
        closed += s.getInputStream().read() == -1 ? 1 : 0;
      } catch (java.net.SocketTimeoutException e) {
        // held: under the cap
      }
    }
    return closed;
  }

  /** The data port caps connections per address as the control port does. */
  @Test
  void theDataPortCapsConnectionsPerAddress() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.maxDataPerPeer = 16;
    SoftwareSwitch sw = new SoftwareSwitch(o);
    List<java.net.Socket> held = new ArrayList<>();
    try {
      assertEquals(40 - 16, closedAtOnce(sw.dataAddress(), "127.0.0.4", 40, held),
          "16 held from one address, the rest closed");
      assertEquals(0, closedAtOnce(sw.dataAddress(), "127.0.0.5", 1, held),
          "another address is still let in");
    } finally {
      for (java.net.Socket s : held) {
        s.close();
      }
      sw.close();
    }
  }

  /**
   * ACKs that do not advance are no progress: with silent survivors, a reader that keeps
   * repeating the same ACK does not keep the task (and its slot memory) alive past its timeout.
   */
  @Test
  void repeatedAcksDoNotKeepAStalledTaskAlive() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<java.net.ServerSocket> silent = new ArrayList<>();
    List<java.net.Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
    try {
      List<SetupRequest.Survivor> sv = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        java.net.ServerSocket ss = new java.net.ServerSocket(0, 4,
            java.net.InetAddress.getByName("127.0.0.1"));
        silent.add(ss);
        Thread t = new Thread(() -> {
          try {
            accepted.add(ss.accept()); // connects, then never says a word
          } catch (IOException e) {
            // closed at the end of the test
          }
        });
        t.setDaemon(true);
        t.start();
        sv.add(new SetupRequest.Survivor(i, "127.0.0.1:" + ss.getLocalPort(),
            new org.apache.hadoop.hdfs.protocol.ExtendedBlock("bp", i + 1, 1 << 20, 1001)
                .toString(), 1 << 20, ""));
      }
      SetupRequest setup = new SetupRequest("stalled", 4096, 1 << 20, 1000, sv,
          new byte[][] {{1, 1}});
      io.netec.hdfs.switchroute.wire.SetupAnswer a = control(sw, setup.toJson());
      assertTrue(a.ok(), a.reason());
      String[] hp = a.vip().split(":");
      try (java.net.Socket r = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
        r.setSoTimeout(100);
        java.io.OutputStream out = r.getOutputStream();
        write(out, io.netec.hdfs.switchroute.wire.StreamRequest.readerHello(setup, a.task(),
            a.slotArray(), a.slots(), a.secret()));
        long t0 = System.nanoTime();
        boolean closed = false;
        java.io.ByteArrayOutputStream told = new java.io.ByteArrayOutputStream();
        while (!closed && System.nanoTime() - t0 < 8_000_000_000L) {
          write(out, new NetecPacket(NetecPacket.ACK, a.task(), a.slotArray(),
              NetecPacket.READER, 0, 0, 0, 32, new byte[0])); // the same ACK, again and again
          try {
            for (int b; (b = r.getInputStream().read()) != -1; ) {
              told.write(b); // the switch's error HELLO, then its close
            }
            closed = true;
          } catch (java.net.SocketTimeoutException e) {
            // still open
          } catch (IOException e) {
            closed = true;
          }
        }
        assertTrue(closed, "the task outlived its 1 s timeout on ACKs alone");
        byte[] hello = told.toByteArray();
        io.netec.hdfs.switchroute.wire.StreamRequest.Failure why =
            io.netec.hdfs.switchroute.wire.StreamRequest.errorOf(
                NetecPacket.decodeFrame(hello, 0, hello.length));
        assertTrue(why != null && why.reason.contains("no progress"),
            "the reader was told why: " + (why == null ? "nothing" : why.reason));
      }
      assertEquals(1, sw.getTasksFailed());
    } finally {
      for (java.net.ServerSocket ss : silent) {
        ss.close();
      }
      for (java.net.Socket s : accepted) {
        s.close();
      }
    }
  }

  /**
   * Issue 31: a datagram task whose setup names one host as all 16 agents, kept "alive" by a
   * reader ACKing ahead of any data: the host gets at most 6 HELLOs and 16 ACK copies per
   * agent, and the task fails after its timeout (it never completed a stripe).
   */
  @Test
  void aDatagramTaskIsNoReflector() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    try (java.net.DatagramSocket victim = new java.net.DatagramSocket(
            new InetSocketAddress("127.0.0.3", 0));
        java.net.DatagramSocket reader = new java.net.DatagramSocket(
            new InetSocketAddress("127.0.0.1", 0))) {
      List<SetupRequest.Survivor> sv = new ArrayList<>();
      byte[][] co = new byte[1][16];
      for (int i = 0; i < 16; i++) {
        sv.add(new SetupRequest.Survivor(i, "127.0.0.3:" + victim.getLocalPort(),
            new ExtendedBlock("bp", i + 1, 1 << 20, 1001).toString(), 1 << 20, ""));
        co[0][i] = 1;
      }
      SetupRequest setup = new SetupRequest("reflect", 1024, 0, 1 << 20, 2_000, sv, co, false,
          true);
      io.netec.hdfs.switchroute.wire.SetupAnswer a = control(sw, setup.toJson());
      assertTrue(a.ok(), a.reason());
      java.util.concurrent.atomic.AtomicLong got = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicLong acks = new java.util.concurrent.atomic.AtomicLong();
      Thread counter = new Thread(() -> {
        byte[] buf = new byte[65536];
        while (!victim.isClosed()) {
          java.net.DatagramPacket d = new java.net.DatagramPacket(buf, buf.length);
          try {
            victim.receive(d);
            got.addAndGet(d.getLength());
            if (NetecPacket.decodeFrame(java.nio.ByteBuffer.wrap(buf, 0, d.getLength()))
                .type() == NetecPacket.ACK) {
              acks.incrementAndGet();
            }
          } catch (Exception e) {
            // closed at the end, or not a packet
          }
        }
      });
      counter.setDaemon(true);
      counter.start();
      InetSocketAddress vip = new InetSocketAddress(a.vip().split(":")[0],
          Integer.parseInt(a.vip().split(":")[1]));
      claimDatagram(reader, setup, a, vip);
      long t0 = System.nanoTime();
      for (int seq = 1; sw.getTasksFailed() == 0 && System.nanoTime() - t0 < 15e9; seq++) {
        send(reader, new NetecPacket(NetecPacket.ACK, a.task(), a.slotArray(),
            NetecPacket.READER, 0, 0, Math.min(seq, 1024), 32, new byte[0]), vip);
        Thread.sleep(20);
      }
      assertEquals(1, sw.getTasksFailed(), "the task outlived its silent agents on ACKs");
      assertTrue((System.nanoTime() - t0) / 1e6 < 2_000 + 1_000, "its 2 s without progress");
      Thread.sleep(300);
      assertTrue(acks.get() <= 16L * DatagramHandler.DATAGRAM_UNHEARD_ACKS,
          acks.get() + " ACK copies to agents that never answered");
      long hellos = 0; // one HELLO to each agent
      for (int i = 0; i < 16; i++) {
        hellos += StreamRequest.forSender(setup, a.slots(), i).toHello(a.task(), a.slotArray(),
            i).toBytes().length;
      }
      long ackBytes = new NetecPacket(NetecPacket.ACK, a.task(), a.slotArray(), 0, 0, 0, 1, 32,
          new byte[0]).toBytes().length;
      long bound = 6 * hellos + 16L * DatagramHandler.DATAGRAM_UNHEARD_ACKS * ackBytes;
      assertTrue(got.get() <= bound, got.get() + " bytes at the victim, bound " + bound);
    }
  }

  /**
   * Issue 31: in datagram mode a HELLO with the task's secret binds the task only to an
   * address that proved it receives there (it echoes the cookie the switch sent there): one
   * who holds the secret and forges a victim's source address gets the victim no more bytes
   * than it sent from there, and nothing to the agents; a cookie is good for its own address
   * only; the reader that echoes its own cookie binds the task.
   */
  @Test
  void aForgedSourceAddressIsNeverSentTheStream() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    try (java.net.DatagramSocket victim = new java.net.DatagramSocket(
            new InetSocketAddress("127.0.0.3", 0));
        java.net.DatagramSocket agent = new java.net.DatagramSocket(
            new InetSocketAddress("127.0.0.1", 0));
        java.net.DatagramSocket reader = new java.net.DatagramSocket(
            new InetSocketAddress("127.0.0.1", 0))) {
      List<SetupRequest.Survivor> sv = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        sv.add(new SetupRequest.Survivor(i, "127.0.0.1:" + agent.getLocalPort(),
            new ExtendedBlock("bp", i + 1, 1 << 20, 1001).toString(), 1 << 20, ""));
      }
      SetupRequest setup = new SetupRequest("forged", 1024, 0, 1 << 20, 4_000, sv,
          new byte[][] {{1, 1}}, false, true);
      io.netec.hdfs.switchroute.wire.SetupAnswer a = control(sw, setup.toJson());
      assertTrue(a.ok(), a.reason());
      InetSocketAddress vip = new InetSocketAddress(a.vip().split(":")[0],
          Integer.parseInt(a.vip().split(":")[1]));
      NetecPacket hello = StreamRequest.readerHello(setup, a.task(), a.slotArray(), a.slots(),
          a.secret());
      long sent = 0;
      for (int i = 0; i < 10; i++) { // the forger, secret in hand, "from" the victim
        send(victim, hello, vip);
        sent += hello.toBytes().length;
      }
      long got = 0;
      String victimsCookie = null;
      victim.setSoTimeout(500);
      byte[] buf = new byte[65536];
      try {
        while (true) {
          java.net.DatagramPacket d = new java.net.DatagramPacket(buf, buf.length);
          victim.receive(d);
          got += d.getLength();
          victimsCookie = StreamRequest.cookieOf(NetecPacket.decodeFrame(
              java.nio.ByteBuffer.wrap(buf, 0, d.getLength())));
          assertTrue(victimsCookie != null, "only cookies reach an unproven address");
        }
      } catch (java.net.SocketTimeoutException e) {
        // nothing more
      }
      assertTrue(got > 0 && got <= sent, got + " bytes at the victim for " + sent + " sent");
      assertEquals(10, sw.getDatagramCookies());
      // the victim's cookie, echoed from another address, binds nothing either
      send(reader, StreamRequest.readerHello(setup, a.task(), a.slotArray(), a.slots(),
          a.secret(), victimsCookie), vip);
      agent.setSoTimeout(500);
      assertThrows(java.net.SocketTimeoutException.class,
          () -> agent.receive(new java.net.DatagramPacket(buf, buf.length)),
          "no agent was asked to stream");
      // the reader echoing the cookie sent to its own address takes the task
      claimDatagram(reader, setup, a, vip);
      java.net.DatagramPacket d = new java.net.DatagramPacket(buf, buf.length);
      agent.setSoTimeout(5_000);
      agent.receive(d);
      NetecPacket toAgent = NetecPacket.decodeFrame(java.nio.ByteBuffer.wrap(buf, 0,
          d.getLength()));
      assertEquals(NetecPacket.HELLO, toAgent.type());
      assertTrue(toAgent.sender() < 2, toAgent.toString());
    }
  }

  /**
   * A datagram reader's claim, as SwitchClient makes it: its HELLO, the switch's cookie back
   * to its address, its HELLO again echoing the cookie.
   */
  private static void claimDatagram(java.net.DatagramSocket reader, SetupRequest setup,
      io.netec.hdfs.switchroute.wire.SetupAnswer a, InetSocketAddress vip) throws Exception {
    send(reader, StreamRequest.readerHello(setup, a.task(), a.slotArray(), a.slots(),
        a.secret()), vip);
    byte[] buf = new byte[65536];
    java.net.DatagramPacket d = new java.net.DatagramPacket(buf, buf.length);
    reader.setSoTimeout(5_000);
    reader.receive(d);
    String cookie = StreamRequest.cookieOf(NetecPacket.decodeFrame(java.nio.ByteBuffer.wrap(
        buf, 0, d.getLength())));
    assertTrue(cookie != null, "the switch answers with a cookie");
    send(reader, StreamRequest.readerHello(setup, a.task(), a.slotArray(), a.slots(),
        a.secret(), cookie), vip);
  }

  private static void send(java.net.DatagramSocket s, NetecPacket p, InetSocketAddress to)
      throws IOException {
    byte[] b = p.toBytes();
    s.send(new java.net.DatagramPacket(b, b.length, to));
  }

  private static void write(java.io.OutputStream out, NetecPacket p) throws IOException {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(p.encodedLength());
    p.encode(b);
    out.write(b.array());
    out.flush();
  }

  private static io.netec.hdfs.switchroute.wire.SetupAnswer control(SoftwareSwitch sw,
      byte[] json) throws Exception {
    return controlFrom(sw, new InetSocketAddress("127.0.0.1", 0), json);
  }

  /**
   * Issue 31: one address holds at most its cap of live tasks, claimed or not (its reader may
   * claim them), and an unclaimed one only for the switch's claim timeout; another address
   * sets up meanwhile.
   */
  @Test
  void oneAddressCannotHoardTheSwitch() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.tasksPerPeer = 4;
    o.claimTimeoutMs = 600;
    SoftwareSwitch sw = new SoftwareSwitch(o);
    open.add(sw);
    List<java.net.ServerSocket> silent = new ArrayList<>();
    List<java.net.Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
    try {
      List<SetupRequest.Survivor> sv = new ArrayList<>();
      for (int i = 0; i < 2; i++) { // agents that accept and never say a word
        java.net.ServerSocket ss = new java.net.ServerSocket(0, 50,
            java.net.InetAddress.getByName("127.0.0.1"));
        silent.add(ss);
        Thread t = new Thread(() -> {
          while (!ss.isClosed()) {
            try {
              held.add(ss.accept());
            } catch (IOException e) {
              return; // closed at the end of the test
            }
          }
        });
        t.setDaemon(true);
        t.start();
        sv.add(new SetupRequest.Survivor(i, "127.0.0.1:" + ss.getLocalPort(),
            new ExtendedBlock("bp", i + 1, 1 << 20, 1001).toString(), 1 << 20, ""));
      }
      SetupRequest hoard = new SetupRequest("hoard", 4096, 1 << 20, 1_500, sv,
          new byte[][] {{1, 1}});
      InetSocketAddress hoarder = new InetSocketAddress("127.0.0.2", 0);
      List<io.netec.hdfs.switchroute.wire.SetupAnswer> got = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        got.add(controlFrom(sw, hoarder, hoard.toJson()));
        assertTrue(got.get(i).ok(), got.get(i).reason());
      }
      // its reader claims one (the task then stalls on the silent agents): still counted
      io.netec.hdfs.switchroute.wire.SetupAnswer a = got.get(0);
      String[] hp = a.vip().split(":");
      try (java.net.Socket r = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
        write(r.getOutputStream(), StreamRequest.readerHello(hoard, a.task(), a.slotArray(),
            a.slots(), a.secret()));
        waitFor(() -> held.size() >= 2); // the switch dialed the agents: the task is claimed
        io.netec.hdfs.switchroute.wire.SetupAnswer refused =
            controlFrom(sw, hoarder, hoard.toJson());
        assertFalse(refused.ok());
        assertEquals("4 tasks live set up from 127.0.0.2 (cap 4)", refused.reason());
        // another address is not refused, and its task rebuilds
        List<SurvivorAgent> agents = startAgents(3);
        SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
        long t0 = System.nanoTime();
        assertArrayEquals(g.units[0], rebuild(sw.controlAddress(),
            setup(g, agents, 4096, "", "other"), null)[0]);
        // the unclaimed three are freed after the claim timeout, the claimed one after its
        // own 1.5 s without progress; then the address may set up again
        while (!controlFrom(sw, hoarder, hoard.toJson()).ok()) {
          assertTrue((System.nanoTime() - t0) / 1e6 < 4_000, "hoarded tasks held past 4 s");
          Thread.sleep(50);
        }
      }
    } finally {
      for (java.net.ServerSocket ss : silent) {
        ss.close();
      }
      for (java.net.Socket x : held) {
        x.close();
      }
    }
  }

  /**
   * Issue 31: a requester that set tasks up holding its control connection ({@code hold}) and
   * closes it before any reader claims them takes them with it at once, not after the claim
   * timeout; tasks set up without {@code hold} stay until that timeout, as before.
   */
  @Test
  void aRequesterThatGoesAwayTakesItsUnclaimedTasksWithIt() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.tasksPerPeer = 4;
    o.claimTimeoutMs = 600_000; // the other address's tasks stay for the whole test
    SoftwareSwitch sw = new SoftwareSwitch(o);
    open.add(sw);
    SetupRequest plain = unclaimedSetup("plain");
    InetSocketAddress other = new InetSocketAddress("127.0.0.3", 0);
    for (int i = 0; i < 4; i++) { // set up and gone, without hold: held for the claim timeout
      assertTrue(controlFrom(sw, other, plain.toJson()).ok());
    }
    assertFalse(controlFrom(sw, other, plain.toJson()).ok(), "held past its requester");

    InetSocketAddress requester = new InetSocketAddress("127.0.0.2", 0);
    long failed = sw.getTasksFailed();
    try (java.net.Socket s = new java.net.Socket()) {
      s.bind(requester);
      s.connect(sw.controlAddress(), 2_000);
      java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
      java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
      for (int i = 0; i < 5; i++) {
        io.netec.hdfs.switchroute.wire.ControlFrames.write(out, plain.held().toJson());
        io.netec.hdfs.switchroute.wire.SetupAnswer a =
            io.netec.hdfs.switchroute.wire.SetupAnswer.fromJson(
                io.netec.hdfs.switchroute.wire.ControlFrames.read(in));
        assertEquals(i < 4, a.ok(), i + ": " + a.reason());
      }
    } // the requester goes away
    long t0 = System.nanoTime();
    awaitTasksFailed(sw, failed + 4);
    assertTrue(controlFrom(sw, requester, plain.held().toJson()).ok(), "its tasks were freed");
    assertTrue((System.nanoTime() - t0) / 1e6 < 10_000, "freed at once, not at the timeout");
    assertFalse(controlFrom(sw, other, plain.toJson()).ok(), "the others' still held");
    // the held task set up just now went with its connection too; counted before the loop
    // below reads its baseline (under load the switch counted it late, and the loop's count
    // was then one off for good)
    awaitTasksFailed(sw, failed + 5);

    // our client holds: a reader that fails before its claim (no sinks) frees its task
    for (int i = 0; i < 4; i++) {
      long before = sw.getTasksFailed();
      IOException e = assertThrows(IOException.class, () -> SwitchClient.rebuild(
          sw.controlAddress(), plain, new long[] {1 << 20}, () -> {
            throw new IOException("scripted: no sink");
          }));
      assertEquals("scripted: no sink", e.getMessage());
      awaitTasksFailed(sw, before + 1); // freed, not left for the timeout
    }
  }

  /**
   * A held control connection that the switch closes for being idle is not its requester
   * going away: its unclaimed task stays until the claim timeout.
   */
  @Test
  void aHeldConnectionClosedAsIdleLeavesItsTaskToTheClaimTimeout() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.controlIdleMs = 300;
    o.claimTimeoutMs = 60_000;
    SoftwareSwitch sw = new SoftwareSwitch(o);
    open.add(sw);
    SetupRequest held = unclaimedSetup("idle").held();
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(sw.controlAddress(), 2_000);
      io.netec.hdfs.switchroute.wire.ControlFrames.write(
          new java.io.DataOutputStream(s.getOutputStream()), held.toJson());
      java.io.InputStream in = s.getInputStream();
      assertTrue(io.netec.hdfs.switchroute.wire.SetupAnswer.fromJson(
          io.netec.hdfs.switchroute.wire.ControlFrames.read(new java.io.DataInputStream(in)))
          .ok());
      s.setSoTimeout(10_000);
      assertEquals(-1, in.read(), "closed by the switch as idle");
    }
    Thread.sleep(300);
    assertEquals(0, sw.getTasksFailed(), "the task stays for its claim timeout");
    assertEquals(1, sw.getSlotArraysInUse());
  }

  /**
   * A setup of two agents at ports nobody listens on, with a 600 s timeout: a task for tests
   * of what happens before any reader claims it.
   */
  private static SetupRequest unclaimedSetup(String group) throws Exception {
    List<SetupRequest.Survivor> sv = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      sv.add(new SetupRequest.Survivor(i, "127.0.0.1:" + (40000 + i),
          new ExtendedBlock("bp", i + 1, 1 << 20, 1001).toString(), 1 << 20, ""));
    }
    return new SetupRequest(group, 4096, 1 << 20, 600_000, sv, new byte[][] {{1, 1}});
  }

  private static io.netec.hdfs.switchroute.wire.SetupAnswer controlFrom(SoftwareSwitch sw,
      InetSocketAddress local, byte[] json) throws Exception {
    try (java.net.Socket s = new java.net.Socket()) {
      s.bind(local);
      s.connect(sw.controlAddress(), 2_000);
      io.netec.hdfs.switchroute.wire.ControlFrames.write(
          new java.io.DataOutputStream(s.getOutputStream()), json);
      return io.netec.hdfs.switchroute.wire.SetupAnswer.fromJson(
          io.netec.hdfs.switchroute.wire.ControlFrames.read(
              new java.io.DataInputStream(s.getInputStream())));
    }
  }

  /** Issue 31: a document nested 60,000 deep is refused by its depth, before any parse. */
  @Test
  void aDeepJsonDocumentIsRefusedBeforeItIsParsed() throws Exception {
    SoftwareSwitch sw = startSwitch(1, 64L << 20);
    StringBuilder deep = new StringBuilder("{\"op\":\"setup\",\"x\":");
    for (int i = 0; i < 60_000; i++) {
      deep.append('[');
    }
    io.netec.hdfs.switchroute.wire.SetupAnswer a = control(sw,
        deep.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    assertFalse(a.ok());
    assertEquals("JSON nested deeper than 8 levels", a.reason());
    assertEquals(1, sw.getTasksRefused());
  }

  /**
   * Issue 31: connections that send half a request, from one address, neither stall the
   * metrics page for another reader nor stay open past the request deadline.
   */
  @Test
  void halfSentMetricsRequestsStallNoOne() throws Exception {
    SoftwareSwitch.Options o = new SoftwareSwitch.Options();
    o.metricsPort = 0;
    SoftwareSwitch sw = new SoftwareSwitch(o);
    open.add(sw);
    int port = sw.metricsAddress().getPort();
    List<java.net.Socket> slow = new ArrayList<>();
    try {
      for (int i = 0; i < 40; i++) { // more than the page's caps, from one address
        java.net.Socket s = new java.net.Socket();
        s.bind(new InetSocketAddress("127.0.0.2", 0));
        s.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
        s.getOutputStream().write("GET /prom HTTP/1.1\r\nHost: x\r\n".getBytes(
            java.nio.charset.StandardCharsets.US_ASCII)); // never the blank line
        slow.add(s);
      }
      for (int i = 0; i < 3; i++) {
        java.net.HttpURLConnection c = (java.net.HttpURLConnection) new java.net.URL(
            "http://127.0.0.1:" + port + (i == 2 ? "/jmx" : "/prom")).openConnection();
        c.setConnectTimeout(2_000);
        c.setReadTimeout(2_000);
        String page = new String(c.getInputStream().readAllBytes(),
            java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(200, c.getResponseCode());
        assertTrue(page.contains(i == 2 ? "\"TasksAccepted\":0" : "netec_switch_tasks_accepted 0"),
            page);
      }
      java.net.HttpURLConnection post = (java.net.HttpURLConnection) new java.net.URL(
          "http://127.0.0.1:" + port + "/prom").openConnection();
      post.setRequestMethod("DELETE");
      assertEquals(405, post.getResponseCode());
      // a request sent a byte a second is cut at the deadline too (not an idle timeout)
      long t0 = System.nanoTime();
      try (java.net.Socket trickle = new java.net.Socket()) {
        trickle.bind(new InetSocketAddress("127.0.0.4", 0));
        trickle.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
        java.io.OutputStream out = trickle.getOutputStream();
        out.write("GET /prom HTTP/1.1\r\nX-Slow: ".getBytes(
            java.nio.charset.StandardCharsets.US_ASCII));
        boolean cut = false;
        for (int i = 0; i < 2 * SwitchMetricsPage.REQUEST_DEADLINE_MS / 1000 && !cut; i++) {
          Thread.sleep(1_000);
          try {
            out.write('x');
            out.flush();
          } catch (IOException e) {
            cut = true;
          }
        }
        assertTrue(cut || trickle.getInputStream().read() == -1, "still open after twice the "
            + "deadline");
      } catch (java.net.SocketException e) {
        // reset while we wrote: cut, as it should be
      }
      assertTrue((System.nanoTime() - t0) / 1e6 < SwitchMetricsPage.REQUEST_DEADLINE_MS + 2_500,
          "cut after " + (System.nanoTime() - t0) / 1e6 + " ms");
      t0 = System.nanoTime();
      for (java.net.Socket s : slow) {
        s.setSoTimeout(SwitchMetricsPage.REQUEST_DEADLINE_MS + 3_000);
        try {
          assertEquals(-1, s.getInputStream().read(), "closed, not answered");
        } catch (java.net.SocketException e) {
          assertEquals("Connection reset", e.getMessage()); // closed with our bytes unread
        }
      }
      assertTrue((System.nanoTime() - t0) / 1e6 < SwitchMetricsPage.REQUEST_DEADLINE_MS + 3_000);
    } finally {
      for (java.net.Socket s : slow) {
        s.close();
      }
    }
  }

  /**
   * A peer sending bad setups as fast as it can causes one log line (then a count), not one
   * per request, and text it chose cannot start a line of its own.
   */
  @Test
  void aFloodOfBadSetupsCannotFloodOrForgeTheLog() throws Exception {
    SoftwareSwitch sw = startSwitch(1, 64L << 20);
    // a setup whose agent text holds a newline and a forged line: the refusal quotes it (a
    // parser's error may not: newer Jackson redacts the source it quotes)
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
    byte[] bad = new String(setup(g, startAgents(3), 4096, "", "net").toJson(),
        java.nio.charset.StandardCharsets.UTF_8).replaceFirst("\"agent\":\"[^\"]+\"",
        "\"agent\":\"nope\\\\n2026-11-22 ERROR FORGED line:1\"")
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    org.apache.hadoop.test.GenericTestUtils.LogCapturer log =
        org.apache.hadoop.test.GenericTestUtils.LogCapturer.captureLogs(
            org.slf4j.LoggerFactory.getLogger(SoftwareSwitch.class));
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", sw.controlAddress().getPort())) {
      java.io.DataOutputStream out = new java.io.DataOutputStream(
          new java.io.BufferedOutputStream(s.getOutputStream()));
      java.io.DataInputStream in = new java.io.DataInputStream(
          new java.io.BufferedInputStream(s.getInputStream()));
      for (int i = 0; i < 2000; i++) {
        io.netec.hdfs.switchroute.wire.ControlFrames.write(out, bad);
      }
      out.flush();
      for (int i = 0; i < 2000; i++) {
        assertFalse(io.netec.hdfs.switchroute.wire.SetupAnswer.fromJson(
            io.netec.hdfs.switchroute.wire.ControlFrames.read(in)).ok());
      }
    } finally {
      log.stopCapturing();
    }
    assertEquals(2000, sw.getTasksRefused());
    String text = log.getOutput();
    assertEquals(1, text.split("Refused a task", -1).length - 1, text);
    assertTrue(text.contains("\\x0a2026-11-22 ERROR FORGED"), text); // escaped, kept
    for (String line : text.split("\n")) {
      assertFalse(line.startsWith("2026-11-22 ERROR FORGED"), "forged line: " + line);
    }
  }

  /**
   * Setups with no data flowing reserve their slot memory (the budget counts it) but hold
   * none: memory is taken as packets reach slots, so setups alone cannot grow the switch.
   */
  @Test
  void setupsWithoutDataHoldNoSlotMemory() throws Exception {
    SoftwareSwitch sw = startSwitch(32, 1L << 30);
    List<SurvivorAgent> agents = startAgents(3);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
    for (int i = 0; i < 16; i++) { // 16: one address's cap of tasks not yet claimed
      assertTrue(control(sw, setup(g, agents, 32768, "", "idle-" + i).toJson()).ok());
    }
    assertTrue(sw.getMemoryInUse() >= 16L * 32768, "reserved " + sw.getMemoryInUse());
    assertEquals(0, sw.getMemoryHeld(), "setups alone hold no slot memory");
  }

  @Test
  void refusesWhenSlotArraysOrMemoryRunOut() throws Exception {
    SoftwareSwitch sw = startSwitch(1, 64L << 20);
    List<SurvivorAgent> agents = startAgents(3);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 50_000, 1);
    // Occupy the only slot array with a task whose reader never comes.
    SetupRequest first = setup(g, agents, 4096, "", "a");
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", sw.controlAddress().getPort())) {
      io.netec.hdfs.switchroute.wire.ControlFrames.write(new java.io.DataOutputStream(
          s.getOutputStream()), first.toJson());
      assertTrue(io.netec.hdfs.switchroute.wire.SetupAnswer.fromJson(
          io.netec.hdfs.switchroute.wire.ControlFrames.read(new java.io.DataInputStream(
              s.getInputStream()))).ok());
    }
    RouteDeclinedException e = assertThrows(RouteDeclinedException.class,
        () -> rebuild(sw.controlAddress(), setup(g, agents, 4096, "", "b"), null));
    assertTrue(e.getMessage().contains("no free slot array"), e.getMessage());

    SoftwareSwitch small = startSwitch(4, 1000);
    e = assertThrows(RouteDeclinedException.class,
        () -> rebuild(small.controlAddress(), setup(g, agents, 4096, "", "c"), null));
    assertTrue(e.getMessage().contains("memory budget"), e.getMessage());
    assertEquals(1, small.getTasksRefused());
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
  void agentRefusingTheTokenFailsTheTaskAndFreesTheSwitch(boolean datagram) throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(3);
    memory.token = id -> "good";
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {1}, 50_000, 2);
    long start = System.nanoTime();
    IOException e = assertThrows(IOException.class, () -> rebuild(sw.controlAddress(),
        setup(g, agents, 4096, "forged", "tok", false, datagram), null));
    assertTrue(!(e instanceof RouteDeclinedException), e.toString());
    // told at once, not after the task's timeout (over TCP the switch closes the connection;
    // in datagram mode it sends the reason)
    assertTrue(System.nanoTime() - start < 4_000_000_000L, "before the task's timeout");
    assertTrue(!datagram || e.getMessage().contains("refused"), e.getMessage());
    assertTrue(agents.stream().mapToLong(SurvivorAgent::refusedStreams).sum() >= 1);
    waitFor(() -> sw.getTasksFailed() == 1 && sw.getSlotArraysInUse() == 0);

    byte[][] rows = rebuild(sw.controlAddress(),
        setup(g, agents, 4096, "good", "tok2", false, datagram), null);
    assertArrayEquals(g.units[1], rows[0]);
  }

  /** A switch that vanishes without closing its connection pins no block stream. */
  @Test
  void agentClosesAStreamWhoseSwitchWentSilent() throws Exception {
    SurvivorAgent agent = new SurvivorAgent(memory, "127.0.0.1", 0, 64, 300);
    open.add(agent);
    ExtendedBlock b = new ExtendedBlock("BP-test", 77, 100_000, 1);
    memory.put(b.getBlockId(), new byte[100_000]);
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", agent.address().getPort())) {
      s.getOutputStream().write(new io.netec.hdfs.switchroute.wire.StreamRequest(b, 100_000, 0,
          100_000, 4096, "", 4, 8).toHello(1, 1, 0).toBytes());
      s.setSoTimeout(10_000);
      java.io.InputStream in = s.getInputStream();
      long got = 0;
      int n;
      byte[] buf = new byte[8192];
      while ((n = in.read(buf)) >= 0) { // the first window arrives, then the agent gives up
        got += n;
      }
      assertEquals(4 * (4096 + io.netec.hdfs.switchroute.wire.NetecPacket.HEADER_BYTES), got);
    }
    assertEquals(1, agent.idleClosedStreams());
  }

  /** A survivor that stalls: the task fails after its timeout, and the switch is freed. */
  @Test
  void stalledTaskFailsAfterItsTimeout() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(3);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {0}, 100_000, 4);
    SetupRequest s = setup(g, agents, 4096, "", "stall");
    SetupRequest quick = new SetupRequest("stall", 4096, 0, s.length(), 500, s.survivors(),
        new byte[][] {{(byte) s.coefficient(0, 0), (byte) s.coefficient(0, 1),
            (byte) s.coefficient(0, 2)}});
    memory.stall = true;
    long t0 = System.nanoTime();
    try {
      assertThrows(IOException.class, () -> rebuild(sw.controlAddress(), quick, null));
    } finally {
      memory.stall = false;
    }
    assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "failed within the timeout's reach");
    waitFor(() -> sw.getTasksFailed() == 1 && sw.getSlotArraysInUse() == 0);
  }

  /** Garbage on the data ports closes that connection only; both keep serving. */
  @Test
  void malformedPacketsCloseOnlyTheirConnection() throws Exception {
    SoftwareSwitch sw = startSwitch(2, 64L << 20);
    List<SurvivorAgent> agents = startAgents(3);
    byte[] garbage = new byte[200];
    new java.util.Random(5).nextBytes(garbage);
    garbage[0] = 1; // a plausible version and a complete frame of 20 + 100 bytes, then nonsense
    garbage[14] = 0;
    garbage[15] = 100;
    for (InetSocketAddress port : List.of(sw.dataAddress(), agents.get(0).address())) {
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", port.getPort())) {
        s.getOutputStream().write(garbage);
        s.setSoTimeout(10_000);
        while (s.getInputStream().read() >= 0) {
          // drained until the peer closes
        }
      }
    }
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {2}, 50_000, 5);
    assertArrayEquals(g.units[2], rebuild(sw.controlAddress(), setup(g, agents, 4096, "",
        "after"), null)[0]);
  }

  /**
   * On Linux the data connections run on Netty's native epoll transport, which Hadoop ships:
   * a class path that lost it would fall back to NIO silently, and slower.
   */
  @Test
  void dataConnectionsUseEpollOnLinux() {
    if (System.getProperty("os.name").startsWith("Linux")) {
      assertTrue(io.netty.channel.epoll.Epoll.isAvailable(),
          () -> "epoll unavailable: " + io.netty.channel.epoll.Epoll.unavailabilityCause());
      assertEquals("epoll", Transport.name());
    } else {
      assertEquals("nio", Transport.name());
    }
  }

  @Test
  void switchThatIsDownDeclines() throws Exception {
    SoftwareSwitch sw = startSwitch(1, 1 << 20);
    InetSocketAddress gone = sw.controlAddress();
    sw.close();
    List<SurvivorAgent> agents = startAgents(3);
    SwitchTaskTest.Group g = new SwitchTaskTest.Group(3, 2, new int[] {1}, 10_000, 3);
    RouteDeclinedException e = assertThrows(RouteDeclinedException.class,
        () -> rebuild(gone, setup(g, agents, 4096, "", "down"), null));
    assertTrue(e.getMessage().contains("unreachable"), e.getMessage());
  }

  /** A condition on the switch's counters: read without I/O, throws nothing. */
  private interface Condition {
    boolean holds();
  }

  /** Waits until the switch has counted exactly {@code n} failed tasks; a miss says how many. */
  private static void awaitTasksFailed(SoftwareSwitch sw, long n) throws InterruptedException {
    waitFor(() -> sw.getTasksFailed() == n,
        () -> "failed " + sw.getTasksFailed() + ", expected " + n);
  }

  private static void waitFor(Condition c) throws InterruptedException {
    waitFor(c, () -> "");
  }

  private static void waitFor(Condition c, java.util.function.Supplier<String> state)
      throws InterruptedException {
    try {
      Waits.until("condition", 30_000, c::holds, state);
    } catch (InterruptedException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new AssertionError(e); // c throws nothing checked
    }
  }
}
