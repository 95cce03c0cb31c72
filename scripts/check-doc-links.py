#!/usr/bin/python3
"""check-doc-links.py -- every relative link of the tree's Markdown files leads somewhere.

Usage: scripts/check-doc-links.py [--root DIR] [FILE.md...]
With no FILE: every tracked *.md of the repository (`git ls-files`, or a walk of the tree when
it is not a git checkout; --root reads another tree, as the script's own test does:
tests/code/check_doc_links.sh). Each link or image `[text](TARGET)` whose TARGET is not a URL
must name a file or directory that exists, relative to the Markdown file; a TARGET with
`#anchor` (or a bare `#anchor`, in the same file) must name a heading of that Markdown file, as
GitHub makes anchors of headings (lower case, punctuation dropped, spaces as dashes, -1, -2 for
repeats). Links inside code blocks and code spans are not links. Not read: tests/fixtures/
(documents copied in as they were, links to their own trees included) and bench/results/ (the
parts of BENCHMARKS.md as bench/run.sh writes them, their links relative to the root). Exit 1
naming FILE:LINE, the target and what is missing.
"""
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXCLUDE = ("tests/fixtures/", "bench/results/")
_spec = importlib.util.spec_from_file_location(
    "check_function_length", os.path.join(ROOT, "scripts", "check-function-length.py"))
_fl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fl)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_files(root):
    files = [f for f in _fl.tree_files(root) if f.endswith(".md")]
    return sorted(f for f in files if os.path.isfile(os.path.join(root, f)) and not f.startswith(EXCLUDE))


def prose_lines(text, spans=False):
    """(line number, line) outside fenced code blocks, with code spans blanked unless spans."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, line if spans else re.sub(r"`[^`]*`", lambda c: " " * len(c.group(0)), line)


def slug(heading):
    h = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        with open(path, encoding="utf-8", errors="replace") as f:
            for _, line in prose_lines(f.read(), spans=True):
                m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    s = slug(m.group(1))
                    k = seen.get(s, 0)
                    seen[s] = k + 1
                    out.add(s if k == 0 else "%s-%d" % (s, k))
        cache[path] = out
    return cache[path]


def check(root, rel):
    bad = []
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue                                   # a URL, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                bad.append("%s:%d: %s: no such file or directory" % (rel, n, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("%s:%d: %s: %s has no heading for #%s" % (
                    rel, n, target, os.path.relpath(dest, root), anchor))
    return bad


def main(argv):
    root, files = ROOT, []
    it = iter(argv)
    for a in it:
        if a == "--root":
            root = os.path.abspath(next(it, "."))
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            files.append(a)
    bad = []
    for rel in files or markdown_files(root):
        bad += check(root, rel)
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print("check-doc-links: %d link(s) lead nowhere" % len(bad), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
