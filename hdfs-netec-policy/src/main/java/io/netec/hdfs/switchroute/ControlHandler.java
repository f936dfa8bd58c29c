package io.netec.hdfs.switchroute;

import com.fasterxml.jackson.databind.JsonNode;
import io.netec.hdfs.route.LogLimiter;
import io.netec.hdfs.switchroute.wire.AttachRequest;
import io.netec.hdfs.switchroute.wire.ControlFrames;
import io.netec.hdfs.switchroute.wire.JsonLimits;
import io.netec.hdfs.switchroute.wire.ProtocolException;
import io.netec.hdfs.switchroute.wire.SetupAnswer;
import io.netec.hdfs.switchroute.wire.SetupRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Control requests: setup, attach (a datagram child to its parent) and teardown; anything
 * malformed gets ok=false and a reason. The tasks a requester set up saying it holds this
 * connection until their claim ({@code hold}) are freed at once when it closes unclaimed: a
 * requester that went away takes its tasks with it, not after the claim timeout.
 */
final class ControlHandler extends SimpleChannelInboundHandler<ByteBuf> {
  private final SoftwareSwitch sw;
  private final List<SwitchSession> held = new ArrayList<>();
  /** The switch closed the connection for being idle: its requester did not go away. */
  private boolean idleClosed;

  ControlHandler(SoftwareSwitch sw) {
    this.sw = sw;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    // a held connection the switch closed as idle leaves its tasks to the claim timeout
    for (SwitchSession l : idleClosed ? List.<SwitchSession>of() : held) {
      sw.releaseUnclaimed(l, "its requester closed its control connection before a reader "
          + "claimed it");
    }
    held.clear();
    ctx.fireChannelInactive();
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
    byte[] json = ByteBufUtil.getBytes(frame);
    SetupAnswer answer;
    byte[] out = null;
    try {
      // measured (size, depth) on the raw bytes before any tree is built
      JsonNode o = JsonLimits.parse(json, ControlFrames.MAX_FRAME);
      String op = o == null ? "" : o.path("op").asText("");
      if (op.equals("setup")) {
        SetupRequest req = SetupRequest.fromJson(json);
        answer = sw.allocate(req, ConnectionCaps.peerOf(
            ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress()));
        SwitchSession l = answer.ok() && req.hold() ? sw.table.byId(answer.task()) : null;
        if (l != null && l.secret.equals(answer.secret())) { // this setup's task, no other
          held.removeIf(h -> h.done());
          held.add(l);
        }
      } else if (op.equals("teardown")) {
        int id = o.path("task").canConvertToInt() ? o.path("task").asInt(-1) : -1;
        SwitchSession live = sw.table.byId(id);
        // without the task's secret a teardown is answered as if there were no task
        if (live == null || !live.secretMatches(o.path("secret").asText(""))) {
          answer = SetupAnswer.refuse("no task " + id);
        } else {
          live.fail("torn down by the reader");
          answer = SetupAnswer.accept(id, live.task.slotArray(), live.task.slots(), sw.vip(),
              live.secret);
        }
      } else if (op.equals("attach")) {
        answer = null;
        out = sw.children.attach(AttachRequest.fromJson(o));
      } else {
        answer = SetupAnswer.refuse("op: expected \"setup\", \"attach\" or \"teardown\"");
      }
    } catch (ProtocolException e) {
      answer = sw.refuse(e.getMessage());
    }
    ctx.writeAndFlush(Unpooled.wrappedBuffer(out != null ? out : answer.toJson()));
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof io.netty.handler.timeout.ReadTimeoutException) {
      idleClosed = true; // a held connection of a long task: not worth a line
      SoftwareSwitch.LOG.debug("Control connection from {} closed: idle",
          ctx.channel().remoteAddress());
    } else {
      sw.logs.info("control-error", "Control connection from {} closed: {}",
          ctx.channel().remoteAddress(), LogLimiter.oneLine(cause));
    }
    ctx.close();
  }
}

