package io.netec.hdfs.route;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.LongAdder;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.Interns;

/**
 * Counters of the router, in two views of the same numbers:
 * <ul>
 * <li>a live JMX DynamicMBean (routes are named by configuration). Attributes: Tasks,
 * PassedThrough, InFlight (a gauge), per route NAME: NAME.Served, NAME.Declined, NAME.Failed,
 * NAME.Unavailable (its service unreachable), NAME.Skipped (passed over during the back-off),
 * NAME.Bytes (delivered and kept), NAME.BytesIn (received by this node to serve), NAME.Millis,
 * NAME.VerifyFailed (attempts whose output did not match the survivors' fingerprints: nothing
 * of it kept), NAME.SurvivorFaults (attempts that failed for survivors, run again with spares
 * or passed on, the route not blamed); and RecentTasks, the last {@value #RECENT} outcomes as
 * tab-separated
 * lines: block group, erased indices, route (or "none"), bytes, ms, start of the task (epoch
 * ms), what the routes before it said;</li>
 * <li>a Hadoop metrics2 source (record {@value #RECORD}): the counters go wherever the daemon's
 * metrics go, e.g. the {@code /prom} page ({@code netec_router_switch_served}) and metrics2
 * sinks, refreshed at the metrics system's period.</li>
 * </ul>
 */
public final class RouteMetrics implements DynamicMBean, MetricsSource {
  /** The metrics2 record name. */
  public static final String RECORD = "NetecRouter";
  static final String[] PER_ROUTE = {"Served", "Declined", "Failed", "Unavailable", "Skipped",
      "Bytes", "BytesIn", "Millis", "VerifyFailed", "SurvivorFaults"};
  static final int RECENT = 100;

  private final LongAdder tasks = new LongAdder();
  private final LongAdder inFlight = new LongAdder();
  private final LongAdder passedThrough = new LongAdder();
  private final LongAdder orderedByCost = new LongAdder();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private final Map<String, ReadCost> costs = new ConcurrentHashMap<>();
  private final ConcurrentSkipListSet<String> routes = new ConcurrentSkipListSet<>();
  private final ConcurrentLinkedDeque<String> recent = new ConcurrentLinkedDeque<>();

  public void registerRoute(String route) {
    routes.add(route);
  }

  void taskReceived() {
    tasks.increment();
    inFlight.increment();
  }

  void taskEnded() {
    inFlight.decrement();
  }

  /** Tasks being worked on now. */
  public long inFlight() {
    return inFlight.sum();
  }

  /** A task of a non-NETEC policy that went straight to Hadoop. */
  public void passedThrough() {
    passedThrough.increment();
  }

  void served(String route, long bytes, long bytesIn, long millis) {
    add(route, "Served", 1);
    add(route, "Bytes", bytes);
    if (bytesIn > 0) {
      add(route, "BytesIn", bytesIn);
    }
    add(route, "Millis", millis);
  }

  void outcome(RepairRequest req, String route, long bytes, long millis,
      long startEpochMillis, String others) {
    recent.addLast(req.blockGroup().getLocalBlock() + "\t"
        + Arrays.toString(req.erased()) + "\t" + (route == null ? "none" : route) + "\t"
        + bytes + "\t" + millis + "\t" + startEpochMillis + "\t"
        + others.replaceAll("[\\x00-\\x1f\\x7f]", " "));
    while (recent.size() > RECENT) {
      recent.pollFirst();
    }
  }

  /** The last task outcomes, oldest first (see the class comment for the format). */
  public String[] recentTasks() {
    return recent.toArray(new String[0]);
  }

  void declined(String route) {
    add(route, "Declined", 1);
  }

  void failed(String route) {
    add(route, "Failed", 1);
  }

  /** An attempt's output did not match the survivors' fingerprints. */
  void verifyFailed(String route) {
    add(route, "VerifyFailed", 1);
  }

  /** An attempt failed for survivors (unreadable, stalled, unable to prove their part). */
  void survivorFault(String route) {
    add(route, "SurvivorFaults", 1);
  }

  /** The route could not reach its service (it is then skipped for the back-off). */
  void unavailable(String route) {
    add(route, "Unavailable", 1);
  }

  /** A repair passed the route over because it was unreachable a moment ago. */
  void skipped(String route) {
    add(route, "Skipped", 1);
  }

  private void add(String route, String what, long delta) {
    routes.add(route);
    counters.computeIfAbsent(route + "." + what, n -> new LongAdder()).add(delta);
  }

