"""What the testbed suites share: whether this machine can run a testbed, and one testbed up
for a module's tests, taken down after them with nothing left behind (the fixture
`testbed_running`)."""

import os
import shutil
import subprocess

import pytest

from netec_testbed import Testbed
from netec_testbed import net, p4fabric


def environment_missing():
    """Why no testbed can run here (None: one can)."""
    if os.geteuid() != 0:
        return "not root (network namespaces and tc need root)"
    for tool in ("ip", "tc", "java", "mvn"):
        if shutil.which(tool) is None:
            return "%s not found" % tool
    if subprocess.run(["ip", "netns", "list"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        return "network namespaces unavailable"
    return None


def running(config, what):
    """A generator for a module fixture: the testbed of CONFIG, up (leftovers of an earlier,
    interrupted run of the suite removed first), then down, leaving no namespace, management
    port or run dir. Where the environment is missing, one SKIP line naming WHAT, or a failure
    under NETEC_REQUIRE_ENV=1 (set by .ci/run)."""
    if "bmv2" in (config.fabric, config.rack_switch):
        reason = p4fabric.missing()
        if reason:  # the P4 toolchain, which a fresh machine cannot have: never a failure
            pytest.skip("SKIP %s: %s" % (what, reason))
    missing = environment_missing()
    if missing:
        if os.environ.get("NETEC_REQUIRE_ENV") == "1":
            pytest.fail("%s cannot run (%s) and NETEC_REQUIRE_ENV=1 forbids skipping"
                        % (what, missing))
        pytest.skip("SKIP %s: %s" % (what, missing))
    t = Testbed(config)
    t.down()
    t.up(progress=lambda m: print(m, flush=True))
    try:
        yield t
    finally:
        t.down()
    assert not net.namespaces(config.prefix), net.namespaces(config.prefix)
    assert not net.holders_of(net.MGMT_IP)
    assert not os.path.exists(t.run_dir)


@pytest.fixture(scope="session")
def testbed_running():
    """`running` for a suite's module fixture, which yields from it with the suite's own
    Config: `yield from testbed_running(Config(...), "what")`."""
    return running
