"""The write-or-check step shared by the generators in this folder."""

import sys


def write_or_check(path, text, argv):
    """Writes text to path; with --check in argv, returns 1 (and says so) if they differ."""
    name = path.rsplit("/", 1)[-1]
    if "--check" in argv:
        with open(path) as f:
            if f.read() != text:
                print("%s differs from what its generator writes" % name, file=sys.stderr)
                return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0
