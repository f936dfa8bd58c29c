package io.netec.hdfs.switchroute;

import io.netec.hdfs.route.RouteDeclinedException;
import io.netec.hdfs.route.RouteUnavailableException;
import io.netec.hdfs.switchroute.wire.AttachRequest;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * The reader side of docs/protocol.md: sets a task up on a switch (flat, or as a tree of rack
 * switches' partial sums), then receives the rebuilt streams from its VIP ({@link
 * SwitchReceiver}) and hands each row's bytes, in order, to a sink. A refusal at setup is a
 * {@link RouteDeclinedException}: nothing was done; a switch that cannot be reached is a
 * {@link RouteUnavailableException}; survivors the switch names at fault are a {@link
 * SurvivorsFailed}.
 */
public final class SwitchClient {
  /** Receives one rebuilt stream, in order. */
  public interface Sink {
    void write(byte[] b, int off, int len) throws IOException;
  }

  /** Opens the rows' sinks; called only once the switch has accepted the task. */
  public interface SinkOpener {
    Sink[] open() throws IOException;
  }

  /** What a rebuild cost the reader. */
  public static final class Result {
    /**
     * Completes once the connection to the VIP is closed: after a TCP task's FIN, when the
     * switch closed it (or {@value SwitchReceiver#CLOSE_WAIT_MS} ms on); the task's control
     * connections are held until then.
     */
    io.netty.util.concurrent.Future<Void> closed;
    /** Bytes read from the switch, headers included: the reader's ingress. */
    public long bytesReceived;
    public long retransmitRequests;
    /** Datagram mode: packets dropped because they failed their checks. */
    public long droppedPackets;
    public int task;
  }

  private SwitchClient() {
  }

  /**
   * Rebuilds the rows of {@code setup}; row r's sink gets exactly {@code rowLength[r]} bytes
   * (the erased unit's length, at most the stream length). The sinks are opened after the
   * switch accepted, so a refusal leaves nothing done anywhere.
   */
  public static Result rebuild(InetSocketAddress control, SetupRequest setup, long[] rowLength,
      SinkOpener opener) throws IOException {
    // the control connection stays open until the task ends: were this reader to go away
    // before claiming its task, the switch frees the task at once (docs/protocol.md, "hold")
    Socket held = new Socket();
    Result r = null;
    try {
      SetupAnswer answer = setUp(held, control, setup.held());
      r = SwitchReceiver.receive(setup, answer, rowLength, opener);
      return r;
    } finally {
      closeWhenClosed(r, java.util.List.of(held));
    }
  }

  /**
   * Closes a task's control connections once its VIP connection is closed ({@link
   * Result#closed}: the switch's close after the FIN, not waited for), or at once when the
   * task did not end with a result.
   */
  private static void closeWhenClosed(Result r, java.util.List<Socket> held) {
    Runnable close = () -> {
      for (Socket s : held) {
        try {
          s.close(); // an unclaimed child's task freed at once
        } catch (IOException e) {
          // closing: nothing to tell
        }
      }
    };
    if (r == null || r.closed == null) {
      close.run();
    } else {
      r.closed.addListener(f -> close.run());
    }
  }

  /**
   * How long a child's setup may take (connect and answer): well under the switches' claim
   * timeout (5 s), which runs from each child's setup until the parent claims it, so that a
   * rack switch that drops packets costs its rack's aggregation, not the others' claims.
   */
  static final int CHILD_SETUP_MS = 2_000;

  /**
   * A setup the switch took the connection of but never answered (the connection failed, or
   * the answer did not come in time): declined, as a refusal is, but the switch is not there
   * for tasks (a rack switch is then left out of plans for a while: {@link #unreachable}).
   */
  private static final class Unanswered extends RouteDeclinedException {
    private static final long serialVersionUID = 1L;

    Unanswered(String reason) {
      super(reason);
    }
  }

  /**
   * A rack switch that took its child's setup but cannot attach it to a parent over
   * datagrams (a Tofino's control plane: its program does not serve the tree): the tree runs
   * flat, and the switch is left out of plans for a while, as an unreachable one is.
   */
  static final class CannotAttach extends RouteDeclinedException {
    private static final long serialVersionUID = 1L;

    CannotAttach(String reason) {
      super(reason);
    }
  }

  /** A rack switch refused one attach (its reason says why): the tree runs flat. */
  static final class AttachRefused extends RouteDeclinedException {
    private static final long serialVersionUID = 1L;

    AttachRefused(String reason) {
      super(reason);
    }
  }

  /**
   * Whether a setup failed because the switch is not there, rather than refused it (or, for a
   * datagram tree, cannot serve its part of it at all).
   */
  public static boolean unreachable(IOException setupFailure) {
    return setupFailure instanceof RouteUnavailableException
        || setupFailure instanceof Unanswered || setupFailure instanceof CannotAttach;
  }

  /** Whether a rack switch's part failed at its attach: the whole tree then runs flat. */
  public static boolean attachFailed(IOException why) {
    return why instanceof CannotAttach || why instanceof AttachRefused;
  }

