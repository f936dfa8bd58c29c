package io.netec.hdfs.switchroute.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The packet header and control messages of docs/protocol.md, and their rejections. */
class WireFormatTest {
  private static NetecPacket sample(int payloadLen) {
    byte[] payload = new byte[payloadLen];
    new Random(payloadLen).nextBytes(payload);
    return new NetecPacket(NetecPacket.DATA, 7, 2, 5, 0, 1234 % 64, 1234, 0, payload);
  }

  @Test
  void everyStripePayloadIsWholeWordsAndCoversTheStream() {
    int p = 64;
    for (long length = 1; length <= 5 * p; length++) {
      long stripes = PacketStripes.count(length, p);
      long covered = 0;
      for (long q = 0; q < stripes; q++) {
        int n = PacketStripes.payloadLength(length, p, q);
        int bytes = PacketStripes.streamBytes(length, p, q);
        assertEquals(0, n % NetecPacket.WORD_BYTES, "L=" + length + " stripe " + q);
        assertTrue(bytes <= n && n - bytes < NetecPacket.WORD_BYTES && n <= p, "L=" + length);
        assertEquals(q < stripes - 1 ? p : n, n);
        covered += bytes;
      }
      assertEquals(length, covered, "L=" + length);
    }
    assertEquals(20, PacketStripes.payloadLength(64 * 3 + 17, 64, 3));
    assertEquals(64, PacketStripes.payloadLength(64 * 3 + 63, 64, 3));
  }

  @Test
  void headerLayoutIsTheDocumentedOne() throws Exception {
    NetecPacket p = new NetecPacket(NetecPacket.ACK, 0xab, 0x0c, NetecPacket.READER,
        NetecPacket.FLAG_RETX, 0x1234, 0x89abcdefL, 0x0102, new byte[] {9, 8, 7});
    byte[] b = p.toBytes();
    assertEquals(23, b.length);
    assertArrayEquals(new byte[] {3, 3, (byte) 0xab, 0x0c, (byte) 0xff, 2, 0x12, 0x34,
        (byte) 0x89, (byte) 0xab, (byte) 0xcd, (byte) 0xef, 1, 2, 0, 3},
        java.util.Arrays.copyOf(b, 16));
    assertEquals(0, b[18] | b[19], "reserved");
    NetecPacket q = NetecPacket.decode(ByteBuffer.wrap(b));
    assertEquals(p.toString(), q.toString());
    assertArrayEquals(p.payload(), q.payload());
    assertEquals(23, NetecPacket.frameLength(ByteBuffer.wrap(b)));
    assertEquals(-1, NetecPacket.frameLength(ByteBuffer.wrap(b, 0, 19)));
  }

  @Test
  void roundTripsBackToBackInOneStream() throws Exception {
    ByteBuffer stream = ByteBuffer.allocate(4096);
    for (int len : new int[] {0, 1, 64, 1001}) {
      sample(len).encode(stream);
    }
    stream.flip();
    for (int len : new int[] {0, 1, 64, 1001}) {
      NetecPacket p = NetecPacket.decode(stream);
      assertArrayEquals(sample(len).payload(), p.payload());
      assertEquals(1234, p.seq());
    }
    assertFalse(stream.hasRemaining());
  }

  /** RFC 1071 as written: big-endian byte pairs, end-around carry, complement. */
  private static int referenceChecksum(byte[] b, int from, int to) {
    long sum = 0;
    for (int i = from; i < to; i += 2) {
      sum += (b[i] & 0xff) << 8 | (i + 1 < to ? b[i + 1] & 0xff : 0);
    }
    while ((sum >>> 16) != 0) {
      sum = (sum & 0xffff) + (sum >>> 16);
    }
    return (int) (~sum & 0xffff);
  }

