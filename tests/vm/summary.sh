#!/bin/sh
# summary.sh -- the table that ends make test-vm, from the contexts' logs (tests/vm/run.sh):
# per context, the reader it expects and the one its trace says ran, each case's result and
# its seconds; then every FAIL and SKIP with its words and context. Exit 1 when a case
# failed, or a context that was run gave no results (the guest's ssh dropped, say).
# Usage: tests/vm/summary.sh LOGDIR "$(contexts table of run.sh)"
set -u
logs=$1
printf '%s\n' "$2" | while read -r name expect _; do
	[ -s "$logs/$name.log" ] || continue
	cat "$logs/$name.log"
	grep -q "^vm-result $name " "$logs/$name.log" || echo "vm-result $name (all) FAIL 0 no results (exit $(awk '$1 == "vm-exit" { print $3 }' "$logs/$name.log"))"
done | awk -v table="$2" '
BEGIN {
	n = split(table, rows, "\n")
	for (i = 1; i <= n; i++) { split(rows[i], f, " "); order[i] = f[1]; want[f[1]] = f[2] }
	ncases = split("reader sharers spikes cgroup compare", cases, " ")
}
$1 == "vm-reader" { got[$2] = $3 }
$1 == "vm-result" {
	seen[$2] = 1
	res[$2, $3] = $4 " " $5 "s"
	if ($4 != "ok") {
		w = $0; sub(/^vm-result [^ ]+ [^ ]+ [^ ]+ [^ ]+ ?/, "", w)
		notes[++nn] = sprintf("  %-4s %s %s: %s", $4, $2, $3, w)
	}
	if ($4 == "FAIL") bad = 1
}
END {
	printf "\ntest-vm: %-15s %-12s %-12s", "context", "expects", "reader ran"
	for (c = 1; c <= ncases; c++) printf " %-11s", cases[c]
	printf "\n"
	for (i = 1; i <= n; i++) {
		x = order[i]
		if (!(x in seen)) continue
		printf "test-vm: %-15s %-12s %-12s", x, want[x], (x in got) ? got[x] : "?"
		for (c = 1; c <= ncases; c++) printf " %-11s", ((x, cases[c]) in res) ? res[x, cases[c]] : "-"
		printf "\n"
	}
	for (i = 1; i <= nn; i++) print notes[i]
	print bad ? "test-vm: FAIL" : "test-vm: ok"
	exit bad
}'
