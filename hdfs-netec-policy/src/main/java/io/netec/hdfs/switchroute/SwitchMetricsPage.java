package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.io.Closeable;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The software switch's counters over HTTP, in the two forms Hadoop daemons use: {@code /prom}
 * (Prometheus text, {@code netec_switch_tasks_accepted 12}) and {@code /jmx} (Hadoop's JMX JSON
 * shape: {@code {"beans":[{"name":..., "TasksAccepted":12, ...}]}}). The counters are the
 * getters of {@link SoftwareSwitchMXBean}, so JMX and this page cannot disagree.
 *
 * <p>Served by Netty's HTTP codec on the switch's own event loops, so a client that sends half
 * a request holds only its own connection (the JDK's server with one worker let one such
 * client stall the page for everyone): a request must arrive whole within
 * {@value #REQUEST_DEADLINE_MS} ms, headers within 8 KiB, no body; at most
 * {@value #MAX_CONNECTIONS_PER_PEER} connections from one address and
 * {@value #MAX_CONNECTIONS} in all; one answer a connection, then it closes.
 */
final class SwitchMetricsPage implements Closeable {
  static final int REQUEST_DEADLINE_MS = 5_000;
  static final int MAX_CONNECTIONS = 32;
  static final int MAX_CONNECTIONS_PER_PEER = 4;
  private final SoftwareSwitchMXBean bean;
  private final String beanName;
  private final Channel server;
  private final ConnectionCaps caps =
      new ConnectionCaps(MAX_CONNECTIONS_PER_PEER, MAX_CONNECTIONS);

  SwitchMetricsPage(SoftwareSwitchMXBean bean, String beanName, EventLoopGroup group,
      String host, int port) throws IOException {
    this.bean = bean;
    this.beanName = beanName;
    try {
      server = new ServerBootstrap().group(group).channel(Transport.serverChannel())
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              if (caps.admit(ch) != null) {
                ch.close();
                return;
              }
              // a deadline, not an idle timeout: a request sent a byte at a time ends too
              io.netty.util.concurrent.ScheduledFuture<?> deadline =
                  ch.eventLoop().schedule(() -> ch.close(), REQUEST_DEADLINE_MS,
                      TimeUnit.MILLISECONDS);
              ch.closeFuture().addListener(f -> deadline.cancel(false));
              ch.pipeline().addLast(new HttpServerCodec(4096, 8192, 8192), new HttpObjectAggregator(0),
                  new PageHandler());
            }
          }).bind(host, port).sync().channel();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while binding " + host + ":" + port, e);
    } catch (RuntimeException e) {
      throw new IOException(host + ":" + port + ": " + e.getMessage(), e);
    }
  }

  InetSocketAddress address() {
    return (InetSocketAddress) server.localAddress();
  }

  /** One request, one answer: GET /prom or /jmx; anything else 404 or 405. */
  private final class PageHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
      String path = req.uri().split("\\?", 2)[0];
      FullHttpResponse rsp;
      if (!req.decoderResult().isSuccess()) {
        rsp = answer(HttpResponseStatus.BAD_REQUEST, "text/plain", "bad request\n");
      } else if (!path.equals("/prom") && !path.equals("/jmx")) {
        rsp = answer(HttpResponseStatus.NOT_FOUND, "text/plain", "/prom or /jmx\n");
      } else if (!req.method().equals(HttpMethod.GET)) {
        rsp = answer(HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain", "GET only\n");
      } else {
        String[] page = rendered();
        rsp = path.equals("/prom")
            ? answer(HttpResponseStatus.OK, "text/plain; version=0.0.4", page[0])
            : answer(HttpResponseStatus.OK, "application/json", page[1]);
      }
      ctx.writeAndFlush(rsp).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close(); // a request too large, a deadline missed, a reset: that connection only
    }
  }

  private static FullHttpResponse answer(HttpResponseStatus status, String type, String body) {
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
        Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)));
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, type)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes())
        .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    return r;
  }

  /**
   * Both forms of the page, rendered at most once every {@value #RENDER_EVERY_MS} ms: the
   * page runs on the switch's event loops, so requests back to back must not each read every
   * counter (some take the switch's lock).
   */
  private String[] rendered() {
    long now = System.nanoTime();
    String[] page = cache;
    if (page == null || now - cachedAt > TimeUnit.MILLISECONDS.toNanos(RENDER_EVERY_MS)) {
      page = new String[] {prometheus(), json()};
      cache = page;
      cachedAt = now;
    }
    return page;
  }

  static final int RENDER_EVERY_MS = 1_000;
  private volatile String[] cache;
  private volatile long cachedAt;

  /** (name without "get", value) for every counter of the MXBean, in name order. */
  private List<Object[]> counters() {
    List<Object[]> out = new ArrayList<>();
    Method[] methods = SoftwareSwitchMXBean.class.getMethods();
    java.util.Arrays.sort(methods, Comparator.comparing(Method::getName));
    for (Method m : methods) {
      if (m.getName().startsWith("get") && m.getParameterCount() == 0) {
        try {
          out.add(new Object[] {m.getName().substring(3), m.invoke(bean)});
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException(m.getName(), e);
        }
      }
    }
    return out;
  }

  private String prometheus() {
    StringBuilder sb = new StringBuilder();
    for (Object[] c : counters()) {
      String name = "netec_switch_" + snake((String) c[0]);
      sb.append("# TYPE ").append(name).append(' ')
          .append(((String) c[0]).endsWith("InUse") ? "gauge" : "counter").append('\n')
          .append(name).append(' ').append(c[1]).append('\n');
    }
    return sb.toString();
  }

  private String json() {
    StringBuilder sb = new StringBuilder("{\"beans\":[{\"name\":\"").append(beanName).append('"');
    for (Object[] c : counters()) {
      sb.append(",\"").append(c[0]).append("\":").append(c[1]);
    }
    return sb.append("}]}\n").toString();
  }

  /** TasksAccepted -> tasks_accepted. */
  static String snake(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
  }

  @Override
  public void close() {
    server.close().awaitUninterruptibly();
  }
}