  /**
   * The word-at-a-time checksum equals RFC 1071's, on arrays and direct buffers alike, in
   * libnetec.so (ranges from 256 bytes, unless the run forces native code off) and in Java.
   */
  @Test
  void checksumIsRfc1071() {
    Random rnd = new Random(1071);
    for (int round = 0; round < 3000; round++) {
      // mostly short ranges (every tail of the 32- and 8-byte loops), now and then a frame's
      // worth (carries piling up in the four sums)
      byte[] b = new byte[round % 100 == 1 ? 65_536 + rnd.nextInt(64) : rnd.nextInt(300)];
      int fill = round % 3; // random bytes, all ones (carries everywhere), zeros
      for (int i = 0; i < b.length; i++) {
        b[i] = fill == 0 ? (byte) rnd.nextInt() : fill == 1 ? (byte) 0xff : 0;
      }
      int from = b.length == 0 ? 0 : rnd.nextInt(b.length);
      int to = from + rnd.nextInt(b.length - from + 1);
      int want = referenceChecksum(b, from, to);
      assertEquals(want, InternetChecksum.of(b, from, to), "array " + round);
      assertEquals(want, InternetChecksum.finish(InternetChecksum.javaSum(b, from, to)),
          "Java loops " + round);
      ByteBuffer direct = ByteBuffer.allocateDirect(b.length).put(b);
      assertEquals(want, InternetChecksum.of(direct, from, to), "direct " + round);
      assertEquals(want, InternetChecksum.of(ByteBuffer.wrap(b).asReadOnlyBuffer(), from, to),
          "read-only " + round);
    }
  }

  /**
   * A frame in a direct buffer decodes to the same packet as from an array, its payload a view
   * of the buffer (payloadBuffer; payloadArray refuses), and encodes back to the same bytes;
   * a corrupt frame or a buffer holding more than one frame is refused.
   */
  @Test
  void decodeFrameViewsADirectBuffer() throws Exception {
    Random rnd = new Random(7);
    for (int i = 0; i < 200; i++) {
      byte[] payload = new byte[rnd.nextInt(i < 100 ? 300 : 40000)];
      rnd.nextBytes(payload);
      NetecPacket p = new NetecPacket(1 + rnd.nextInt(4), rnd.nextInt(256), rnd.nextInt(256),
          rnd.nextInt(256), rnd.nextInt(4), rnd.nextInt(0x10000), rnd.nextInt() & 0xffffffffL,
          rnd.nextInt(0x10000), payload);
      byte[] bytes = p.toBytes();
      int at = rnd.nextInt(5);
      ByteBuffer direct = ByteBuffer.allocateDirect(at + bytes.length + 3);
      direct.position(at);
      direct.put(bytes);
      direct.limit(at + bytes.length).position(at);
      NetecPacket v = NetecPacket.decodeFrame(direct);
      assertEquals(p.toString(), v.toString());
      assertArrayEquals(payload, v.payload());
      assertEquals(at + NetecPacket.HEADER_BYTES, v.payloadOffset());
      assertEquals(p.checksum(), v.checksum());
      assertArrayEquals(bytes, v.toBytes());
      assertThrows(IllegalStateException.class, v::payloadArray);
      ByteBuf frame = NetecPacketCodec.frame(v, UnpooledByteBufAllocator.DEFAULT);
      try {
        byte[] encoded = new byte[frame.readableBytes()];
        frame.getBytes(0, encoded);
        assertArrayEquals(bytes, encoded);
      } finally {
        frame.release();
      }
      if (payload.length > 0) { // the view sees the buffer's bytes, not a copy
        direct.put(at + NetecPacket.HEADER_BYTES, (byte) (payload[0] + 1));
        assertEquals((byte) (payload[0] + 1), v.payload()[0]);
        assertThrows(ProtocolException.class, () -> NetecPacket.decodeFrame(direct));
        direct.put(at + NetecPacket.HEADER_BYTES, payload[0]);
      }
      direct.limit(at + bytes.length + 1);
      assertThrows(ProtocolException.class, () -> NetecPacket.decodeFrame(direct));
    }
  }

