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
