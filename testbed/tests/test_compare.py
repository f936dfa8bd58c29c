"""bin/netec-bench compare's merge of two runs' markdown: each cell that differs reads
"before → after"; text, equal cells and tables that are not the same table stay as run."""

from netec_testbed.compare import merge

BEFORE = """# Reads

| read | hadoop | switch | ratio |
|---|---:|---:|---:|
| a cell of the lost unit | 279 / 454 | 147 / 235 | 1.69 |
| a cell of a healthy unit | 90 / 101 | 90 / 93 | 1.00 |

| racks | code | route |
|---|---|---|
| 4 | rs32 | native |
"""

AFTER = """# Reads

| read | hadoop | switch | ratio |
|---|---:|---:|---:|
| a cell of the lost unit | 279 / 454 | 133 / 201 | 1.81 |
| a cell of a healthy unit | 90 / 101 | 90 / 93 | 1.00 |

| racks | code | route |
|---|---|---|
| 4 | rs32 | native |
| 4 | rs63 | native |
"""


def test_cells_that_differ_read_before_then_after():
    merged = merge(BEFORE, AFTER).split("\n")
    assert merged[0] == "# Reads"
    assert merged[4] == ("| a cell of the lost unit | 279 / 454 | 147 / 235 → 133 / 201 | "
                         "1.69 → 1.81 |")
    assert merged[5] == "| a cell of a healthy unit | 90 / 101 | 90 / 93 | 1.00 |"


def test_a_table_of_other_rows_is_left_as_the_second_run_printed_it():
    merged = merge(BEFORE, AFTER)
    assert "| 4 | rs63 | native |" in merged and "→" not in merged.split("| racks")[1]


def test_a_table_with_another_header_is_not_merged():
    other = AFTER.replace("| read | hadoop | switch | ratio |", "| read | hadoop | inec | ratio |")
    assert "→" not in merge(BEFORE, other)