  /**
   * The in-place decoder gives every frame of a stream cut into reads at random points (a
   * frame split over two or more reads, many frames in one read) once, in order and intact;
   * a corrupt frame fails the connection and nothing after it is passed on.
   */
  @Test
  void inPlaceDecoderPassesFramesSplitAnywhere() throws Exception {
    Random rnd = new Random(21);
    List<NetecPacket> sent = new java.util.ArrayList<>();
    java.io.ByteArrayOutputStream stream = new java.io.ByteArrayOutputStream();
    for (int i = 0; i < 300; i++) {
      byte[] payload = new byte[rnd.nextInt(i % 10 == 0 ? 65_000 : 3000)];
      rnd.nextBytes(payload);
      NetecPacket p = new NetecPacket(NetecPacket.DATA, 1, 2, rnd.nextInt(6), 0, i % 64, i, 0,
          payload);
      sent.add(p);
      stream.write(p.toBytes());
    }
    byte[] all = stream.toByteArray();
    List<String> got = new java.util.ArrayList<>();
    io.netty.channel.embedded.EmbeddedChannel ch = new io.netty.channel.embedded.EmbeddedChannel(
        new NetecPacketCodec.InPlaceDecoder(),
        new io.netty.channel.SimpleChannelInboundHandler<NetecPacket>() {
          @Override
          protected void channelRead0(io.netty.channel.ChannelHandlerContext ctx,
              NetecPacket p) {
            // what a handler that is done when channelRead returns may do: read it now
            got.add(p + java.util.Arrays.toString(p.payload()));
          }
        });
    io.netty.buffer.PooledByteBufAllocator pool =
        new io.netty.buffer.PooledByteBufAllocator(true);
    for (int at = 0; at < all.length; ) {
      int n = Math.min(all.length - at, rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(30)
          : 1 + rnd.nextInt(200_000));
      ByteBuf read = pool.directBuffer(n);
      read.writeBytes(all, at, n);
      ch.writeInbound(read);
      assertEquals(0, read.refCnt(), "each read released once its frames are passed on");
      at += n;
    }
    assertEquals(sent.size(), got.size());
    for (int i = 0; i < sent.size(); i++) {
      NetecPacket p = sent.get(i);
      assertEquals(p + java.util.Arrays.toString(p.payload()), got.get(i), "packet " + i);
    }
    // a corrupt frame, then a good one: the connection fails, the good one is not passed on
    byte[] bad = sent.get(0).toBytes();
    bad[NetecPacket.HEADER_BYTES] ^= 1;
    ByteBuf badRead = pool.directBuffer().writeBytes(bad).writeBytes(sent.get(1).toBytes());
    assertThrows(io.netty.handler.codec.CorruptedFrameException.class,
        () -> ch.writeInbound(badRead));
    ch.writeInbound(pool.directBuffer().writeBytes(sent.get(2).toBytes()));
    assertEquals(sent.size(), got.size(), "nothing passed on after a corrupt frame");
    ch.finishAndReleaseAll();
    assertEquals(0, pool.metric().directArenas().stream()
        .mapToLong(a -> a.numActiveAllocations()).sum(), "reads and the split-frame buffer freed");
  }

  /** Long ranges are summed in libnetec.so unless the run forces native code off. */
  @Test
  void checksumRunsNativeUnlessForcedOff() {
    assertEquals(!Boolean.getBoolean(io.netec.hdfs.codec.IsalNative.DISABLE_PROPERTY),
        InternetChecksum.isNative(), io.netec.hdfs.codec.IsalNative.libraryUnavailableReason());
  }

  /** decodeFrame checks a frame where it lies and gives a packet viewing it, not a copy. */
  @Test
  void decodeFrameViewsTheFrame() throws Exception {
    byte[] packet = sample(100).toBytes();
    byte[] frames = new byte[7 + packet.length + 5];
    System.arraycopy(packet, 0, frames, 7, packet.length);
    NetecPacket v = NetecPacket.decodeFrame(frames, 7, packet.length);
    assertEquals(sample(100).toString(), v.toString());
    assertTrue(v.payloadArray() == frames && v.payloadOffset() == 7 + NetecPacket.HEADER_BYTES);
    assertArrayEquals(sample(100).payload(), v.payload());
    assertArrayEquals(packet, v.toBytes());
    assertEquals(5, v.withWindow(5).window());
    assertArrayEquals(sample(100).payload(), v.withWindow(5).payload());
    frames[7 + 40] ^= 1;
    assertThrows(ProtocolException.class, () -> NetecPacket.decodeFrame(frames, 7,
        packet.length));
    frames[7 + 40] ^= 1;
    assertThrows(ProtocolException.class, () -> NetecPacket.decodeFrame(frames, 7,
        packet.length + 1), "a frame longer than its packet");
    assertThrows(IllegalArgumentException.class, () -> new NetecPacket(NetecPacket.DATA, 0, 0,
        0, 0, 0, 0, 0, new byte[10], 6, 5));
  }

