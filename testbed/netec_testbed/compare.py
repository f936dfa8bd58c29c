"""bin/netec-bench compare: one benchmark at two revisions in one run, its tables side by side.

  bin/netec-bench compare --before REV [--out FILE] BENCH [ARGS...]

Checks REV out into a git worktree of its own (outside the repository, removed at the end,
also on failure), runs `bin/netec-bench BENCH ARGS` there (the code as it was: built from that
tree), then the same here (the working tree), each writing its markdown to a file of the run's
own (`--out`: BENCH must be one that writes markdown, as reads and racks do), and prints the
second document with every table cell that differs shown as "before → after": what a change
that should not move a figure (a refactor) did to each. A benchmark's own ratios are measured
within its run, so they compare across the two runs; absolute times drift with the machine.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .hadoop import REPO


def _cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(text):
    """(start, end) line ranges of the markdown tables in text, in order."""
    lines, spans, i = text.split("\n"), [], 0
    while i < len(lines):
        if lines[i].startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def merge(before, after):
    """The after document, each of its tables' cells that differ from the same table's (the
    same place in the document, header and number of rows) in the before document shown as
    "before → after", row by row."""
    b_lines, a_lines = before.split("\n"), after.split("\n")
    b_tables = _tables(before)
    out = list(a_lines)
    for n, (s, e) in enumerate(_tables(after)):
        if n >= len(b_tables):
            break
        bs, be = b_tables[n]
        if _cells(b_lines[bs]) != _cells(a_lines[s]):
            continue  # not the same table: left as it is
        if be - bs != e - s:
            continue  # other rows (another run's shape): no cell has its twin
        for i in range(s + 2, e):
            row, old = _cells(a_lines[i]), _cells(b_lines[bs + i - s])
            if len(old) != len(row):
                continue
            merged = [c if c == o else "%s → %s" % (o, c) for c, o in zip(row, old)]
            out[i] = "| " + " | ".join(merged) + " |"
    return "\n".join(out)


def _run(tree, bench, args, out):
    cmd = [os.path.join(tree, "bin", "netec-bench"), bench] + args + ["--out", out]
    print("[%s] %s (in %s)" % (time.strftime("%H:%M:%S"), " ".join(cmd[1:]), tree),
          file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=tree, check=True)
    with open(out) as f:
        return f.read()


def main(argv=None):
    p = argparse.ArgumentParser(prog="netec-bench compare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, help="the revision to compare against")
    p.add_argument("--out", help="where to write the merged markdown (else stdout only)")
    p.add_argument("bench", help="a benchmark that writes markdown with --out (reads, racks)")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if "--out" in a.args:
        p.error("the benchmark's own --out is this command's: give --out before BENCH")
    rev = subprocess.run(["git", "rev-parse", "--verify", a.before + "^{commit}"], cwd=REPO,
                         capture_output=True, text=True)
    if rev.returncode != 0:
        p.error("--before: %s is not a revision of %s" % (a.before, REPO))
    here = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    work = tempfile.mkdtemp(prefix="netec-compare-")
    tree = os.path.join(work, "before")
    started = time.time()
    try:
        subprocess.run(["git", "worktree", "add", "--detach", tree, rev.stdout.strip()],
                       cwd=REPO, check=True, capture_output=True)
        before = _run(tree, a.bench, a.args, os.path.join(work, "before.md"))
        after = _run(REPO, a.bench, a.args, os.path.join(work, "after.md"))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=REPO,
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    head = ("# Before and after: `bin/netec-bench %s %s`\n\nPrinted by `bin/netec-bench compare "
            "--before %s %s %s` (%d s): the benchmark run at %s (before), then at %s%s "
            "(after), one after the other on this machine; each cell that differs reads "
            "\"before → after\". The document below is the second run's.\n\n" % (
                a.bench, " ".join(a.args), a.before, a.bench, " ".join(a.args),
                time.time() - started, rev.stdout.strip()[:7], here,
                " with uncommitted changes" if dirty else ""))
    text = head + merge(before, after)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
