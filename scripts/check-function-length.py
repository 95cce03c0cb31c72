#!/usr/bin/python3
"""check-function-length.py -- no function outside tests over MAX lines (default 100), in C,
Python and shell.

Usage: scripts/check-function-length.py [--max N] [--list] [--root DIR] [FILE...]
With no FILE: every tracked source of the repository except tests/ (the product, its
fuzzers, bench programs, the C probe header, the Python probe, the scripts), found with
`git ls-files`, or by walking the tree when it is not a git checkout (--root reads another
tree: the script's own test, tests/code/check_lengths.sh). A file is C by its name (*.c,
*.h), Python (*.py) or shell (*.sh) by its name, or Python or shell by its first line
(`#!/usr/bin/python3`, `#!/bin/sh`, `#!/bin/bash`: scripts/slurm-compare, .ci/run).

C: a function's length is counted from the line its definition starts on (the
first line of the declarator: return type and name) to the line of its closing
brace, both included -- what `ctags --fields=+ne` reports as line..end. The
scanner drops comments, string and character literals and preprocessor lines,
then takes each top-level `{` whose head (the text since the last top-level
`;`, `}` or preprocessor line) has a parameter list and no `=` as a function
body.

Python: each `def` (methods and nested functions too, each counted whole), from its `def`
line to its last line, as Python's own parser (ast) gives them.

Shell: each `NAME() {` (or `function NAME {`, or a body `(` ... `)`), from that line to the
first line after it that closes the body at the same indentation (`}` or `)`, which may be
followed by redirections), the way the tree writes functions; a body opened and closed on
one line is one line.

Exit 1 naming FILE:LINE name (N lines) for each one over the limit; --list prints every
function with its length.
"""
import ast
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXCLUDE = ("tests/",)


LANG_EXT = {".c": "c", ".h": "c", ".py": "python", ".sh": "shell"}
SHEBANG = re.compile(r"#!\s*\S*?(?:/env\s+)?(?:/|\s)?(python3?|sh|bash|dash)\b")


def language(path):
    """'c', 'python', 'shell' or None for a file the check does not read."""
    ext = os.path.splitext(path)[1]
    if ext in LANG_EXT:
        return LANG_EXT[ext]
    if ext:
        return None
    try:
        with open(path, "rb") as f:
            first = f.readline(200).decode("utf-8", "replace")
    except OSError:
        return None
    m = SHEBANG.match(first)
    if not m:
        return None
    return "python" if m.group(1).startswith("python") else "shell"


def tree_files(root=ROOT):
    """Every file of the tree (relative paths): `git ls-files`, or a walk when root is not a
    git checkout (build directories and dot-directories but .ci/ left out)."""
    try:
        r = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
        out = r.stdout.split("\n") if r.returncode == 0 else []
    except OSError:
        out = []
    if not any(out):
        out = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x == ".ci" or not (x.startswith(".") or x.startswith("build"))]
            out += [os.path.relpath(os.path.join(d, f), root) for f in files]
    return [f for f in out if f]


def sources(root=ROOT):
    """The tree's sources (relative paths) outside tests/, each with its language."""
    out = tree_files(root)
    found = []
    for f in sorted(out):
        path = os.path.join(root, f)
        if f and not f.startswith(EXCLUDE) and os.path.isfile(path):
            lang = language(path)
            if lang:
                found.append((f, lang))
    return found


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


def python_functions(path):
    """(name, first line, last line) of each def of a Python file (ast), or a parse error."""
    with open(path, encoding="utf-8", errors="replace") as f:
        tree = ast.parse(f.read(), filename=path)
    return [(n.name, n.lineno, n.end_lineno) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


SH_DEF = re.compile(r"^(\s*)(?:function\s+([A-Za-z_][\w-]*)\s*(?:\(\s*\))?|([A-Za-z_][\w-]*)\s*\(\s*\))"
                    r"\s*([{(])(.*)$")


def shell_functions(path):
    """(name, first line, last line) of each function of a shell script."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    found, i = [], 0
    while i < len(lines):
        m = SH_DEF.match(lines[i])
        if not m:
            i += 1
            continue
        indent, name, opener, rest = m.group(1), m.group(2) or m.group(3), m.group(4), m.group(5)
        closer = "}" if opener == "{" else ")"
        body = rest.split(" #")[0].rstrip()
        if body.endswith(closer) or re.search(r"[;&]\s*\%s(\s|$)" % closer, body):
            found.append((name, i + 1, i + 1))        # one line: NAME() { ...; }
            i += 1
            continue
        end = re.compile(r"^%s\%s(\s|;|\||&|>|<|$)" % (re.escape(indent), closer))
        j = i + 1
        while j < len(lines) and not end.match(lines[j]):
            j += 1
        found.append((name, i + 1, min(j, len(lines) - 1) + 1))
        i = j + 1
    return found


FUNCTIONS = {"c": functions, "python": python_functions, "shell": shell_functions}


def main(argv):
    limit, listing, files, root = 100, False, [], ROOT
    it = iter(argv)
    for a in it:
        if a == "--max":
            limit = int(next(it))
        elif a == "--list":
            listing = True
        elif a == "--root":
            root = os.path.abspath(next(it))
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            files.append(a)
    if files:
        files = [(f, language(f if os.path.isabs(f) else os.path.join(root, f))) for f in files]
    else:
        files = sources(root)
    bad = 0
    for rel, lang in files:
        path = rel if os.path.isabs(rel) else os.path.join(root, rel)
        if not lang:
            print("%s: not C, Python or shell (by its name or its #! line)" % rel, file=sys.stderr)
            return 2
        try:
            defs = FUNCTIONS[lang](path)
        except SyntaxError as e:
            print("%s:%s: cannot parse as Python: %s" % (rel, e.lineno, e.msg), file=sys.stderr)
            return 2
        for name, first, last in defs:
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
