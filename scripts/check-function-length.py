#!/usr/bin/python3
"""check-function-length.py -- no C function outside tests over MAX lines (default 100).

Usage: scripts/check-function-length.py [--max N] [--list] [FILE...]
With no FILE: every tracked *.c and *.h of the repository except tests/ (the
product, its fuzzers, bench programs and the C probe header), found with
`git ls-files`, or by walking the tree when it is not a git checkout.

A function's length is counted from the line its definition starts on (the
first line of the declarator: return type and name) to the line of its closing
brace, both included -- what `ctags --fields=+ne` reports as line..end. The
scanner drops comments, string and character literals and preprocessor lines,
then takes each top-level `{` whose head (the text since the last top-level
`;`, `}` or preprocessor line) has a parameter list and no `=` as a function
body. Exit 1 naming FILE:LINE name (N lines) for each one over the limit;
--list prints every function with its length.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXCLUDE = ("tests/",)


def sources():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.c", "*.h"], check=True,
                             capture_output=True, text=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d, dirs, files in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(".") and not x.startswith("build")]
            out += [os.path.relpath(os.path.join(d, f), ROOT) for f in files if f.endswith((".c", ".h"))]
    return sorted(f for f in out if f and not f.startswith(EXCLUDE))


def strip(text):
    """Comments, literals and preprocessor lines blanked out; newlines kept (line numbers hold)."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":            # a directive, with its continuation lines
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            out.append(";")                    # ends any head in progress, like a statement
            continue
        line_start = c == "\n"
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + "".join(ch if ch == "\n" else " " for ch in text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


NAME = re.compile(r"([A-Za-z_]\w*)\s*\($")


def functions(path):
    """(name, first line, last line) of each function defined in PATH."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip(f.read())
    found, depth, head, head_line, body = [], 0, "", None, None
    line = 1
    for c in text:
        if c == "\n":
            line += 1
        if depth == 0:
            if c == "{":
                h = " ".join(head.split())
                first = head_line
                head, head_line = "", None
                if re.fullmatch(r'extern\s*"[^"]*"', h):
                    continue                   # extern "C" { ... }: its contents are top level
                depth = 1
                body = None
                if "(" in h and "=" not in h.split("(")[0]:
                    m = NAME.search(h[:h.index("(") + 1])
                    if m:
                        body = (m.group(1), first)
            elif c in ";}":
                head, head_line = "", None
            else:
                if head_line is None and not c.isspace():
                    head_line = line
                head += c
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    if body:
                        found.append((body[0], body[1], line))
                    head, head_line = "", None
    return found


def main(argv):
    limit, listing, files = 100, False, []
    it = iter(argv)
    for a in it:
        if a == "--max":
            limit = int(next(it))
        elif a == "--list":
            listing = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            files.append(a)
    files = files or sources()
    bad = 0
    for rel in files:
        path = rel if os.path.isabs(rel) else os.path.join(ROOT, rel)
        for name, first, last in functions(path):
            n = last - first + 1
            if listing:
                print("%d %s:%d %s" % (n, rel, first, name))
            elif n > limit:
                print("%s:%d: %s is %d lines (at most %d outside tests)" % (rel, first, name, n, limit),
                      file=sys.stderr)
                bad += 1
    if bad:
        print("check-function-length: %d function(s) over %d lines: split them" % (bad, limit),
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
