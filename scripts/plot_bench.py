#!/usr/bin/env python3
"""Plots a benchmark's markdown table (as bin/netec-bench prints it) to a PNG.

  python3 scripts/plot_bench.py inec OUT.png < table.md        rate against unit size
  python3 scripts/plot_bench.py switch-e2e OUT.png < table.md  rate against k

Reads the first markdown table on stdin; says why and writes nothing when matplotlib is
missing (pip install matplotlib), so a benchmark never fails for want of a plot.
"""
import sys


def table(lines):
    """Rows of the first markdown table, as dicts keyed by its header cells."""
    head, rows = None, []
    for line in lines:
        line = line.strip()
        if not line.startswith("|"):
            if head and rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if head is None:
            head = cells
        elif not set("".join(cells)) <= set("-: "):
            rows.append(dict(zip(head, cells)))
    return rows


def number(cell):
    return float(cell.split()[0].rstrip("x").replace(",", ""))


def plot_inec(rows, plt):
    """MB/s against unit size, one colour per scheme: the engine solid, the baseline dashed."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        rs = [r for r in rows if r["scheme"] == scheme]
        kib = [number(r["unit"]) for r in rs]
        line, = ax.plot(kib, [number(r["INEC MB/s"]) for r in rs], marker="o",
                        label=scheme + ", INEC engine")
        ax.plot(kib, [number(r["baseline MB/s"]) for r in rs], marker="x", linestyle="--",
                color=line.get_color(), label=scheme + ", application threads")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("unit size (KiB), chunks of at most 64 KiB")
    ax.set_ylabel("rebuilt MB/s")
    ax.set_title("INEC decode, RS(6,3), TCP loopback, 2 cores")
    ax.legend(fontsize=7)
    return fig


def plot_switch(rows, plt):
    """MB/s against k: the switch path and decoding at the reader, each switch point labelled
    with its ratio to the reader's decode."""
    fig, ax = plt.subplots(figsize=(6, 4))
    ks = [int(number(r["k"])) for r in rows]
    for col, label in (("switch MB/s", "software switch"),
                       ("proven MB/s", "software switch, every byte proven"),
                       ("host decode MB/s", "reader decodes k streams")):
        if col in rows[0]:
            ax.plot(ks, [number(r[col]) for r in rows], marker="o", label=label)
    for k, r in zip(ks, rows):
        if "switch/host" in r:
            ax.annotate(r["switch/host"], (k, number(r["switch MB/s"])),
                        textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    ax.set_xticks(ks)
    ax.set_xlabel("k (survivor streams)")
    ax.set_ylabel("rebuilt MB/s")
    ax.set_title("End to end over TCP loopback, 2 cores")
    ax.legend(fontsize=8)
    return fig


def main(argv):
    if len(argv) != 3 or argv[1] not in ("inec", "switch-e2e"):
        sys.stderr.write(__doc__)
        return 2
    rows = table(sys.stdin)
    if not rows:
        sys.stderr.write("plot_bench: no markdown table on stdin\n")
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plot_bench: matplotlib missing, no plot (pip install matplotlib)\n")
        return 0
    fig = (plot_inec if argv[1] == "inec" else plot_switch)(rows, plt)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=90)
    sys.stderr.write("plot_bench: wrote %s\n" % argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
