#!/usr/bin/python3
"""check-layers.py -- the modules link in one order, no files need each other, only cli/ sees
the command table.

Usage: scripts/check-layers.py [-v] [--root DIR] [--allow A,B]... [--up A,B]... BUILD_DIR
       (NM=llvm-nm for the macOS cross build's objects)

A module is a top-level folder (platform/linux/ and meter/gpu/ belong to
platform and meter). Reading `nm` of every object under BUILD_DIR, each
module may need to link only with the modules before it in LAYERS; a symbol
a module uses (U) and another defines is a dependency. Since each module
looks only downwards, no two modules need each other to link.

Inside the modules, no two or more files may form a circle:
  - link: object A uses a symbol object B defines, and B (or a file B needs)
    one of A's -- read from the same `nm` (the other OS's platform directory,
    built only in part for the unit tests, is left out);
  - include: header A includes B, and B (or a header B includes) includes A;
  - import: a module of the Python probe (probe/stagebench_probe/) imports
    another that imports it back (an import inside a function counts too).
A circle is a strongly connected set of files; it is named with its files
and a symbol, #include or import on each of its edges. ALLOWED_CIRCLES lists
the known ones as file pairs; a listed pair whose files are no longer in one
circle fails too (remove it from the list). With --root (another tree, for
the script's own test) the list is empty unless --allow A,B gives pairs.

Inside runner/, the wings stand in one order too (WINGS): runner/ itself (spawn,
loop, guard, pipeline, conditions, git) < runner/record/ < runner/compare/. A
file of a wing may use a symbol of, or include a header of, its own wing or one
below it; an arrow up (a file of runner/ that needs one of runner/record/, say)
fails, named with its symbols or #include lines, unless UP_ARROWS lists the pair
(docs/architecture.md names each with its reason; a listed pair that is no
longer an arrow fails too). With --root the list is empty unless --up A,B gives
pairs.

Also: no source outside cli/ includes a header of cli/ (commands.h, opt.h).
docs/architecture.md explains the order. -v prints every module dependency
and every allowed circle found. Exit 1 naming the module, the symbol and the objects on each
violation, and each circle; 2 when the objects are missing.
"""
import ast
import glob
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. Each module may use the ones before it, never one after it.
LAYERS = ["common", "platform", "traces", "meter", "analyze", "plots", "runner", "cli"]

# The Python package whose imports are checked for circles.
PY_PACKAGE = "probe/stagebench_probe"

# Known circles of files, as pairs (A, B): A and B are in one circle. A circle of
# three or more files needs pairs that join all of its files. Each pair is removed
# when its circle is broken: a pair whose files are no longer in one circle fails.
ALLOWED_CIRCLES = [
]

# The wings of runner/, bottom first: a file may need its own wing or one before it.
WINGS = ["runner", "runner/record", "runner/compare"]

# Arrows up between wings, as pairs (A, B): file A needs file B of a wing above A's.
# Each one is named with its reason in docs/architecture.md; none today.
UP_ARROWS = [
]


def sources(root, exts):
    """Every file under root with one of exts (tracked by git when root is a checkout)."""
    files = []
    try:
        r = subprocess.run(["git", "-C", root, "ls-files"] + ["*" + e for e in exts],
                           capture_output=True, text=True)
        files = r.stdout.split() if r.returncode == 0 else []
    except OSError:  # no git installed
        files = []
    if not files:  # not a git checkout (a release tarball, a fresh root's copy), or no git
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith(exts)]
    return sorted(f for f in files if os.path.exists(os.path.join(root, f)))


# ---- the objects' symbols -------------------------------------------------------------------

def os_dir_built(root, build, d):
    """platform/<os>/ is part of this build when every source of it has an object."""
    srcs = glob.glob(os.path.join(root, d, "*.c"))
    return all(os.path.exists(os.path.join(build, os.path.relpath(s, root)[:-2] + ".o"))
               for s in srcs)


