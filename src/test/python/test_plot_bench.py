"""scripts/plot_bench.py: reads the tables bin/netec-bench prints and draws them."""
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "plot_bench.py")
spec = importlib.util.spec_from_file_location("plot_bench", SCRIPT)
plot_bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot_bench)

INEC = """# INEC decode over TCP loopback, RS(6,3), one unit rebuilt, chunk <= 64 KiB

| scheme | unit | INEC latency (us) | baseline latency (us) | INEC MB/s | baseline MB/s | INEC/baseline |
|---|---|---|---|---|---|---|
| rs-star | 4 KiB | 133 | 146 | 31 | 28 | 1.10x |
| rs-star | 16 KiB | 117 | 125 | 140 | 131 | 1.07x |
| ppr-tree | 4 KiB | 171 | 186 | 24 | 22 | 1.09x |

| other | table |
|---|---|
| not | read |
"""


def test_reads_the_first_table_only():
    rows = plot_bench.table(INEC.splitlines())
    assert [r["scheme"] for r in rows] == ["rs-star", "rs-star", "ppr-tree"]
    assert rows[1]["INEC MB/s"] == "140"
    assert plot_bench.number(rows[1]["unit"]) == 16.0
    assert plot_bench.number(rows[0]["INEC/baseline"]) == 1.10
    assert plot_bench.number("1,234 MB/s") == 1234.0


def test_no_table_is_an_error(tmp_path):
    p = subprocess.run([sys.executable, SCRIPT, "inec", str(tmp_path / "x.png")],
                       input="no table here\n", capture_output=True, text=True)
    assert p.returncode == 1 and "no markdown table" in p.stderr


def test_draws_a_png(tmp_path):
    out = tmp_path / "inec.png"
    p = subprocess.run([sys.executable, SCRIPT, "inec", str(out)], input=INEC,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


SWITCH = """# End to end over TCP loopback, one 64 MiB unit rebuilt

| k | switch MB/s | switch ingress/rebuilt | switch CPU s/GiB in | agents CPU s/GiB | reader CPU s/GiB | path CPU s/GiB | host decode MB/s | host ingress/rebuilt | host CPU s/GiB | switch/host |
|---|---|---|---|---|---|---|---|---|---|---|
| 3 | 525 | 1.0006 | 0.38 | 1.46 | 0.37 | 3.36 | 1168 | 3.00 | 1.28 | 0.45x |
| 6 | 320 | 1.0006 | 0.32 | 2.74 | 0.36 | 5.12 | 516 | 6.00 | 2.88 | 0.62x |
"""


def test_draws_the_switch_table_against_k(tmp_path):
    rows = plot_bench.table(SWITCH.splitlines())
    assert [plot_bench.number(r["k"]) for r in rows] == [3.0, 6.0]
    assert plot_bench.number(rows[1]["switch/host"]) == 0.62
    out = tmp_path / "switch.png"
    p = subprocess.run([sys.executable, SCRIPT, "switch-e2e", str(out)], input=SWITCH,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
