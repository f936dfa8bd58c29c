"""What the unit tests of netec_p4 share."""

import pytest

# netec_p4.testing's checks (the TCP proxy scenario) are plain asserts in a module that is not
# a test: rewritten, a failing one reports its operands as a test's assert does.
pytest.register_assert_rewrite("netec_p4.testing")
