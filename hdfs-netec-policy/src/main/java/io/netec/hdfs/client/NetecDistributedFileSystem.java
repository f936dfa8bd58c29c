package io.netec.hdfs.client;

import io.netec.hdfs.codec.NetecCoderFactories;
import io.netec.hdfs.NetecSettings;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.route.ReadCost;
import io.netec.hdfs.route.ReconstructionRouter;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSStripedInputStream;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.NetecStripedStreamAccess;
import org.apache.hadoop.hdfs.protocol.LocatedBlocks;
import org.apache.hadoop.io.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HDFS, with degraded reads of NETEC files rebuilt by the same router, routes and settings as
 * the DataNodes' ({@code netec.route.order}, default switch, inec, native): a NetEC switch
 * ({@code netec.switch.address}), INEC repair graphs over the DataNodes' participants, any
 * route found by ServiceLoader; "native" is Hadoop's own stream. Set
 * {@code fs.hdfs.impl=io.netec.hdfs.client.NetecDistributedFileSystem}. Everything else is
 * Hadoop's DistributedFileSystem unchanged, and so are reads of other files, of files still
 * being written, of encrypted files, and all reads when no route is usable. Not covered:
 * FileContext, WebHDFS/HttpFS and direct DFSClient users (they read through Hadoop's own
 * stream, decoding with our coder).
 */
public class NetecDistributedFileSystem extends DistributedFileSystem {
  private static final Logger LOG = LoggerFactory.getLogger(NetecDistributedFileSystem.class);
  private ReconstructionRouter router;
  /** Chooses Hadoop's stream or the routes per read; one per file system, its costs shared. */
  private ReadChooser chooser;
  /** DataNodes this file system's streams found dead a moment ago. */
  private final DeadNodes deadNodes = new DeadNodes(org.apache.hadoop.util.Time::monotonicNow);
  /**
   * Threads of the routes' tasks for this file system's reads (a reader waits for its task
   * only as long as its budget); idle ones end after a while.
   */
  private final ExecutorService routedReads = routedReadPool();
  /**
   * Hedges (Hadoop's stream reading beside a route past its budget) running at once, as
   * Hadoop bounds its own hedged reads by {@code dfs.client.hedged.read.threadpool.size}: a
   * read past its budget with none free waits on its route alone.
   */
  public static final int MAX_HEDGES = 16;
  private final java.util.concurrent.Semaphore hedges =
      new java.util.concurrent.Semaphore(MAX_HEDGES);
  private volatile boolean warnedEncrypted;
  /** Why the plugin's stream cannot run in this JVM (then Hadoop's serves every read). */
  private volatile String streamUnusable;

  /**
   * @throws IOException naming the netec.* key and value at fault, checked as a DataNode
   *     checks them
   */
  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    try {
      router = ReconstructionRouter.start(conf, null, null);
      NetecSettings s = router.context().settings();
      chooser = new ReadChooser(s.clientOptions().reads(), s.clientOptions().linkBytesPerMs(),
          new ReadCost());
    } catch (IllegalArgumentException e) {
      throw new IOException("NetEC client configuration: " + e.getMessage(), e);
    }
    super.initialize(uri, conf);
  }

  /**
   * Whether degraded reads may go through routes that carry block data in cleartext: not when
   * this client's configuration or the NameNode asks for encrypted data transfer, unless
   * netec.fabric.trusted is true (then Hadoop's stream serves every read, encrypted).
   */
  private boolean cleartextAllowed() throws IOException {
    NetecSettings s = router.context().settings();
    if (s.fabricTrusted()) {
      return true;
    }
    String why = s.cleartextRefusal();
    if (why == null && getServerDefaults(new Path("/")).getEncryptDataTransfer()) {
      why = "the NameNode says data transfer is encrypted";
    }
    if (why != null && !warnedEncrypted) {
      warnedEncrypted = true;
      LOG.info("NetEC degraded reads off, Hadoop's stream reads every file: {}", why);
    }
    return why == null;
  }

  private static ExecutorService routedReadPool() {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "netec-routed-read-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    return pool;
  }

  /**
   * Closes Hadoop's file system, and interrupts the routes' tasks still running (reads
   * abandoned to Hadoop's stream, which would else end at their next write or timeout).
   */
  @Override
  public void close() throws IOException {
    routedReads.shutdownNow(); // a route still running past its reader ends now
    super.close();
  }

  /** This file system's router: its route order and counters (RouteMetrics). */
  public ReconstructionRouter router() {
    return router;
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    FSDataInputStream hadoop = super.open(f, bufferSize);
    if (streamUnusable != null || !router.hasNetworkRoutes()
        || !(hadoop.getWrappedStream() instanceof DFSStripedInputStream)) {
      return hadoop;
    }
    NetecStripedInputStream ours = null;
    try {
      DFSStripedInputStream opened = (DFSStripedInputStream) hadoop.getWrappedStream();
      LocatedBlocks blocks = NetecStripedStreamAccess.locatedBlocksOf(opened);
      if (blocks == null || blocks.getErasureCodingPolicy() == null
          || !NetecCoderFactories.CODEC.equals(blocks.getErasureCodingPolicy().getCodecName())
          || blocks.isUnderConstruction() || !blocks.isLastBlockComplete()
          || blocks.getFileEncryptionInfo() != null || !cleartextAllowed()) {
        return hadoop;
      }
      ours = new NetecStripedInputStream(opened,
          new RoutedRead.Shared(router, chooser, routedReads, hedges), deadNodes);
      FSDataInputStream wrapped = getClient().createWrappedInputStream(ours);
      ours = null;
      IOUtils.closeStream(hadoop); // it has read nothing yet
      return wrapped;
    } catch (LinkageError e) {
      // our jar loaded apart from Hadoop's (a child class loader: not Hadoop's package at run
      // time), or a Hadoop whose striped stream differs from the one we were built with
      streamUnusable = e.toString();
      LOG.warn("NetEC degraded reads off, Hadoop's stream reads every file: {}", e.toString());
      return hadoop;
    } catch (InterruptedIOException e) {
      IOUtils.closeStream(hadoop);
      throw e;
    } catch (IOException | RuntimeException e) {
      // Hadoop's stream opened: a failure of ours (the server defaults' call, our stream)
      // costs this file the routes, never the open
      LOG.warn("NetEC degraded reads off for {}, Hadoop's stream reads it: {}", f,
          LogLimiter.oneLine(e.toString()));
      return hadoop;
    } finally {
      IOUtils.closeStream(ours);
    }
  }
}
