package io.netec.hdfs.switchroute;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;

/**
 * The software switch's counters over HTTP, in the two forms Hadoop daemons use: {@code /prom}
 * (Prometheus text, {@code netec_switch_tasks_accepted 12}) and {@code /jmx} (Hadoop's JMX JSON
 * shape: {@code {"beans":[{"name":..., "TasksAccepted":12, ...}]}}). The counters are the
 * getters of {@link SoftwareSwitchMXBean}, so JMX and this page cannot disagree.
 */
final class SwitchMetricsPage implements Closeable {
  private final HttpServer server;
  private final SoftwareSwitchMXBean bean;
  private final String beanName;

  SwitchMetricsPage(SoftwareSwitchMXBean bean, String beanName, String host, int port)
      throws IOException {
    this.bean = bean;
    this.beanName = beanName;
    server = HttpServer.create(new InetSocketAddress(host, port), 16);
    server.createContext("/prom", x -> answer(x, "text/plain; version=0.0.4", prometheus()));
    server.createContext("/jmx", x -> answer(x, "application/json", json()));
    server.setExecutor(Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "netec-switch-metrics");
      t.setDaemon(true);
      return t;
    }));
    server.start();
  }

  InetSocketAddress address() {
    return server.getAddress();
  }

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

  private static void answer(HttpExchange x, String type, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    boolean get = "GET".equals(x.getRequestMethod());
    x.getResponseHeaders().set("Content-Type", type);
    x.sendResponseHeaders(get ? 200 : 405, get ? b.length : -1);
    try (OutputStream o = x.getResponseBody()) {
      if (get) {
        o.write(b);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
