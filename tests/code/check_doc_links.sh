#!/bin/sh
# check_doc_links.sh -- scripts/check-doc-links.py on a tiny tree of its own: links to files,
# directories and headings (a heading with a code span, a repeated one) pass; a link to a
# missing file or a missing heading fails, naming the file and line; links in code blocks and
# code spans, and URLs, are not followed; tests/fixtures/ is not read.  Run by `make code-checks`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CHECK=$here/../../scripts/check-doc-links.py
. "$here/check.inc"

# expect RC WHAT [WORD...]: the check exits RC and its stderr holds every WORD
expect() { expect_check "$CHECK" "$@"; }

mkdir -p "$T/docs/demo" "$T/tests/fixtures"
: >"$T/docs/demo/memory.png"
cat >"$T/docs/guide.md" <<'MD'
# Using it

## How `check` tells a change from noise

## Commands

## Commands
MD
cat >"$T/README.md" <<'MD'
# Title

See [the guide](docs/guide.md), [how check judges](docs/guide.md#how-check-tells-a-change-from-noise),
[the second Commands](docs/guide.md#commands-1), [demo](docs/demo/) and [here](#title).

![memory](docs/demo/memory.png) and [the web](https://example.org/x.md).

```
[not a link](nowhere.md)
```
and `[nor this](nowhere.md)`.
MD
printf '[outside](../../nowhere.md)\n' >"$T/tests/fixtures/README.md"
expect 0 "files, directories, headings (a code span, a repeat) and URLs pass; fixtures are not read"

printf '[gone](docs/gone.md)\n' >>"$T/README.md"
expect 1 "a link to a missing file fails" "README.md:12: docs/gone.md: no such file or directory"
sed -i '$d' "$T/README.md"
printf '![chart](docs/demo/stages.png)\n' >>"$T/README.md"
expect 1 "an image that is missing fails" "README.md:12: docs/demo/stages.png: no such file"
sed -i '$d' "$T/README.md"
printf '[moved](guide.md#installing)\n' >>"$T/docs/guide.md"
expect 1 "a link to a missing heading fails" \
	"docs/guide.md:8: guide.md#installing: docs/guide.md has no heading for #installing"
printf '\n## Installing\n' >>"$T/docs/guide.md"
expect 0 "the heading added, it passes"
printf '[self](#nowhere)\n' >>"$T/README.md"
expect 1 "a missing heading of the same file fails" "README.md:12: #nowhere: README.md has no heading"
sed -i '$d' "$T/README.md"
expect 0 "the tree passes again"

[ "$fail" = 0 ] && echo "check-doc-links tests: all passed"
exit "$fail"
