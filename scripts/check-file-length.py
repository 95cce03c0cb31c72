#!/usr/bin/python3
"""check-file-length.py -- no source file outside tests over MAX lines (default 700).

Usage: scripts/check-file-length.py [--max N] [--list] [--root DIR]
Every tracked source of the repository except tests/: C (*.c, *.h), Python and shell, by
their names (*.py, *.sh) or their first line (#!/bin/sh, #!/usr/bin/python3: .ci/run,
scripts/slurm-compare), the files scripts/check-function-length.py reads (`git ls-files`,
or a walk of the tree when it is not a git checkout; --root reads another tree, as the
script's own test does: tests/code/check_lengths.sh). A file over the limit does more than
one job: split it by job (docs/architecture.md says where each job lives). Exit 1 naming
each FILE (N lines) over the limit; --list prints every file with its length, longest first.
"""
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "check_function_length", os.path.join(ROOT, "scripts", "check-function-length.py"))
_fl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fl)
USAGE = "usage: check-file-length.py [--max N] [--list] [--root DIR]"


def main(argv):
    limit, listing, root = 700, False, ROOT
    it = iter(argv)
    for a in it:
        if a in ("--max", "--root"):
            v = next(it, None)
            if a == "--root" and v is not None:
                root = os.path.abspath(v)
                continue
            try:
                limit = int(v)
            except (TypeError, ValueError):
                print(USAGE, file=sys.stderr)
                return 2
        elif a == "--list":
            listing = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            print(USAGE, file=sys.stderr)
            return 2
    lengths = []
    for f, _ in _fl.sources(root):
        with open(os.path.join(root, f), "rb") as fh:
            lengths.append((sum(1 for _ in fh), f))
    if listing:
        for n, f in sorted(lengths, reverse=True):
            print("%6d %s" % (n, f))
        return 0
    over = [(n, f) for n, f in lengths if n > limit]
    for n, f in over:
        print("%s: %d lines (over %d): split it by job" % (f, n, limit), file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
