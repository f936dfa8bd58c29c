"""What the cross-component suites here share."""

import os

import pytest

import netec_p4

# netec_p4.testing's checks (the TCP proxy scenario BMv2 runs) are plain asserts in a module
# that is not a test: rewritten, a failing one reports its operands as a test's assert does.
pytest.register_assert_rewrite("netec_p4.testing")


@pytest.fixture(scope="session")
def child_env():
    """The environment of a Python child process (the table generators of p4src/generated):
    netec_p4 importable there too. pytest's pythonpath (pyproject.toml) is on this process's
    sys.path only; a child finds the package through PYTHONPATH, as the generators' docstrings
    say to run them."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [netec_p4.SWITCH_P4, os.environ.get("PYTHONPATH")])))
