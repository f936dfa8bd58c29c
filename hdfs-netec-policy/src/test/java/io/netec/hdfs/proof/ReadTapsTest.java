package io.netec.hdfs.proof;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netec.hdfs.codec.Fingerprint;
import io.netec.hdfs.route.MemoryBlocks;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.junit.jupiter.api.Test;

/**
 * A proof takes what a route's stream reads (the DataNode's verified reads feed its taps) and
 * reads itself only the rest: every byte of the range fingerprinted once whatever the spans,
 * overlaps and order; a proof arriving while a stream reads its block reads only what the stream
 * read before it came, and a proof of a block nobody streams reads it all.
 */
class ReadTapsTest {
  private static final Random RND = new Random(9);

  @Test
  void everyByteOnceWhateverTheSpans() {
    byte[] block = new byte[200_000];
    RND.nextBytes(block);
    byte[] key = new byte[16];
    RND.nextBytes(key);
    long offset = 3000;
    long length = 150_000;
    ReadTaps taps = new ReadTaps();
    Fingerprint f = new Fingerprint(key);
    ReadTaps.Want w = taps.want(7, offset, length, f);
    assertNull(w.headGap());
    // overlapping spans in a random order, some outside the range, some of another block
    for (int i = 0; i < 200 && !w.complete(); i++) {
      int at = RND.nextInt(block.length - 1);
      int n = 1 + RND.nextInt(Math.min(20_000, block.length - at));
      taps.offer(7, at, ByteBuffer.wrap(block, at, n).slice());
      taps.offer(8, at, ByteBuffer.wrap(new byte[n]));
    }
    long[] gap;
    while ((gap = w.firstGap(10_000)) != null) {
      assertTrue(gap[0] >= offset && gap[1] <= offset + length && gap[0] < gap[1]);
      taps.offer(7, gap[0], ByteBuffer.wrap(block, (int) gap[0], (int) (gap[1] - gap[0])).slice());
    }
    assertTrue(w.complete());
    assertEquals(length, w.bytes());
    w.close();
    assertArrayEquals(Fingerprint.of(key, block, (int) offset, (int) length), f.finish());
  }

  @Test
  void aStreamThatStartedBeforeTheProofLeavesOnlyItsHead() {
    ReadTaps taps = new ReadTaps();
    ReadTaps.Want w = taps.want(1, 100, 1000, new Fingerprint(new byte[16]));
    taps.offer(1, 600, ByteBuffer.wrap(new byte[100]));
    assertArrayEquals(new long[] {100, 600}, w.headGap());
    assertArrayEquals(new long[] {100, 600}, w.firstGap(1 << 20));
    assertArrayEquals(new long[] {100, 150}, w.firstGap(50));
    taps.offer(1, 0, ByteBuffer.wrap(new byte[600]));
    assertNull(w.headGap());
    assertArrayEquals(new long[] {700, 1100}, w.firstGap(1 << 20));
    assertFalse(w.complete());
  }

  @Test
  void whatAStreamReadBeforeTheProofCameIsReadAtOnce() throws Exception {
    ReadTaps taps = new ReadTaps();
    taps.streamOpened(4);
    taps.offer(4, 0, ByteBuffer.wrap(new byte[300]));
    taps.offer(4, 300, ByteBuffer.wrap(new byte[400])); // the stream has reached 700
    taps.offer(4, 900, ByteBuffer.wrap(new byte[50])); // and another part, apart
    ReadTaps.Want w = taps.want(4, 100, 1000, new Fingerprint(new byte[16]));
    // the stream is still open, yet what it read is known now: no wait for it to close
    assertArrayEquals(new long[] {100, 700}, w.headGap());
    taps.offer(4, 100, ByteBuffer.wrap(new byte[600])); // the proof's own read feeds it
    assertArrayEquals(new long[] {900, 950}, w.headGap());
    taps.offer(4, 900, ByteBuffer.wrap(new byte[50]));
    assertNull(w.headGap(), "the rest is the stream's to read");
    taps.offer(4, 700, ByteBuffer.wrap(new byte[400])); // the stream goes on past the range
    assertTrue(w.complete());
    w.close();
    // a range past what was read leaves a proof waiting for the stream, as before
    ReadTaps.Want later = taps.want(4, 2000, 100, new Fingerprint(new byte[16]));
    assertNull(later.headGap());
    later.close();
    taps.streamClosed(4);
    // what a closed stream read is forgotten: a later stream of the block reads it again, and
    // a proof of it waits for that stream rather than reading the bytes twice
    taps.streamOpened(4);
    ReadTaps.Want again = taps.want(4, 0, 700, new Fingerprint(new byte[16]));
    assertNull(again.headGap(), "an earlier stream's extents sent the proof to read");
    taps.offer(4, 0, ByteBuffer.wrap(new byte[700]));
    assertTrue(again.complete());
    again.close();
    taps.streamClosed(4);
    // reads of a block no stream has open are not remembered
    taps.offer(5, 0, ByteBuffer.wrap(new byte[100]));
    taps.streamOpened(5);
    ReadTaps.Want none = taps.want(5, 0, 100, new Fingerprint(new byte[16]));
    assertNull(none.headGap());
    none.close();
    taps.streamClosed(5);
  }

  @Test
  void aWantAddedWhileAnotherOfTheBlockClosesIsStillFed() throws Exception {
    ReadTaps taps = new ReadTaps();
    for (int round = 0; round < 2000; round++) {
      ReadTaps.Want first = taps.want(6, 0, 10, new Fingerprint(new byte[16]));
      Thread closer = new Thread(first::close);
      closer.start();
      ReadTaps.Want second = taps.want(6, 0, 10, new Fingerprint(new byte[16]));
      closer.join();
      taps.offer(6, 0, ByteBuffer.wrap(new byte[10]));
      assertTrue(second.complete(), "round " + round + ": the want was dropped");
      second.close();
    }
  }

