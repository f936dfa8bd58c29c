"""Where the P4 tools are, and the programs compiled with them: "netec" (p4src/*/netec.p4:
multiply, TCP proxy) and "netec_xor" (p4src/*/netec_xor.p4: pre-multiplied, datagrams), each
a TNA program and its v1model twin.

The tools are found through one variable, P4TOOLS (an install prefix with bin/ and share/), or
else on PATH. None of them is part of this project: README.md ("P4 toolchain") says how to get
them. `missing(...)` names what is absent, so a caller can print one SKIP line.

    python3 -m netec_p4.bmv2.p4tools compile OUTDIR    compiles every program, prints times
    python3 -m netec_p4.bmv2.p4tools versions          prints each tool's version line
    python3 -m netec_p4.bmv2.p4tools has TOOL...       exits 0 if every TOOL is found

(switch-p4/ as the working directory or on PYTHONPATH.)
"""

import glob
import os
import shutil
import subprocess
import sys
import time

from netec_p4 import P4SRC

PROGRAMS = ("netec", "netec_xor")
# p4test (p4c 1.2.5's reference front and mid end) does not finish on netec_xor: still running
# after 5 minutes on both architectures, at its parser passes over the payload's three
# 32-word chains of states; p4c-bm2-ss (20 s) and p4c-barefoot (1 min) take it.
P4TEST_SKIPS = {"netec_xor": "p4test does not finish on its 96-state payload parser "
                             "(over 5 min); p4c-bm2-ss and p4c-barefoot compile it"}


def v1model(program="netec"):
    return os.path.join(P4SRC, "v1model", program + ".p4")


def tna(program="netec"):
    return os.path.join(P4SRC, "tna", program + ".p4")


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


def compile_p4test_v1model(program="netec"):
    return run([find("p4test"), "--arch", "v1model", v1model(program)],
               "p4test (v1model %s)" % program)


def compile_bmv2(outdir, program="netec"):
    """The v1model twin for BMv2: OUTDIR/PROGRAM.json and OUTDIR/PROGRAM.p4info.txtpb."""
    os.makedirs(outdir, exist_ok=True)
    took, warnings = run([find("p4c-bm2-ss"), "--arch", "v1model",
                          "-o", os.path.join(outdir, program + ".json"),
                          "--p4runtime-files", os.path.join(outdir, program + ".p4info.txtpb"),
                          v1model(program)], "p4c-bm2-ss")
    return took, warnings, os.path.join(outdir, program + ".json")


def compile_p4test_tna(program="netec"):
    inc = tna_include()
    if inc is None:
        raise RuntimeError("tna.p4 not found beside p4test or p4c-barefoot")
    return run([find("p4test"), "-I", inc, "-D__TARGET_TOFINO__=1", tna(program)],
               "p4test (tna %s)" % program)


def compile_tofino(outdir, program="netec"):
    """The TNA program for Tofino 1 down to its binary: p4c-barefoot (-g: the resource reports
    in OUTDIR/pipe/logs) writes the assembly, bfas assembles it into OUTDIR/pipe/tofino.bin.
    Returns (seconds of each, warnings text)."""
    took, text = run([find("p4c-barefoot"), "--target", "tofino", "--arch", "tna", "-g",
                      "-I", tna_include(), "-o", outdir, tna(program)],
                     "p4c-barefoot (tofino %s)" % program)
    pipe = os.path.join(outdir, "pipe")
    took_asm, text_asm = run([find("bfas"), "-o", pipe, os.path.join(pipe, program + ".bfa")],
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
        for program in PROGRAMS:
            for what, f in (("p4test v1model", compile_p4test_v1model),
                            ("p4test tna", compile_p4test_tna)):
                if program in P4TEST_SKIPS:
                    print("%-9s %-16s SKIP: %s" % (program, what, P4TEST_SKIPS[program]))
                    continue
                took, warnings = f(program)
                print("%-9s %-16s %6.1f s%s" % (program, what, took,
                                                ("\n" + warnings) if warnings else ""))
            took, warnings, _ = compile_bmv2(argv[1], program)
            print("%-9s %-16s %6.1f s%s" % (program, "p4c-bm2-ss", took,
                                            ("\n" + warnings) if warnings else ""))
        return 0
    print(__doc__.strip())
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
