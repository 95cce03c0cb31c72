#!/usr/bin/python3
"""check-file-index.py -- docs/architecture.md names every source file, and only files that exist.

Usage: scripts/check-file-index.py [--root DIR] [--list]
The sources are every tracked C, Python and shell file (by name, or by its #! line: what
scripts/check-function-length.py reads) under the tool's folders (common/ platform/ traces/
meter/ analyze/ plots/ runner/ cli/), the probe (probe/) and scripts/. docs/architecture.md's
section "Every file" has a heading per folder ("### `runner/record/`") over a table whose first
cell names the folder's files (`record.c`, `record.h`). A source file no row of its folder
names fails; so does a named file that is not there (a row left after a file was removed or
renamed), and a folder with sources but no heading. --root reads another tree (the script's
own test, tests/code/check_file_index.sh); --list prints each folder with its files.
"""
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPS = ("common", "platform", "traces", "meter", "analyze", "plots", "runner", "cli", "probe",
        "scripts")
DOC = "docs/architecture.md"
_spec = importlib.util.spec_from_file_location(
    "check_function_length", os.path.join(ROOT, "scripts", "check-function-length.py"))
_fl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fl)


def index(path):
    """{folder: {name: line}} from the doc's folder headings and the first cells of their rows."""
    folders, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            h = re.match(r"#{2,6}\s+`([^`]+)/`\s*$", line)
            if h:
                cur = folders.setdefault(h.group(1), {})
                continue
            if line.startswith("#"):
                cur = None
            elif cur is not None and line.startswith("|"):
                cell = line.split("|")[1]
                for name in re.findall(r"`([^`]+)`", cell):
                    cur[name] = n
    return folders


def main(argv):
    root, listing = ROOT, False
    it = iter(argv)
    for a in it:
        if a == "--root":
            root = os.path.abspath(next(it, "."))
        elif a == "--list":
            listing = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    doc = os.path.join(root, DOC)
    if not os.path.isfile(doc):
        print("check-file-index: no %s" % DOC, file=sys.stderr)
        return 1
    folders = index(doc)
    sources = {}
    for f, _ in _fl.sources(root):
        if f.split("/")[0] in TOPS:
            sources.setdefault(os.path.dirname(f), set()).add(os.path.basename(f))
    bad = []
    for d in sorted(sources):
        if d not in folders:
            bad.append("%s: no section for `%s/` (its files: %s)" % (DOC, d, ", ".join(sorted(sources[d]))))
            continue
        for name in sorted(sources[d] - set(folders[d])):
            bad.append("%s: `%s/` does not name %s/%s: add a row with its job" % (DOC, d, d, name))
    for d in sorted(folders):
        for name, n in sorted(folders[d].items()):
            if not os.path.exists(os.path.join(root, d, name)):
                bad.append("%s:%d: names %s/%s, which is not there" % (DOC, n, d, name))
    if listing:
        for d in sorted(folders):
            print("%s/ %s" % (d, " ".join(sorted(folders[d]))))
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