  @Test
  void awaitProgressWaitsItsWholeTime() throws Exception {
    ReadTaps taps = new ReadTaps();
    ReadTaps.Want w = taps.want(8, 0, 10, new Fingerprint(new byte[16]));
    for (int i = 0; i < 20; i++) {
      long t0 = System.nanoTime();
      assertFalse(w.awaitProgress(3));
      assertTrue(System.nanoTime() - t0 >= 3_000_000L, "returned early");
    }
    w.close();
  }

  @Test
  void aProofWaitsForStreamsOnlyWhileOneIsOpenOrMayYetCome() throws Exception {
    ReadTaps taps = new ReadTaps();
    ReadTaps.Want w = taps.want(3, 0, 1000, new Fingerprint(new byte[16]));
    long t0 = System.nanoTime();
    assertFalse(w.awaitProgress(50), "no stream yet: waits its time");
    assertTrue(System.nanoTime() - t0 >= 50_000_000L);
    taps.streamOpened(3);
    taps.offer(3, 0, ByteBuffer.wrap(new byte[100]));
    assertFalse(taps.doneStreaming(3), "a stream is open");
    taps.streamClosed(3); // the route's stream ended at byte 100
    assertTrue(taps.doneStreaming(3));
    t0 = System.nanoTime();
    assertFalse(w.awaitProgress(10_000), "nothing more will come");
    assertTrue(System.nanoTime() - t0 < 1_000_000_000L, "and it did not wait for it");
    taps.streamOpened(3);
    assertFalse(taps.doneStreaming(3), "another stream opened");
    taps.streamClosed(3);
    w.close();
  }

  /**
   * A block source whose reads feed the taps, as the DataNode's verified reads do; a stream
   * that has read {@code holdAfter} bytes waits there until a proof wants its block.
   */
  private static final class TappedBlocks extends MemoryBlocks {
    volatile long slowNanosPerKiB;
    volatile long holdAfter = Long.MAX_VALUE;

    TappedBlocks() {
      taps = new ReadTaps();
    }

    @Override
    public InputStream open(ExtendedBlock block, long offset) throws IOException {
      long[] pos = {offset};
      return new FilterInputStream(super.open(block, offset)) {
        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          if (pos[0] >= holdAfter) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!taps.wanted(block.getBlockId()) && System.nanoTime() < deadline) {
              java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            holdAfter = Long.MAX_VALUE; // held once
          }
          int n = super.read(b, off, Math.min(len, 4096));
          if (n > 0) {
            if (slowNanosPerKiB > 0) {
              java.util.concurrent.locks.LockSupport.parkNanos(slowNanosPerKiB * n / 1024);
            }
            pos[0] += n;
          }
          return n;
        }
      };
    }
  }

  @Test
  void aProofTakesWhatAStreamReadsAndReadsOnlyTheRest() throws Exception {
    TappedBlocks blocks = new TappedBlocks();
    byte[] unit = new byte[4 << 20];
    RND.nextBytes(unit);
    blocks.put(5, unit);
    blocks.slowNanosPerKiB = 100_000; // a stream at about 10 MB/s
    blocks.holdAfter = 256 << 10; // started before the proof: 256 KiB, then held until it comes
    ProofService service = new ProofService(blocks, blocks.taps, "127.0.0.1", 0, 8, 5_000);
    try {
      byte[] key = new byte[16];
      RND.nextBytes(key);
      ExtendedBlock b = new ExtendedBlock("bp", 5, 0, 1);
      // a route's stream: reads the whole unit, started before the proof is asked
      Thread stream = new Thread(() -> {
        try (InputStream in = blocks.open(b, 0)) {
          in.transferTo(java.io.OutputStream.nullOutputStream());
        } catch (IOException e) {
          throw new IllegalStateException(e);
        }
      });
      stream.start();
      byte[] fp = ask(service, new ProofRequest(b, "", unit.length, 0, unit.length, key));
      stream.join();
      assertArrayEquals(Fingerprint.of(key, unit, 0, unit.length), fp);
      // what the stream read before the proof came was read by the proof; the rest (all but
      // the stream's first 256 KiB and what it read while the proof was being set up) was
      // taken from the stream
      assertTrue(service.bytesTapped() >= unit.length / 2,
          "bytes taken from the stream: " + service.bytesTapped());
      // a block nobody streams: the proof reads it all itself
      long tapped = service.bytesTapped();
      fp = ask(service, new ProofRequest(b, "", unit.length, 1000, 2_000_000, key));
      assertArrayEquals(Fingerprint.of(key, unit, 1000, 2_000_000), fp);
      assertEquals(tapped, service.bytesTapped());
    } finally {
      service.close();
    }
  }

  private static byte[] ask(ProofService service, ProofRequest req) throws Exception {
    try (Socket s = new Socket("127.0.0.1", service.address().getPort())) {
      ControlFrames.write(new DataOutputStream(s.getOutputStream()), req.toJson());
      DataInputStream in = new DataInputStream(s.getInputStream());
      assertTrue(ProofAnswer.fromJson(ControlFrames.read(in)).ok());
      ProofAnswer a = ProofAnswer.fromJson(ControlFrames.read(in));
      assertTrue(a.ok(), a.toString());
      return a.fingerprint();
    }
  }
}
