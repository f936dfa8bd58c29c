"""Draws docs/architecture.png: NetEC-HDFS's layers and the jobs in each (README, Layout).

    python3 docs/architecture.py          # writes docs/architecture.png beside this file

The picture is this file's LAYERS table: edit the table, run the script, commit both.
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

# (row, column, width in columns, title, lines, colour): rows from the top, 12 columns a row.
LAYERS = [
    (0, 0, 6, "client (io.netec.hdfs.client)",
     ["NetecDistributedFileSystem: Hadoop's client, HdfsDataInputStream",
      "NetecStripedInputStream: Hadoop's striped stream; the choice per read",
      "ReadPlan: a read cut into cells, bytes per way  |  ReadChooser: cost",
      "RoutedRead: lost cells through the router, hedged by Hadoop's stream"],
     "#dbe9f6"),
    (0, 6, 6, "DataNode (io.netec.hdfs.datanode)",
     ["NetecDataNodePlugin: Hadoop's EC worker's reconstruction pool",
      "DataNodeBlockSource: blocks, checksums, tokens, throttles",
      "HadoopEcInternals: the worker's private parts (checked at start)",
      "Hadoop's reconstruction: the native route, and the floor"],
     "#dbe9f6"),
    (1, 0, 12, "route seam (io.netec.hdfs.route, proof): one router for both sides",
     ["ReconstructionRouter: builds the routes of netec.route.order (ServiceLoader), answers callers",
      "RepairTask: one repair, routes in order, every attempt proven row by row (ProofVerifier)  |  "
      "CostOrder: routes by measured cost (ReadCost)  |  RouteBackoff  |  RouteMetrics (JMX)",
      "NetecSettings: every netec.* key parsed once -> SwitchOptions, AgentOptions, InecOptions, "
      "ClientOptions"],
     "#e8f3e0"),
    (2, 0, 4, "switch route (switchroute)",
     ["SwitchRoute, SwitchClient: set up the task",
      "  SwitchReceiver (VIP) | ReaderInbox",
      "  ReceiveWindow (order, window, ACKs)",
      "SoftwareSwitch: ports, MXBean",
      "  TaskTable | SwitchTask (EBSN) | ReturnCookies",
      "  SwitchSession + one Netty handler a port",
      "SurvivorAgent: admits streams",
      "  SendWindow | UnitReader | Agent{Tcp,Datagram}"],
     "#fdebd3"),
    (2, 4, 4, "INEC route (inecroute)",
     ["InecRoute, InecRepair: plan a graph, root",
      "  RepairReports: the vertices' reports",
      "RepairGraph: RS star, PPR tree, ECPipe chain",
      "InecParticipant: join server (Netty)",
      "VertexRunner: one vertex's segments",
      "InecEngine (JNI) -> native/ libnetec:",
      "  op | conn | handshake | loop | bufcache",
      "  ec-send, recv-ec-send, recv-ec; TCP or verbs"],
     "#fdebd3"),
    (2, 8, 4, "native route",
     ["NativeRoute: Hadoop's own decode",
      "whenever a route is off, declines,",
      "fails, or cannot prove its rows",
      "",
      "the switch route's other switch: a P4",
      "program on a Tofino or BMv2 (below)"],
     "#fdebd3"),
    (3, 0, 12, "P4 data plane (switch-p4/p4src): the switch route's protocol in a switch pipeline",
     ["v1model (BMv2): netec.p4 (TCP proxy, multiply), netec_xor.p4 (datagrams, XOR): "
      "main programs wiring one control per function, each applied once a pass",
      "  common/ AckSeq | SlotTracker | StripeCount | EbsnCounters | ReaderAddress | Forward",
      "  tcp/ NetecClassify | MultiplySums | ReaderProof | SynAcks | IsnDeltas",
      "  xor/ XorClassify | XorAdmit | XorSums",
      "include/netec_logic.p4 (both architectures): AdmitData | ReaderAckCheck | EbsnWindow;  "
      "tna/ (Tofino 1): the same decisions, RegisterActions pinned to its 12 stages"],
     "#f3e3f0"),
    (4, 0, 12, "codec (io.netec.hdfs.codec): Hadoop's RS over GF(2^8), any route decodes any data",
     ["GaloisField, RsMatrix (ISA-L's Cauchy matrix)  |  MatrixCoder: Java or ISA-L (JNI)  |  "
      "MatrixAccumulator  |  Fingerprint (the proofs' checksums)  |  raw-coder adapters for Hadoop"],
     "#eeeeee"),
]

ROW_HEIGHT = [1.5, 1.2, 2.4, 1.7, 0.8]
GAP = 0.25


def draw(out):
    fig, ax = plt.subplots(figsize=(14, 10.3))
    ax.set_xlim(0, 12)
    total = sum(ROW_HEIGHT) + GAP * (len(ROW_HEIGHT) + 1)
    ax.set_ylim(0, total)
    ax.axis("off")
    tops = []
    y = total - GAP
    for h in ROW_HEIGHT:
        tops.append(y)
        y -= h + GAP
    for row, col, width, title, lines, colour in LAYERS:
        top, h = tops[row], ROW_HEIGHT[row]
        ax.add_patch(FancyBboxPatch((col + 0.06, top - h), width - 0.12, h,
                                    boxstyle="round,pad=0.02,rounding_size=0.08",
                                    facecolor=colour, edgecolor="#555555", linewidth=1))
        ax.text(col + 0.2, top - 0.2, title, fontsize=10.5, fontweight="bold", va="top")
        for i, line in enumerate(lines):
            ax.text(col + 0.25, top - 0.5 - i * 0.22, line, fontsize=8.3, va="top",
                    family="monospace" if line.startswith("  ") else None)
    ax.set_title("NetEC-HDFS by job: each box a package or route, each line a job in its own "
                 "class", fontsize=12)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    draw(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "architecture.png"))
