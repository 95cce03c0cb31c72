#!/usr/bin/python3
"""check-file-length.py -- no source file outside tests over MAX lines (default 700).

Usage: scripts/check-file-length.py [--max N] [--list]
Every tracked *.c, *.h, *.py and *.sh of the repository (`git ls-files`, or a walk of the
tree when it is not a git checkout) except tests/. A file over the limit does more than one
job: split it by job (docs/architecture.md says where each job lives). Exit 1 naming each
FILE (N lines) over the limit; --list prints every file with its length, longest first.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXTS = (".c", ".h", ".py", ".sh")
EXCLUDE = ("tests/",)


def sources():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files"] + ["*" + e for e in EXTS], check=True,
                             capture_output=True, text=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d, dirs, files in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            out += [os.path.relpath(os.path.join(d, f), ROOT) for f in files if f.endswith(EXTS)]
    return sorted(f for f in out if f and not f.startswith(EXCLUDE)
                  and os.path.isfile(os.path.join(ROOT, f)))


def main(argv):
    limit, listing = 700, False
    it = iter(argv)
    for a in it:
        if a == "--max":
            try:
                limit = int(next(it))
            except (StopIteration, ValueError):
                print("usage: check-file-length.py [--max N] [--list]", file=sys.stderr)
                return 2
        elif a == "--list":
            listing = True
        else:
            print("usage: check-file-length.py [--max N] [--list]", file=sys.stderr)
            return 2
    lengths = []
    for f in sources():
        with open(os.path.join(ROOT, f), "rb") as fh:
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
