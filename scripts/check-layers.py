#!/usr/bin/python3
"""check-layers.py -- the modules link in one order, and only cli/ sees the command table.

Usage: scripts/check-layers.py [-v] BUILD_DIR      (NM=llvm-nm for the macOS cross build's objects)

A module is a top-level folder (platform/linux/ and meter/gpu/ belong to
platform and meter). Reading `nm` of every object under BUILD_DIR, each
module may need to link only with the modules before it in LAYERS; a symbol
a module uses (U) and another defines is a dependency. Since each module
looks only downwards, no two modules need each other to link. Also: no
source outside cli/ includes a header of cli/ (commands.h, opt.h).
docs/architecture.md explains the order. -v prints every dependency found.
Exit 1 naming the module, the symbol and the objects on each violation.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. Each module may use the ones before it, never one after it.
LAYERS = ["common", "platform", "traces", "meter", "analyze", "plots", "runner", "cli"]


def symbols(build):
    """{module: [(name, type, object)]} from nm -P of BUILD/<module>/**/*.o."""
    out, missing = {}, []
    for m in LAYERS:
        rows = []
        for src in sorted(glob.glob(os.path.join(ROOT, m, "**", "*.c"), recursive=True)):
            rel = os.path.relpath(src, ROOT)
            o = os.path.join(build, rel[:-2] + ".o")   # objects of removed sources are not read
            if not os.path.exists(o):
                if not re.match(r"platform/(linux|darwin)/", rel):  # the other OS's backend
                    missing.append(rel)
                continue
            r = subprocess.run([os.environ.get("NM") or "nm", "-P", o], check=True,
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                p = line.split()
                if len(p) >= 2:
                    rows.append((p[0], p[1], os.path.relpath(o, build)))
        out[m] = rows
    if missing:
        print("check-layers: not built under %s: %s (build first)" % (build, " ".join(missing)),
              file=sys.stderr)
        sys.exit(2)
    return out


def link_deps(build):
    syms = symbols(build)
    where = {}
    for m, rows in syms.items():
        for name, t, o in rows:
            if t != "U" and t.isupper():       # defined, global
                where.setdefault(name, (m, o))
    deps = {}
    for m, rows in syms.items():
        for name, t, o in rows:
            if t == "U" and name in where and where[name][0] != m:
                deps.setdefault((m, where[name][0]), []).append((name, o, where[name][1]))
    return syms, deps


def cli_includes():
    """Sources outside cli/ (and tests/) that include a cli/ header."""
    try:
        r = subprocess.run(["git", "-C", ROOT, "ls-files", "*.c", "*.h"], capture_output=True, text=True)
        files = r.stdout.split() if r.returncode == 0 else []
    except OSError:  # no git installed
        files = []
    if not files:  # not a git checkout (a release tarball, a fresh root's copy), or no git
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names
                      if n.endswith((".c", ".h"))]
    bad = []
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for f in files:
        if f.startswith(("cli/", "tests/")) or not os.path.exists(os.path.join(ROOT, f)):
            continue
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = inc.match(line)
                if not m:
                    continue
                path = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
                if m.group(1).startswith("cli/") or path.startswith("cli/"):
                    bad.append("%s:%d: includes %s" % (f, n, m.group(1)))
    return bad


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args and args[0] in ("-h", "--help") else 2
    build = args[0]
    syms, deps = link_deps(build)
    empty = [m for m in LAYERS if not syms[m]]
    if empty:
        print("check-layers: no objects for %s under %s (build first)" % (", ".join(empty), build),
              file=sys.stderr)
        return 2
    bad = 0
    for (m, d), uses in sorted(deps.items(), key=lambda kv: (LAYERS.index(kv[0][0]), LAYERS.index(kv[0][1]))):
        up = LAYERS.index(d) > LAYERS.index(m)
        if verbose or up:
            names = sorted(set(u[0] for u in uses))
            print("%s%s -> %s: %d symbol(s): %s" % ("ERROR: " if up else "", m, d, len(names),
                                                    ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")),
                  file=sys.stderr if up else sys.stdout)
        if up:
            bad += 1
            for name, o, def_o in sorted(uses)[:10]:
                print("  %s uses %s (defined in %s)" % (o, name, def_o), file=sys.stderr)
    for line in cli_includes():
        print("ERROR: %s (only cli/ may see the command table and option helpers)" % line,
              file=sys.stderr)
        bad += 1
    if bad:
        print("check-layers: %d violation(s) of the order %s (docs/architecture.md)" %
              (bad, " < ".join(LAYERS)), file=sys.stderr)
        return 1
    if verbose:
        print("order: " + " < ".join(LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