  /** Hears a switch of a tree that did not take its part, and why. */
  public interface NotTaken {
    /** @param rack the child's rack, or null for the parent's switch */
    void accept(String rack, String control, IOException why);
  }

  /**
   * Rebuilds the one row of a task planned by rack: sets up every child on its rack's switch
   * at once (one that its switch refuses, or that cannot be reached within {@value
   * #CHILD_SETUP_MS} ms, leaves that rack's survivors to the parent), then the parent on the
   * reader's rack's switch, and receives from the parent. A parent its switch refuses or that
   * cannot be reached frees the children and runs the flat task on {@code flatSwitch} when
   * there is one (else fails as a flat task's setup does: declined, unavailable). {@code
   * notTaken} hears each switch that did not take its part, and why. Every control
   * connection is held until the task ends, so a reader that goes away takes its children
   * with it.
   */
  public static Result rebuild(SwitchRackPlan plan, InetSocketAddress flatSwitch,
      long[] rowLength, SinkOpener opener,
      NotTaken notTaken) throws IOException {
    SetupRequest parent;
    SetupAnswer answer;
    java.util.List<Socket> held = new java.util.ArrayList<>();
    java.util.List<SetupAnswer> answers = new java.util.ArrayList<>();
    // over datagrams, what was set up is torn down unless the tree finishes
    boolean[] tearDown = {false};
    SetupAnswer[] parentAnswer = {null};
    Result done = null;
    try {
      java.util.List<java.util.concurrent.CompletableFuture<SetupAnswer>> pending =
          new java.util.ArrayList<>();
      for (SwitchRackPlan.Child c : plan.children()) {
        Socket s = new Socket();
        held.add(s);
        pending.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try {
            return setUp(s, HostPort.parse(c.control), c.setup.held(), CHILD_SETUP_MS);
          } catch (IOException e) {
            notTaken.accept(c.rack, c.control, e);
            return null;
          }
        }, r -> {
          Thread t = new Thread(r, "netec-child-setup " + c.rack);
          t.setDaemon(true);
          t.start();
        }));
      }
      for (java.util.concurrent.CompletableFuture<SetupAnswer> f : pending) {
        answers.add(f.join()); // each within CHILD_SETUP_MS
      }
      tearDown[0] = plan.flat().datagram();
      try {
        parent = plan.parent(answers);
      } catch (ProtocolException e) {
        throw new RouteDeclinedException("cannot describe the parent task: " + e.getMessage());
      }
      Socket s = new Socket();
      held.add(s);
      try {
        answer = setUp(s, HostPort.parse(plan.parentControl()), parent.held());
      } catch (RouteDeclinedException e) { // refused, or unreachable (a subclass)
        if (flatSwitch == null || flatSwitch.equals(HostPort.parse(plan.parentControl()))) {
          throw e;
        }
        notTaken.accept(null, plan.parentControl(), e);
        answer = null;
      }
      java.util.List<SwitchReceiver.ChildHello> hellos = java.util.List.of();
      parentAnswer[0] = answer;
      if (answer != null && parent.datagram()) {
        try {
          hellos = attach(plan, answers, held, parent, answer, notTaken);
        } catch (RouteDeclinedException e) { // refused, or not answered in time
          if (flatSwitch == null) {
            throw e;
          }
          answer = null;
        }
      }
      if (answer != null) {
        done = SwitchReceiver.receive(parent, answer, rowLength, opener, hellos);
        tearDown[0] = false; // they ended with the parent's FIN
        return done;
      }
    } finally {
      // over datagrams every task of a tree that did not finish is torn down: an attached
      // child is claimed, so closing its connection does not free it, and a P4 switch's
      // control plane frees nothing on a close (datagrams carry no word of a parent gone)
      if (tearDown[0]) {
        for (int c = 0; c < answers.size(); c++) {
          if (answers.get(c) != null) {
            teardown(held.get(c), answers.get(c));
          }
        }
        if (parentAnswer[0] != null) {
          teardown(held.get(held.size() - 1), parentAnswer[0]);
        }
      }
      closeWhenClosed(done, held); // the children's tasks freed at once, if unclaimed
    }
    return rebuild(flatSwitch, plan.flat(), rowLength, opener); // nothing done yet anywhere
  }


  /**
   * Datagram mode (docs/protocol.md, "Partial sums over datagrams"): attaches each child that
   * was set up to the parent, on the child's held control connection, as the parent's sender
   * that names the child's VIP; returns each child's reader HELLO (its survivors' streams,
   * their first window no more than the parent's) for its VIP. Any refusal declines the tree:
   * nothing has streamed yet.
   */
  private static java.util.List<SwitchReceiver.ChildHello> attach(SwitchRackPlan plan,
      java.util.List<SetupAnswer> answers, java.util.List<Socket> held, SetupRequest parent,
      SetupAnswer parentAnswer, NotTaken notTaken)
      throws IOException {
    java.util.List<SwitchReceiver.ChildHello> hellos = new java.util.ArrayList<>();
    int parentWindow = parentAnswer.slots() / 2;
    for (int c = 0; c < answers.size(); c++) {
      SetupAnswer a = answers.get(c);
      if (a == null) {
        continue; // its survivors are the parent's own
      }
      SwitchRackPlan.Child child = plan.children().get(c);
      int sender = -1;
      for (SetupRequest.Survivor v : parent.survivors()) {
        SetupRequest.Child ch = v.child();
        if (ch != null && ch.task() == a.task() && ch.slotArray() == a.slotArray()
            && v.agent().equals(a.vip())) {
          sender = v.sender(); // two racks' children on one switch share its VIP
        }
      }
      if (sender < 0) {
        throw new IllegalStateException("the parent task lists no sender for child " + c);
      }
      AttachRequest req = new AttachRequest(a.task(), a.secret(), parentAnswer.vip(),
          parentAnswer.task(), parentAnswer.slotArray(), sender, parentAnswer.slots(),
          parentWindow);
      Socket s = held.get(c);
      try {
        attachOne(s, req, child);
      } catch (RouteDeclinedException e) {
        notTaken.accept(child.rack, child.control, e);
        throw e;
      }
      hellos.add(new SwitchReceiver.ChildHello(HostPort.parse(a.vip()),
          io.netec.hdfs.switchroute.wire.StreamRequest.readerHello(child.setup, a.task(),
              a.slotArray(), a.slots(), Math.min(a.slots() / 2, parentWindow), a.secret(),
              null)));
    }
    return hellos;
  }

  /** One attach on a child's held control connection; a refusal or no answer declines. */
  private static void attachOne(Socket s, AttachRequest req, SwitchRackPlan.Child child)
      throws IOException {
    try {
      com.fasterxml.jackson.databind.JsonNode o = io.netec.hdfs.switchroute.wire.JsonLimits
          .parse(exchange(s, req.toJson()), ControlFrames.MAX_FRAME);
      if (o == null || !o.path("ok").asBoolean(false)) {
        String reason = o == null ? "no answer" : o.path("reason").asText("no reason");
        String what = "rack switch " + child.control + " of " + child.rack
            + " refused to attach its partial sum: " + reason;
        throw reason.contains("not supported") ? new CannotAttach(what)
            : new AttachRefused(what);
      }
    } catch (ProtocolException e) {
      throw new RouteDeclinedException("bad answer to attach from rack switch "
          + child.control + ": " + e.getMessage());
    } catch (RouteDeclinedException e) {
      throw e;
    } catch (IOException e) {
      throw new Unanswered("rack switch " + child.control + " of " + child.rack
          + " did not answer its attach: " + e);
    }
  }

  /** Best effort: tears an attached child's task down (its switch frees it at once). */
  private static void teardown(Socket s, SetupAnswer a) {
    try {
      exchange(s, io.netec.hdfs.switchroute.wire.JsonLimits.mapper().writeValueAsBytes(
          io.netec.hdfs.switchroute.wire.JsonLimits.mapper().createObjectNode()
              .put("op", "teardown").put("task", a.task()).put("secret", a.secret())));
    } catch (IOException e) {
      // the switch's own timeout frees it
    }
  }

  /**
   * The switch failed the task for survivors it could not reach or never heard from: their
   * internal blocks (the route maps them to units and runs again from spares).
   */
  public static final class SurvivorsFailed extends IOException {
    private static final long serialVersionUID = 1L;
    private final java.util.List<String> blocks;

    SurvivorsFailed(java.util.List<String> blocks, String message) {
      super(message);
      this.blocks = java.util.List.copyOf(blocks);
    }

    /** The failed survivors' internal blocks, as the setup named them. */
    public java.util.List<String> blocks() {
      return blocks;
    }
  }

  private static SetupAnswer setUp(Socket s, InetSocketAddress control, SetupRequest setup)
      throws IOException {
    return setUp(s, control, setup, Integer.MAX_VALUE);
  }

  /**
   * ... connecting within min(5 s, {@code withinMs}), answered within min(the task's
   * timeout, {@code withinMs}).
   */
  private static SetupAnswer setUp(Socket s, InetSocketAddress control, SetupRequest setup,
      int withinMs) throws IOException {
    try {
      try {
        s.connect(control, Math.min(5_000, withinMs));
      } catch (IOException e) {
        throw new RouteUnavailableException("switch " + control + " unreachable: " + e);
      }
      s.setSoTimeout(Math.min(setup.timeoutMs(), withinMs));
      SetupAnswer a = SetupAnswer.fromJson(exchange(s, setup.toJson()));
      if (!a.ok()) {
        throw new RouteDeclinedException("switch refused the task: " + a.reason());
      }
      return a;
    } catch (ProtocolException e) {
      throw new IOException("bad answer from switch " + control + ": " + e.getMessage());
    } catch (IOException e) {
      if (e instanceof RouteDeclinedException) {
        throw e;
      }
      throw new Unanswered("switch " + control + " unreachable: " + e);
    }
  }

  /** One control request on a switch's connection and its answer (a frame each way). */
  static byte[] exchange(Socket s, byte[] request) throws IOException {
    ControlFrames.write(new DataOutputStream(new BufferedOutputStream(s.getOutputStream())),
        request);
    return ControlFrames.read(new DataInputStream(new BufferedInputStream(s.getInputStream())));
  }
}
