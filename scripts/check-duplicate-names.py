#!/usr/bin/python3
"""check-duplicate-names.py -- one name, one thing: no two C functions of the same name.

Usage: scripts/check-duplicate-names.py [--root DIR] [--list]

Every function defined in the C tool's sources (the modules of
docs/architecture.md: common/ platform/ traces/ meter/ analyze/ plots/ runner/
cli/, and the probe's C header probe/stagebench_probe.h), static ones and
static inlines of headers included, is found with the scanner of
scripts/check-function-length.py. A name defined twice fails, naming each
FILE:LINE, so that a reader (and scripts/check-layers.py) can tell which one
is meant: give each a name that carries its module (memory_legend,
stages_legend). One exception, the platform interface: a name defined once in
each OS directory (platform/linux/, platform/darwin/) and nowhere else is one
function per backend, not a clash. tests/, fuzz/ and bench/ are programs of
their own and are not read. --root reads another tree (the script's own test);
--list prints every name with its definitions. Exit 1 on a clash.
"""
import importlib.util
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ("common", "platform", "traces", "meter", "analyze", "plots", "runner", "cli")
EXTRA = ("probe/stagebench_probe.h",)
OS_DIR = re.compile(r"platform/(linux|darwin)/")

_spec = importlib.util.spec_from_file_location(
    "check_function_length", os.path.join(REPO, "scripts", "check-function-length.py"))
_fl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fl)


def sources(root):
    """The C tool's .c and .h files under root (git ls-files, else a walk)."""
    files = [f for f in _fl.tree_files(root) if f.endswith((".c", ".h"))]
    return sorted(f for f in files if (f.split("/")[0] in MODULES or f in EXTRA)
                  and os.path.exists(os.path.join(root, f)))


def per_os_backend(places):
    """Whether the definitions are one per OS directory and none elsewhere."""
    dirs = [OS_DIR.match(f) for f, _ in places]
    if not all(dirs):
        return False
    names = [m.group(1) for m in dirs]
    return len(set(names)) == len(names)


def main(argv):
    root, listing = REPO, False
    it = iter(argv)
    for a in it:
        if a == "--root":
            v = next(it, None)
            if v is None:
                print(__doc__.strip())
                return 2
            root = os.path.abspath(v)
        elif a == "--list":
            listing = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            print(__doc__.strip())
            return 2
    defs = {}
    for rel in sources(root):
        for name, first, _ in _fl.functions(os.path.join(root, rel)):
            defs.setdefault(name, []).append((rel, first))
    bad = 0
    for name in sorted(defs):
        places = defs[name]
        if listing:
            print("%s %s" % (name, " ".join("%s:%d" % p for p in places)))
        if len(places) > 1 and not per_os_backend(places):
            bad += 1
            print("ERROR: %s is defined %d times: %s" % (name, len(places),
                                                       " ".join("%s:%d" % p for p in places)),
                  file=sys.stderr)
    if bad:
        print("check-duplicate-names: %d name(s) name more than one function: give each a name "
              "that carries its module (docs/architecture.md)" % bad, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