  public long tasks() {
    return tasks.sum();
  }

  /** A task that tried its routes in an order other than netec.route.order's, by cost. */
  void orderedByCost() {
    orderedByCost.increment();
  }

  /** Tasks that tried their routes in an order other than netec.route.order's, by cost. */
  public long orderedByCostCount() {
    return orderedByCost.sum();
  }

  public long passedThroughCount() {
    return passedThrough.sum();
  }

  /** What {@code route}'s served tasks cost lately (bytes rebuilt against milliseconds). */
  public ReadCost cost(String route) {
    return costs.computeIfAbsent(route, r -> new ReadCost());
  }

  /** e.g. get("native", "Served"). */
  public long get(String route, String what) {
    LongAdder a = counters.get(route + "." + what);
    return a == null ? 0 : a.sum();
  }

  @Override
  public Object getAttribute(String attribute) throws AttributeNotFoundException {
    if (attribute.equals("Tasks")) {
      return tasks();
    }
    if (attribute.equals("PassedThrough")) {
      return passedThroughCount();
    }
    if (attribute.equals("OrderedByCost")) {
      return orderedByCostCount();
    }
    if (attribute.equals("InFlight")) {
      return inFlight();
    }
    if (attribute.equals("RecentTasks")) {
      return recentTasks();
    }
    int dot = attribute.lastIndexOf('.');
    if (dot > 0 && List.of(PER_ROUTE).contains(attribute.substring(dot + 1))) {
      return get(attribute.substring(0, dot), attribute.substring(dot + 1));
    }
    throw new AttributeNotFoundException(attribute);
  }

  @Override
  public AttributeList getAttributes(String[] attributes) {
    AttributeList list = new AttributeList();
    for (String a : attributes) {
      try {
        list.add(new Attribute(a, getAttribute(a)));
      } catch (AttributeNotFoundException e) {
        // JMX semantics: unknown attributes are left out
      }
    }
    return list;
  }

  @Override
  public void setAttribute(Attribute attribute) {
    throw new UnsupportedOperationException("read-only");
  }

  @Override
  public AttributeList setAttributes(AttributeList attributes) {
    return new AttributeList();
  }

  @Override
  public Object invoke(String actionName, Object[] params, String[] signature) {
    throw new UnsupportedOperationException("no operations");
  }

  @Override
  public MBeanInfo getMBeanInfo() {
    List<MBeanAttributeInfo> attrs = new ArrayList<>();
    attrs.add(longAttr("Tasks", "NETEC repairs received"));
    attrs.add(longAttr("PassedThrough", "tasks of other policies left to Hadoop"));
    attrs.add(longAttr("OrderedByCost", "tasks whose routes were tried cheapest first, in an "
        + "order other than netec.route.order's"));
    attrs.add(new MBeanAttributeInfo("InFlight", "long", "tasks being worked on now (a gauge)",
        true, false, false));
    attrs.add(new MBeanAttributeInfo("RecentTasks", String[].class.getName(),
        "last task outcomes: group, erased, route, bytes, ms, start (epoch ms), others", true, false, false));
    for (String r : routes) {
      for (String w : PER_ROUTE) {
        attrs.add(longAttr(r + "." + w, w + " of route " + r));
      }
    }
    return new MBeanInfo(getClass().getName(), "NetEC reconstruction router",
        attrs.toArray(new MBeanAttributeInfo[0]), null, null, null);
  }

  /** metrics2: every counter of the JMX view, per-route ones named e.g. SwitchServed. */
  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    MetricsRecordBuilder rb = collector.addRecord(RECORD).setContext("dfs")
        .addCounter(Interns.info("Tasks", "NETEC repairs received"), tasks())
        .addCounter(Interns.info("PassedThrough", "tasks of other policies left to Hadoop"),
            passedThroughCount())
        .addCounter(Interns.info("OrderedByCost", "tasks whose routes were tried cheapest "
            + "first, in an order other than netec.route.order's"), orderedByCostCount())
        .addGauge(Interns.info("InFlight", "tasks being worked on now"), inFlight());
    for (String r : routes) {
      String prefix = Character.toUpperCase(r.charAt(0)) + r.substring(1);
      for (String w : PER_ROUTE) {
        rb.addCounter(Interns.info(prefix + w, w + " of route " + r), get(r, w));
      }
    }
  }

  private static MBeanAttributeInfo longAttr(String name, String desc) {
    return new MBeanAttributeInfo(name, "long", desc, true, false, false);
  }
}