  /**
   * The checksum computed from the fields and the payload where it lies (header and payload held
   * apart, odd lengths, payload views at odd offsets) seals the frame as a checksum over the
   * frame's own bytes does; the frame a sender builds in a direct buffer is the packet's bytes.
   */
  @Test
  void checksumFromFieldsSealsTheFrame() throws Exception {
    Random rnd = new Random(16);
    for (int i = 0; i < 2000; i++) {
      int len = rnd.nextInt(i < 1000 ? 80 : 3000);
      int off = rnd.nextInt(9);
      byte[] array = new byte[off + len + rnd.nextInt(5)];
      rnd.nextBytes(array);
      if (i % 7 == 0) {
        java.util.Arrays.fill(array, (byte) 0xff); // sums that fold to 0 and 0xffff
      }
      NetecPacket p = new NetecPacket(1 + rnd.nextInt(4), rnd.nextInt(256), rnd.nextInt(256),
          rnd.nextInt(256), rnd.nextInt(4), rnd.nextInt(0x10000), rnd.nextInt() & 0xffffffffL,
          rnd.nextInt(0x10000), array, off, len);
      ByteBuf frame = NetecPacketCodec.frame(p, UnpooledByteBufAllocator.DEFAULT);
      try {
        byte[] bytes = new byte[frame.readableBytes()];
        frame.getBytes(frame.readerIndex(), bytes);
        assertTrue(frame.isDirect());
        assertEquals(0, InternetChecksum.of(bytes, 0, bytes.length), "packet " + i);
        assertArrayEquals(bytes, p.toBytes());
        NetecPacket back = NetecPacket.decode(ByteBuffer.wrap(bytes));
        assertEquals(p.toString(), back.toString());
        assertArrayEquals(p.payload(), back.payload());
      } finally {
        frame.release();
      }
    }
  }

  /**
   * A DATA frame whose payload is written straight into its buffer is byte for byte the frame
   * of the same packet built from an array (all-ones payloads fold to 0 and 0xffff); a payload
   * writer that leaves bytes unwritten gets an error, not a frame of stale memory.
   */
  @Test
  void dataFrameWrittenInPlaceIsThePacketsFrame() throws Exception {
    Random rnd = new Random(1460);
    io.netty.buffer.PooledByteBufAllocator pool = new io.netty.buffer.PooledByteBufAllocator(true);
    for (int i = 0; i < 1000; i++) {
      int len = i < 500 ? rnd.nextInt(80) : rnd.nextInt(NetecPacket.MAX_STREAM_PAYLOAD + 1);
      byte[] payload = new byte[len];
      rnd.nextBytes(payload);
      if (i % 7 == 0) {
        java.util.Arrays.fill(payload, (byte) 0xff);
      }
      long seq = rnd.nextInt() & 0xffffffffL;
      int task = rnd.nextInt(256);
      int array = rnd.nextInt(256);
      int sender = rnd.nextInt(255);
      int slot = rnd.nextInt(0x10000);
      NetecPacket p = new NetecPacket(NetecPacket.DATA, task, array, sender, 0, slot, seq, 0,
          payload);
      ByteBuf frame = NetecPacketCodec.dataFrame(task, array, sender, slot, seq, len,
          b -> b.put(payload), pool);
      try {
        assertTrue(frame.isDirect());
        byte[] bytes = new byte[frame.readableBytes()];
        frame.getBytes(frame.readerIndex(), bytes);
        assertArrayEquals(p.toBytes(), bytes, "packet " + i + ", " + len + " bytes");
      } finally {
        frame.release();
      }
    }
    java.io.IOException e = assertThrows(java.io.IOException.class,
        () -> NetecPacketCodec.dataFrame(1, 2, 3, 4, 5, 100, b -> b.put(new byte[99]), pool));
    assertTrue(e.getMessage().contains("1 of 100 bytes unwritten"), e.getMessage());
    assertEquals(0, pool.metric().directArenas().stream()
        .mapToLong(a -> a.numActiveAllocations()).sum(), "every frame released");
  }

