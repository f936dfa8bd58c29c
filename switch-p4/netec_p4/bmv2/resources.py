"""A TNA program's Tofino 1 resources, as p4c-barefoot reports them (never estimated).

    python3 -m netec_p4.bmv2.resources OUTDIR              compiles into OUTDIR (p4c-barefoot -g),
                                                           prints the table
    python3 -m netec_p4.bmv2.resources OUTDIR --readme     also writes it into switch-p4/README.md
                                                           between the program's resource markers
    ... --program netec_xor                                the datagram XOR program (default netec)

(switch-p4/ as the working directory or on PYTHONPATH.)

Reads OUTDIR/pipe/logs/resources.json (per MAU stage: logical tables, SRAMs, TCAMs, map RAMs,
stateful ALUs, hash distribution units, gateways, VLIW instructions, crossbar bytes) and
OUTDIR/pipe/logs/phv.json (PHV containers by kind and width). An OUTDIR that already holds them
is read as it is, so a compile need not be repeated to print its table.
"""

import json
import os
import re
import sys

from netec_p4 import SWITCH_P4

README = os.path.join(SWITCH_P4, "README.md")
BEGIN = "<!-- resources: written by switch-p4/netec_p4/bmv2/resources.py, do not edit -->"
END = "<!-- resources: end -->"


def markers(program):
    """The README markers around PROGRAM's table."""
    if program == "netec":
        return BEGIN, END
    return (BEGIN.replace("resources:", "resources %s:" % program),
            END.replace("resources:", "resources %s:" % program))

# (column, how to count it in one stage's report, what the stage has)
COLUMNS = [
    ("logical tables", lambda s: len(s["logical_tables"]["ids"]),
     lambda s: s["logical_tables"]["size"]),
    ("SRAMs", lambda s: len(s["rams"]["srams"]),
     lambda s: s["rams"]["nRows"] * s["rams"]["nColumns"]),
    ("TCAMs", lambda s: len(s["tcams"]["tcams"]),
     lambda s: s["tcams"]["nRows"] * s["tcams"]["nColumns"]),
    ("map RAMs", lambda s: len(s["map_rams"]["maprams"]),
     lambda s: s["map_rams"]["nRows"] * s["map_rams"]["nUnits"]),
    ("stateful ALUs", lambda s: len(s["meter_alus"]["meters"]),
     lambda s: s["meter_alus"]["nAlus"]),
    ("hash dist. units", lambda s: len(s["hash_distribution_units"]["units"]),
     lambda s: s["hash_distribution_units"]["nHashIds"]
     * s["hash_distribution_units"]["nUnitIds"]),
    ("gateways", lambda s: len(s["gateways"]["gateways"]),
     lambda s: s["gateways"]["nRows"] * s["gateways"]["nUnits"]),
    ("VLIW instr.", lambda s: len(s["vliw"]["instructions"]), lambda s: s["vliw"]["size"]),
    ("xbar bytes", lambda s: len(s["xbar_bytes"]["bytes"]), lambda s: s["xbar_bytes"]["size"]),
]


def load(outdir):
    logs = os.path.join(outdir, "pipe", "logs")
    with open(os.path.join(logs, "resources.json")) as f:
        resources = json.load(f)
    with open(os.path.join(logs, "phv.json")) as f:
        phv = json.load(f)
    return resources, phv


def stage_rows(resources):
    """One row per MAU stage the program uses: (stage, [count per column])."""
    stages = resources["resources"]["mau"]["mau_stages"]
    return [(s["stage_number"], [count(s) for _, count, _ in COLUMNS])
            for s in sorted(stages, key=lambda s: s["stage_number"])]


def phv_rows(phv):
    """Containers used, by kind and width: {(kind, width): (containers, bits used)}."""
    out = {}
    for c in phv["containers"]:
        key = (c["container_type"], c["bit_width"])
        used = sum(s["slice_info"]["msb"] - s["slice_info"]["lsb"] + 1 for s in c["slices"])
        n, bits = out.get(key, (0, 0))
        out[key] = (n + 1, bits + used)
    return out


def render(resources, phv):
    mau = resources["resources"]["mau"]
    rows = stage_rows(resources)
    first = mau["mau_stages"][0] if mau["mau_stages"] else None
    lines = ["p4c-barefoot %s, Tofino 1 (%d MAU stages), program %s: %d stages used."
             % (resources["compiler_version"], mau["nStages"], resources["program_name"],
                len(rows)), ""]
    lines.append("| stage | " + " | ".join(c for c, _, _ in COLUMNS) + " |")
    lines.append("|---" * (len(COLUMNS) + 1) + "|")
    if first is not None:
        lines.append("| per stage | " + " | ".join(str(have(first)) for _, _, have in COLUMNS)
                     + " |")
    for stage, counts in rows:
        lines.append("| %d | " % stage + " | ".join(str(n) for n in counts) + " |")
    totals = [sum(counts[i] for _, counts in rows) for i in range(len(COLUMNS))]
    lines.append("| total | " + " | ".join(str(n) for n in totals) + " |")
    lines += ["", "| PHV containers | used | field bits placed (overlaid fields each) |",
              "|---|---|---|"]
    for (kind, width), (n, bits) in sorted(phv_rows(phv).items()):
        lines.append("| %s %d-bit | %d | %d of %d |" % (kind, width, n, bits, n * width))
    return "\n".join(lines) + "\n"


def write_readme(table, path=README, program="netec"):
    begin, end = markers(program)
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        raise SystemExit("%s has no resource markers for %s" % (path, program))
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end),
                  lambda _: begin + "\n" + table + end, text, flags=re.S)
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip())
        return 2
    outdir = argv[0]
    program = argv[argv.index("--program") + 1] if "--program" in argv else "netec"
    if not os.path.exists(os.path.join(outdir, "pipe", "logs", "resources.json")):
        from netec_p4.bmv2 import p4tools
        reason = p4tools.skip_reason("p4c-barefoot", "bfas")
        if reason:
            print("SKIP: " + reason)
            return 0
        try:
            p4tools.compile_tofino(outdir, program)
        except RuntimeError as e:  # the reports are written even where the assembler fails
            if not os.path.exists(os.path.join(outdir, "pipe", "logs", "resources.json")):
                raise
            print("compile failed after the resource reports:\n%s" % e, file=sys.stderr)
    table = render(*load(outdir))
    print(table, end="")
    if "--readme" in argv:
        write_readme(table, program=program)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
