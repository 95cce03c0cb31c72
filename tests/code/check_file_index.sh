#!/bin/sh
# check_file_index.sh -- scripts/check-file-index.py on a tiny tree of its own: every source
# file named under its folder's heading passes (a .c and its .h in one row, a script known by
# its #! line); a file no row names, a folder without a heading and a row naming a file that is
# not there fail, each named; other kinds of file and other folders are not read.  Run by
# `make code-checks`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CHECK=$here/../../scripts/check-file-index.py
. "$here/check.inc"

# expect RC WHAT [WORD...]: the check exits RC and its stderr holds every WORD
expect() { expect_check "$CHECK" "$@"; }

mkdir -p "$T/docs" "$T/runner/compare" "$T/scripts" "$T/tests/unit"
for f in runner/compare/campaign.c runner/compare/campaign.h runner/spawn.c tests/unit/test_x.c; do
	echo '/* x */' >"$T/$f"
done
printf '#!/bin/sh\n' >"$T/scripts/slurm-compare"
echo 'notes' >"$T/scripts/requirements.txt"
cat >"$T/docs/architecture.md" <<'MD'
# Architecture

## Every file

### `runner/`

| file | its job |
|---|---|
| `spawn.c` | start a command |

### `runner/compare/`

| file | its job |
|---|---|
| `campaign.c`, `campaign.h` | the campaign |

### `scripts/`

| file | its job |
|---|---|
| `slurm-compare` | compare as a job array |

## The checks
MD
expect 0 "every file named under its folder passes (tests/ and a .txt are not read)"

echo '/* y */' >"$T/runner/compare/report.c"
expect 1 "a file no row names fails" "\`runner/compare/\` does not name runner/compare/report.c"
sed -i 's/^| `campaign.c`, `campaign.h` |/| `campaign.c`, `campaign.h` | the campaign |\n| `report.c` |/' "$T/docs/architecture.md"
expect 0 "its row added, it passes"

mkdir -p "$T/runner/record"
echo '/* z */' >"$T/runner/record/record.c"
expect 1 "a folder without a heading fails" "no section for \`runner/record/\` (its files: record.c)"
rm -r "$T/runner/record"

rm "$T/runner/spawn.c"
expect 1 "a row naming a file that is not there fails" "names runner/spawn.c, which is not there"
echo '/* x */' >"$T/runner/spawn.c"
expect 0 "the tree passes again"

[ "$fail" = 0 ] && echo "check-file-index tests: all passed"
exit "$fail"