  /** Every single-bit error anywhere in a packet is refused. */
  @Test
  void everySingleBitFlipIsRejected() {
    for (int len : new int[] {0, 33, 256}) {
      byte[] good = sample(len).toBytes();
      for (int bit = 0; bit < good.length * 8; bit++) {
        byte[] bad = good.clone();
        bad[bit / 8] ^= (byte) (1 << (bit % 8));
        int flipped = bit;
        assertThrows(ProtocolException.class, () -> NetecPacket.decode(ByteBuffer.wrap(bad)),
            () -> "bit " + flipped + " of a " + len + "-byte payload");
      }
    }
  }

  @Test
  void malformedHeadersAreRefusedWithAReason() {
    // version 1 (EBSN over the span) is refused, sealed as its sender would seal it
    assertReason(b -> b[0] = 2, "version 2, expected 3");
    assertReason(b -> b[0] = 4, "version 4, expected 3");
    assertReason(b -> b[1] = 9, "type");
    assertReason(b -> b[5] = (byte) 0x80, "flags");
    assertReason(b -> b[19] = 1, "reserved");
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> NetecPacket.decode(ByteBuffer.wrap(sample(10).toBytes(), 0, 25)));
    assertTrue(e.getMessage().contains("truncated"), e.getMessage());
  }

  private interface Mutation {
    void apply(byte[] b);
  }

  /** Applies a mutation and fixes the checksum, so the field check itself must refuse it. */
  private static void assertReason(Mutation m, String expected) {
    byte[] b = sample(10).toBytes();
    m.apply(b);
    b[16] = 0;
    b[17] = 0;
    ByteBuffer bb = ByteBuffer.wrap(b);
    int sum = InternetChecksum.of(bb, 0, b.length);
    bb.putShort(16, (short) (sum == 0 ? 0xffff : sum));
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> NetecPacket.decode(ByteBuffer.wrap(b)));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  static SetupRequest setup() throws ProtocolException {
    return new SetupRequest("BP-1:blk_-160_1001", 4096, 1_000_000, 30_000, List.of(
        new SetupRequest.Survivor(1, "198.18.0.3:50200", "BP-1:blk_-159_1001", 1_000_000, ""),
        new SetupRequest.Survivor(0, "198.18.0.2:50200", "BP-1:blk_-158_1001", 999_000, "dG9r")),
        new byte[][] {{3, (byte) 200}});
  }

  @Test
  void setupRoundTripsThroughJson() throws Exception {
    SetupRequest s = SetupRequest.fromJson(setup().toJson());
    assertEquals(2, s.k());
    assertEquals(1, s.rows());
    assertEquals("198.18.0.2:50200", s.survivors().get(0).agent(), "sorted by sender");
    assertEquals(200, s.coefficient(0, 1));
    assertEquals(245, s.stripes());
    assertEquals(1_000_000 - 244 * 4096, s.payloadLength(244));

    String secret = "0123456789abcdef0123456789abcdef";
    SetupAnswer a = SetupAnswer.fromJson(SetupAnswer.accept(3, 1, 64, "h:40003", secret)
        .toJson());
    assertTrue(a.ok());
    assertEquals("h:40003", a.vip());
    assertEquals(secret, a.secret());
    SetupAnswer r = SetupAnswer.fromJson(SetupAnswer.refuse("no free slot array").toJson());
    assertEquals("no free slot array", r.reason());
  }

  @Test
  void badSetupNamesTheField() throws Exception {
    String good = new String(setup().toJson(), StandardCharsets.UTF_8);
    assertSetupError(good.replace("\"payload\":4096", "\"payload\":100"), "payload");
    assertSetupError(good.replace("\"k\":2", "\"k\":3"), "k:");
    assertSetupError(good.replace("[3,200]", "[3,300]"), "coefficients[0][1]");
    assertSetupError(good.replace("[3,200]", "[3]"), "coefficients[0]");
    assertSetupError(good.replace("198.18.0.3:50200", "no-port"), "survivors[1].agent");
    assertSetupError(good.replace("\"unitLength\":999000", "\"unitLength\":-1"),
        "survivors[0].unitLength");
    assertSetupError(good.replace("\"sender\":1", "\"sender\":0"), "survivors");
    assertTrue(good.contains("\"version\":3"), good);
    assertSetupError(good.replace("\"version\":3", "\"version\":2"),
        "version: 2 not supported (this side speaks 3)");
    // the packet's 16-bit length holds 65535: 65472 is the largest payload, 65536 is refused
    assertSetupError(good.replace("\"payload\":4096", "\"payload\":65536"), "payload");
    SetupRequest.fromJson(good.replace("\"payload\":4096", "\"payload\":65472")
        .getBytes(StandardCharsets.UTF_8));
    // checked as a long before it is an int: 4294967360 is not 64
    assertSetupError(good.replace("\"payload\":4096", "\"payload\":4294967360"), "payload");
    assertSetupError(good.replace("\"sender\":1", "\"sender\":4294967297"), "sender");
    // deep nesting is refused before parsing, without a stack overflow
    assertSetupError("[".repeat(10_000), "nested deeper");
    assertSetupError("[".repeat(70_000), "more than 65536");
    assertSetupError("{\"op\":\"setup\",\"x\":\"" + "[".repeat(1000) + "\"}", "version");
    assertSetupError("[1,2]", "not a JSON object");
    assertSetupError("{\"op\":", "not JSON");
  }

  private static void assertSetupError(String json, String field) {
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> SetupRequest.fromJson(json.getBytes(StandardCharsets.UTF_8)));
    assertTrue(e.getMessage().startsWith(field) || e.getMessage().contains(field),
        e.getMessage());
  }

  /**
   * A P4 switch finds the secret at a fixed offset of the reader's HELLO (docs/protocol.md
   * "HELLO"; switch-p4 headers.p4 reader_hello_h, netec_model.READER_HELLO_PREFIX): every form
   * the reader sends begins with the same 27 bytes and the secret's 32 digits.
   */
  @Test
  void theReadersHelloStartsWithItsSecretAtTheOffsetAP4SwitchReads() throws Exception {
    String secret = "0123456789abcdef0123456789abcdef";
    String prefix = "{\"role\":\"reader\",\"secret\":\"";
    assertEquals(27, prefix.length());
    String big = "x".repeat(3000);
    SetupRequest oversized = new SetupRequest("BP-1:blk_-160_1001", 4096, 1_000_000, 30_000,
        List.of(new SetupRequest.Survivor(0, "198.18.0.2:50200", "BP-1:blk_-158_1001", 1_000,
            big), new SetupRequest.Survivor(1, "198.18.0.3:50200", "BP-1:blk_-159_1001", 1_000,
            big)), new byte[][] {{3, (byte) 200}});
    for (NetecPacket hello : new NetecPacket[] {
        StreamRequest.readerHello(setup(), 7, 2, 64, secret),
        StreamRequest.readerHello(setup(), 7, 2, 64, secret, "c0ffee"),
        StreamRequest.readerHello(oversized, 7, 2, 64, secret)}) {
      String json = new String(hello.payload(), StandardCharsets.UTF_8);
      assertTrue(json.startsWith(prefix + secret + "\""), json);
      assertEquals(secret, StreamRequest.readerSecret(hello));
    }
    assertTrue(StreamRequest.readerHello(oversized, 7, 2, 64, secret).payload().length < 100);
  }

  @Test
  void theReadersHelloCarriesEverySurvivorsStreamForAP4Switch() throws Exception {
    SetupRequest setup = setup();
    NetecPacket hello = StreamRequest.readerHello(setup, 7, 2, 64,
        "0123456789abcdef0123456789abcdef");
    assertEquals("0123456789abcdef0123456789abcdef", StreamRequest.readerSecret(hello));
    assertEquals(NetecPacket.READER, hello.sender());
    for (int sender = 0; sender < 2; sender++) {
      // what a P4 switch multicasts: the same HELLO, this copy's sender number set
      NetecPacket copy = new NetecPacket(NetecPacket.HELLO, 7, 2, sender, 0, 0, 0, 0,
          hello.payload());
      StreamRequest got = StreamRequest.fromHello(copy);
      StreamRequest want = StreamRequest.forSender(setup, 64, sender);
      assertEquals(want.block(), got.block());
      assertEquals(want.unitLength(), got.unitLength());
      assertEquals(want.token(), got.token());
      assertEquals(want.offset(), got.offset());
      assertEquals(want.length(), got.length());
      assertEquals(want.payload(), got.payload());
      assertEquals(32, got.window());
      assertEquals(64, got.slots());
    }
    String json = new String(hello.payload(), StandardCharsets.UTF_8);
    for (String[] bad : new String[][] {{"\"payload\":4096", "\"payload\":65536"},
        {"\"payload\":4096", "\"payload\":4294967360"}, {"\"slots\":64", "\"slots\":65600"},
        {"\"window\":32", "\"window\":4294967328"}}) {
      assertTrue(json.contains(bad[0]), json);
      NetecPacket forged = new NetecPacket(NetecPacket.HELLO, 7, 2, 0, 0, 0, 0, 0,
          json.replace(bad[0], bad[1]).getBytes(StandardCharsets.UTF_8));
      assertThrows(ProtocolException.class, () -> StreamRequest.fromHello(forged), bad[1]);
    }
    assertThrows(ProtocolException.class, () -> SetupAnswer.fromJson(
        "{\"ok\":true,\"task\":4294967296,\"slotArray\":1,\"slots\":64,\"vip\":\"h:1\"}"
            .getBytes(StandardCharsets.UTF_8)));
    NetecPacket beyond = new NetecPacket(NetecPacket.HELLO, 7, 2, 5, 0, 0, 0, 0,
        hello.payload());
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> StreamRequest.fromHello(beyond));
    assertTrue(e.getMessage().contains("no entry for sender 5"), e.getMessage());
  }

  @Test
  void aPremultipliedTaskTellsEverySurvivorItsCoefficient() throws Exception {
    SetupRequest multiply = setup();
    SetupRequest pre = new SetupRequest("g", 4096, 0, 1_000_000, 30_000, multiply.survivors(),
        new byte[][] {{3, (byte) 200}}, true);
    SetupRequest back = SetupRequest.fromJson(pre.toJson());
    assertTrue(back.premultiplied());
    assertFalse(SetupRequest.fromJson(multiply.toJson()).premultiplied());
    assertEquals(1, back.switchCoefficient(0, 1));
    assertEquals(200, back.senderCoefficient(1));
    assertEquals(1, multiply.senderCoefficient(1));
    for (int sender = 0; sender < 2; sender++) {
      int want = sender == 0 ? 3 : 200;
      // from the software switch's HELLO, and from a P4 switch's copy of the reader's
      StreamRequest direct = StreamRequest.fromHello(
          StreamRequest.forSender(back, 64, sender).toHello(7, 2, sender));
      assertEquals(want, direct.coefficient());
      NetecPacket hello = StreamRequest.readerHello(back, 7, 2, 64, "s");
      NetecPacket copy = new NetecPacket(NetecPacket.HELLO, 7, 2, sender, 0, 0, 0, 0,
          hello.payload());
      assertEquals(want, StreamRequest.fromHello(copy).coefficient());
      assertEquals(1, StreamRequest.fromHello(StreamRequest.forSender(multiply, 64, sender)
          .toHello(7, 2, sender)).coefficient());
    }
    String json = new String(pre.toJson(), StandardCharsets.UTF_8);
    assertTrue(json.contains("\"premultiplied\":true"), json);
    assertSetupError(json.replace("\"premultiplied\":true", "\"premultiplied\":1"),
        "premultiplied: not true or false");
    assertSetupError(json.replace("[[3,200]]", "[[3,200],[1,1]]").replace("\"rows\":1",
        "\"rows\":2"), "premultiplied: needs rows 1");
    String hello = new String(StreamRequest.forSender(back, 64, 1).toHello(7, 2, 1).payload(),
        StandardCharsets.UTF_8);
    assertTrue(hello.contains("\"coefficient\":200"), hello);
    NetecPacket forged = new NetecPacket(NetecPacket.HELLO, 7, 2, 1, 0, 0, 0, 0,
        hello.replace("\"coefficient\":200", "\"coefficient\":256")
            .getBytes(StandardCharsets.UTF_8));
    assertThrows(ProtocolException.class, () -> StreamRequest.fromHello(forged));
  }
}
