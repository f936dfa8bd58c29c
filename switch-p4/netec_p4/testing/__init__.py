"""What the suites that drive this package share, so that no test module imports another: the
shared test vectors as this package's control plane and model take them (`vectors`), and the
TCP proxy scenario that every data plane of the TCP program must pass, the pipeline model and
BMv2 alike (`proxy`, needs scapy). The switch itself uses none of it.

Their checks are plain `assert` statements; the suites' conftest.py files register this package
with pytest's assertion rewriting, so a failing one reports its operands as a test's would.
"""
