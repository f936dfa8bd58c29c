"""NetEC's P4 switch in Python: the reference and pipeline models (`netec_p4.model`), the
control plane (`netec_p4.control`), the P4 toolchain and BMv2 tools (`netec_p4.bmv2`), and what
the suites that drive them share (`netec_p4.testing`).

The P4 sources the package compiles, models and reads (p4src/) and the README.md it writes
resource tables into stay in switch-p4/, beside the package, not inside it: the package is run
from the source tree (pyproject.toml), where these paths hold.
"""

import os

# switch-p4/: the package's parent directory
SWITCH_P4 = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
P4SRC = os.path.join(SWITCH_P4, "p4src")