def symbols(root, build):
    """{module: [(name, type, source)]} from nm -P of BUILD/<module>/**/*.o, and the
    sources of the platform directories only partly built (the other OS's)."""
    out, missing, partial = {}, [], set()
    for m in LAYERS:
        rows = []
        for src in sorted(glob.glob(os.path.join(root, m, "**", "*.c"), recursive=True)):
            rel = os.path.relpath(src, root)
            o = os.path.join(build, rel[:-2] + ".o")   # objects of removed sources are not read
            osdir = re.match(r"platform/(linux|darwin)/", rel)
            if osdir and not os_dir_built(root, build, osdir.group(0)):
                partial.add(rel)
            if not os.path.exists(o):
                if not osdir:  # the other OS's backend
                    missing.append(rel)
                continue
            r = subprocess.run([os.environ.get("NM") or "nm", "-P", o], check=True,
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                p = line.split()
                if len(p) >= 2:
                    rows.append((p[0], p[1], rel))
        out[m] = rows
    if missing:
        print("check-layers: not built under %s: %s (build first)" % (build, " ".join(missing)),
              file=sys.stderr)
        sys.exit(2)
    return out, partial


def link_deps(syms):
    where = {}
    for m, rows in syms.items():
        for name, t, src in rows:
            if t != "U" and t.isupper():       # defined, global
                where.setdefault(name, (m, src))
    deps = {}
    for m, rows in syms.items():
        for name, t, src in rows:
            if t == "U" and name in where and where[name][0] != m:
                deps.setdefault((m, where[name][0]), []).append((name, src, where[name][1]))
    return deps


def module_order(syms, verbose):
    """Violations of LAYERS, printed; their number."""
    bad = 0
    deps = link_deps(syms)
    for (m, d), uses in sorted(deps.items(), key=lambda kv: (LAYERS.index(kv[0][0]),
                                                             LAYERS.index(kv[0][1]))):
        up = LAYERS.index(d) > LAYERS.index(m)
        if verbose or up:
            names = sorted(set(u[0] for u in uses))
            print("%s%s -> %s: %d symbol(s): %s" % ("ERROR: " if up else "", m, d, len(names),
                                                    ", ".join(names[:6]) +
                                                    (" ..." if len(names) > 6 else "")),
                  file=sys.stderr if up else sys.stdout)
        if up:
            bad += 1
            for name, src, def_src in sorted(uses)[:10]:
                print("  %s uses %s (defined in %s)" % (src, name, def_src), file=sys.stderr)
    return bad


# ---- the three graphs of files ----------------------------------------------------------------

def link_graph(syms, partial):
    """{src: {src2: [symbol...]}}: src uses a global symbol src2 defines."""
    rows = [r for m in LAYERS for r in syms[m] if r[2] not in partial]
    where = {}
    for name, t, src in rows:
        if t != "U" and t.isupper():
            where.setdefault(name, src)
    g = {}
    for name, t, src in rows:
        g.setdefault(src, {})
        if t == "U" and name in where and where[name] != src:
            g[src].setdefault(where[name], []).append(name)
    return g


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def include_graph(root, files):
    """{file: {file2: ['#include "x"' (line N)...]}} over the product's .c and .h files."""
    known = set(files)
    g = {}
    for f in files:
        g.setdefault(f, {})
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                for cand in (os.path.join(os.path.dirname(f), m.group(1)), m.group(1)):  # -I.
                    path = os.path.normpath(cand)
                    if path in known:
                        if path != f:
                            g[f].setdefault(path, []).append('#include "%s" (line %d)' %
                                                             (m.group(1), n))
                        break
    return g


def py_imports(tree, pkg_mods):
    """(module, line) of each import of the package's own modules in a parsed file."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                yield node.module.split(".")[0], node.lineno
            else:  # from . import x: a submodule, or a name of the package's __init__
                for a in node.names:
                    yield (a.name if a.name in pkg_mods else "__init__"), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "stagebench_probe":
            parts = node.module.split(".")
            yield (parts[1] if len(parts) > 1 else "__init__"), node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "stagebench_probe" and len(parts) > 1:
                    yield parts[1], node.lineno


def import_graph(root):
    """{file.py: {file2.py: ['import of x (line N)'...]}} inside PY_PACKAGE."""
    pkg = os.path.join(root, PY_PACKAGE)
    files = sorted(glob.glob(os.path.join(pkg, "*.py")))
    mods = {os.path.basename(f)[:-3]: os.path.relpath(f, root) for f in files}
    g = {}
    for f in files:
        rel = os.path.relpath(f, root)
        g.setdefault(rel, {})
        with open(f, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), rel)
        for mod, line in py_imports(tree, mods):
            if mod in mods and mods[mod] != rel:
                g[rel].setdefault(mods[mod], []).append("import of %s (line %d)" % (mod, line))
    return g


# ---- circles ----------------------------------------------------------------------------------

def circles(g):
    """The strongly connected sets of two or more files of g (Tarjan), each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1:
                    out.append(sorted(scc))
    return sorted(out)


def joined(files, pairs):
    """Whether pairs (within files) join all of files into one group."""
    group = {f: f for f in files}

    def top(f):
        while group[f] != f:
            f = group[f]
        return f
    for a, b in pairs:
        if a in group and b in group:
            group[top(a)] = top(b)
    return len(set(top(f) for f in files)) == 1


def check_circles(graphs, allowed, verbose):
    """Circles not allowed, and allowed pairs in no circle, printed; their number.
    verbose: the allowed circles are printed too."""
    bad, used = 0, set()
    for kind, g in graphs:
        for scc in circles(g):
            inside = [(a, b) for a, b in allowed if a in scc and b in scc]
            used.update(inside)
            if joined(scc, inside):
                if verbose:
                    print("allowed circle of %d files (%s): %s" % (len(scc), kind, " ".join(scc)))
                continue
            bad += 1
            print("ERROR: %d files in a circle (%s): %s" % (len(scc), kind, " ".join(scc)),
                  file=sys.stderr)
            for a in scc:
                for b in sorted(g[a]):
                    if b in scc:
                        what = sorted(set(g[a][b]))
                        print("  %s -> %s: %s%s" % (a, b, ", ".join(what[:3]),
                                                    " ..." if len(what) > 3 else ""),
                              file=sys.stderr)
    for a, b in allowed:
        if (a, b) not in used:
            bad += 1
            print("ERROR: %s and %s are listed in ALLOWED_CIRCLES but are in no circle: "
                  "remove the pair" % (a, b), file=sys.stderr)
    return bad


# ---- the wings of runner/ ----------------------------------------------------------------------

def wing(f):
    """The index in WINGS of file f's wing; None outside runner/."""
    best = None
    for i, w in enumerate(WINGS):
        if f.startswith(w + "/") and "/" not in f[len(w) + 1:]:
            best = i
    return best


def wing_order(graphs, up_arrows, verbose):
    """Arrows up between the wings of runner/ not in up_arrows, and listed pairs that are
    no arrow, printed; their number."""
    bad, used = 0, set()
    for kind, g in graphs:
        for a in sorted(g):
            for b in sorted(g[a]):
                wa, wb = wing(a), wing(b)
                if wa is None or wb is None or wb <= wa:
                    continue
                what = sorted(set(g[a][b]))
                if (a, b) in up_arrows:
                    used.add((a, b))
                    if verbose:
                        print("allowed arrow up (%s): %s -> %s" % (kind, a, b))
                    continue
                bad += 1
                print("ERROR: arrow up between the wings of runner/ (%s): %s (%s) -> %s (%s): %s%s"
                      % (kind, a, WINGS[wa], b, WINGS[wb], ", ".join(what[:3]),
                         " ..." if len(what) > 3 else ""), file=sys.stderr)
    for a, b in up_arrows:
        if (a, b) not in used:
            bad += 1
            print("ERROR: %s -> %s is listed in UP_ARROWS but is no arrow up: remove the pair"
                  % (a, b), file=sys.stderr)
    return bad


# ---- the cli/ include rule --------------------------------------------------------------------

def cli_includes(root, files):
    """Sources outside cli/ (and tests/) that include a cli/ header."""
    bad = []
    for f in files:
        if f.startswith(("cli/", "tests/")):
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                path = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
                if m.group(1).startswith("cli/") or path.startswith("cli/"):
                    bad.append("%s:%d: includes %s" % (f, n, m.group(1)))
    return bad


def parse_args(argv):
    """(verbose, root, allowed, up, build), or None for usage."""
    verbose, root, allowed, up, args = False, None, [], [], []
    it = iter(argv)
    for a in it:
        if a == "-v":
            verbose = True
        elif a in ("--root", "--allow", "--up"):
            v = next(it, None)
            if v is None:
                return None
            if a == "--root":
                root = os.path.abspath(v)
            elif v.count(",") == 1:
                (allowed if a == "--allow" else up).append(tuple(v.split(",")))
            else:
                return None
        else:
            args.append(a)
    if len(args) != 1 or args[0].startswith("-"):
        return None
    if root is None:
        allowed += ALLOWED_CIRCLES
        up += UP_ARROWS
    return verbose, root or REPO, allowed, up, args[0]


def main(argv):
    opts = parse_args(argv)
    if opts is None:
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    verbose, root, allowed, up, build = opts
    syms, partial = symbols(root, build)
    empty = [m for m in LAYERS if not syms[m]]
    if empty:
        print("check-layers: no objects for %s under %s (build first)" % (", ".join(empty), build),
              file=sys.stderr)
        return 2
    bad = module_order(syms, verbose)
    c_files = [f for f in sources(root, (".c", ".h")) if f.split("/")[0] in LAYERS]
    links, includes = link_graph(syms, partial), include_graph(root, c_files)
    bad += check_circles([("link", links), ("include", includes),
                          ("import", import_graph(root))], allowed, verbose)
    bad += wing_order([("link", links), ("include", includes)], up, verbose)
    for line in cli_includes(root, [f for f in sources(root, (".c", ".h"))]):
        print("ERROR: %s (only cli/ may see the command table and option helpers)" % line,
              file=sys.stderr)
        bad += 1
    if bad:
        print("check-layers: %d violation(s) of the order %s or circles of files "
              "(docs/architecture.md)" % (bad, " < ".join(LAYERS)), file=sys.stderr)
        return 1
    if verbose:
        print("order: " + " < ".join(LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
