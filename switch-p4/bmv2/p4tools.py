"""Where the P4 tools are, and the two programs compiled with them.

The tools are found through one variable, P4TOOLS (an install prefix with bin/ and share/), or
else on PATH. None of them is part of this project: README.md ("P4 toolchain") says how to get
them. `missing(...)` names what is absent, so a caller can print one SKIP line.

    python3 switch-p4/bmv2/p4tools.py compile OUTDIR    compiles both programs, prints times
    python3 switch-p4/bmv2/p4tools.py versions          prints each tool's version line
    python3 switch-p4/bmv2/p4tools.py has TOOL...       exits 0 if every TOOL is found
"""

import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
P4SRC = os.path.join(HERE, "..", "p4src")
V1MODEL = os.path.join(P4SRC, "v1model", "netec.p4")
TNA = os.path.join(P4SRC, "tna", "netec.p4")


def find(name):
    """The path of tool NAME: $P4TOOLS/bin first, then PATH; None if absent."""
    prefix = os.environ.get("P4TOOLS")
    if prefix:
        path = os.path.join(prefix, "bin", name)
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def missing(*names):
    """The NAMES that cannot be found, in order."""
    return [n for n in names if find(n) is None]


def skip_reason(*names):
    gone = missing(*names)
    if not gone:
        return None
    where = "$P4TOOLS/bin (%s) or PATH" % os.environ["P4TOOLS"] if os.environ.get(
        "P4TOOLS") else "PATH (P4TOOLS unset)"
    return "P4 toolchain: %s not in %s; see README.md, P4 toolchain" % (", ".join(gone), where)


def bm_runtime_path():
    """The directory holding BMv2's thrift Python package (bm_runtime), or None."""
    ss = find("simple_switch")
    if ss is None:
        return None
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(ss)))
    for pattern in ("lib/python3*/site-packages", "lib/python3*/dist-packages",
                    "lib/python3/dist-packages"):
        for d in glob.glob(os.path.join(prefix, pattern)):
            if os.path.isdir(os.path.join(d, "bm_runtime")):
                return d
    return None


def tna_include():
    """The directory holding tna.p4 (p4c's Tofino includes), or None."""
    for tool in ("p4c-barefoot", "p4test"):
        path = find(tool)
        if path is None:
            continue
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(path)))
        for d in (os.path.join(prefix, "share", "p4c", "p4include"),
                  os.path.join(prefix, "share", "p4c", "p4include", "tofino")):
            if os.path.exists(os.path.join(d, "tna.p4")):
                return d
    return None


def version(name):
    out = subprocess.run([find(name), "--version"], capture_output=True, text=True)
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[-1] if lines else "?"


def run(cmd, what):
    """Runs a compiler; returns (seconds, warnings text). Raises with its output on failure."""
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    took = time.monotonic() - t
    if p.returncode != 0:
        raise RuntimeError("%s failed (%s):\n%s%s" % (what, " ".join(cmd), p.stdout, p.stderr))
    return took, (p.stdout + p.stderr).strip()


def compile_p4test_v1model():
    return run([find("p4test"), "--arch", "v1model", V1MODEL], "p4test (v1model)")


def compile_bmv2(outdir):
    """The v1model twin for BMv2: OUTDIR/netec.json and OUTDIR/netec.p4info.txtpb."""
    os.makedirs(outdir, exist_ok=True)
    took, warnings = run([find("p4c-bm2-ss"), "--arch", "v1model",
                          "-o", os.path.join(outdir, "netec.json"),
                          "--p4runtime-files", os.path.join(outdir, "netec.p4info.txtpb"),
                          V1MODEL], "p4c-bm2-ss")
    return took, warnings, os.path.join(outdir, "netec.json")


def compile_p4test_tna():
    inc = tna_include()
    if inc is None:
        raise RuntimeError("tna.p4 not found beside p4test or p4c-barefoot")
    return run([find("p4test"), "-I", inc, "-D__TARGET_TOFINO__=1", TNA], "p4test (tna)")


def compile_tofino(outdir):
    """The TNA program for Tofino 1 down to its binary: p4c-barefoot (-g: the resource reports
    in OUTDIR/pipe/logs) writes the assembly, bfas assembles it into OUTDIR/pipe/tofino.bin.
    Returns (seconds of each, warnings text)."""
    took, text = run([find("p4c-barefoot"), "--target", "tofino", "--arch", "tna", "-g",
                      "-I", tna_include(), "-o", outdir, TNA], "p4c-barefoot (tofino)")
    pipe = os.path.join(outdir, "pipe")
    took_asm, text_asm = run([find("bfas"), "-o", pipe, os.path.join(pipe, "netec.bfa")],
                             "bfas (tofino)")
    return (took, took_asm), (text + "\n" + text_asm).strip()


def main(argv):
    if argv[:1] == ["has"]:
        return 1 if missing(*argv[1:]) else 0
    if argv[:1] == ["versions"]:
        for t in ("p4test", "p4c-bm2-ss", "simple_switch", "p4c-barefoot"):
            print("%-14s %s" % (t, version(t) if find(t) else "absent"))
        return 0
    if argv[:1] == ["compile"] and len(argv) == 2:
        reason = skip_reason("p4test", "p4c-bm2-ss")
        if reason:
            print("SKIP: " + reason)
            return 0
        for what, f in (("p4test v1model", compile_p4test_v1model),
                        ("p4test tna", compile_p4test_tna)):
            took, warnings = f()
            print("%-16s %6.1f s%s" % (what, took, ("\n" + warnings) if warnings else ""))
        took, warnings, _ = compile_bmv2(argv[1])
        print("%-16s %6.1f s%s" % ("p4c-bm2-ss", took, ("\n" + warnings) if warnings else ""))
        return 0
    print(__doc__.strip())
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
