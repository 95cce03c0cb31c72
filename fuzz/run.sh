#!/bin/sh
# run.sh -- run the libFuzzer harnesses (built by `make fuzz-build` into DIR)
#
# Usage: fuzz/run.sh DIR runs N       each harness for N executions (make test)
#        fuzz/run.sh DIR time SECONDS each harness for SECONDS (make fuzz)
#        FUZZ_ONLY="trace npy" fuzz/run.sh ...   only those harnesses
# The corpus of each harness is DIR/corpus/NAME: seeded from tests/fixtures,
# demo/pipeline.json and fuzz/seeds/ (kept between runs; new inputs the fuzzer
# finds accumulate there). A finding stops with exit 1 and leaves the input
# in DIR/findings/. Prints, per harness, the executions done without a finding.
set -eu
dir=$1 mode=$2 n=$3
root=$(cd "$(dirname "$0")/.." && pwd)
case $mode in
runs) limit="-runs=$n" ;;
time) limit="-max_total_time=$n" ;;
*) echo "usage: $0 DIR runs N | DIR time SECONDS" >&2; exit 2 ;;
esac
mkdir -p "$dir/findings"

seed() { # NAME FILE... : copy seeds into the corpus (the fixtures' names kept apart)
	name=$1; shift
	mkdir -p "$dir/corpus/$name"
	for f in "$@"; do
		[ -f "$f" ] || continue
		cp "$f" "$dir/corpus/$name/seed-$(echo "$f" | tr '/' '_')"
	done
}
traces=$(find "$root/tests/fixtures" "$root/fuzz/seeds/trace" -name '*.trace.jsonl' | sort)
seed trace $traces
seed summary $traces
mkdir -p "$dir/corpus/trace_zstd"
for f in $traces; do # a control byte first: one frame, whole
	printf '\000' | cat - "$f" >"$dir/corpus/trace_zstd/seed-$(echo "$f" | tr '/' '_')"
done
seed probe_line "$root"/fuzz/seeds/probe_line/*
seed devmem "$root"/fuzz/seeds/devmem/* "$root"/fuzz/seeds/probe_line/*
seed campaign "$root"/fuzz/seeds/campaign/*
seed npy "$root"/fuzz/seeds/npy/*
seed pipeline "$root"/demo/pipeline.json $(find "$root/pipelines" -name '*.json' 2>/dev/null || true)
seed runs $(find "$root/tests/fixtures" "$root/fuzz/seeds/runs" -name '*.json' -path '*runs*')
seed runs_d $(find "$root/tests/fixtures" "$root/fuzz/seeds/runs" -name '*.json' -path '*runs*')
mkdir -p "$dir/corpus/history"
for f in $traces; do # the first byte says where the input is cut in two traces: here, whole in c1
	printf '\377' | cat - "$f" >"$dir/corpus/history/seed-$(echo "$f" | tr '/' '_')"
done

total=0
for h in ${FUZZ_ONLY:-trace trace_zstd summary probe_line devmem npy pipeline runs runs_d campaign history}; do
	bin=$dir/fuzz_$h
	log=$dir/fuzz_$h.log
	# stderr of the code under test (its error messages) is closed; libFuzzer
	# and the sanitizers report on their own copy of it
	if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
		"$bin" -close_fd_mask=2 -max_len=${FUZZ_MAX_LEN:-8192} -rss_limit_mb=2048 -timeout=10 \
		-artifact_prefix="$dir/findings/$h-" -print_final_stats=1 $limit \
		"$dir/corpus/$h" >"$log" 2>&1; then
		echo "fuzz: $h: FINDING (see $log and $dir/findings/)" >&2
		tail -40 "$log" >&2
		exit 1
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	echo "  FUZZ    $h: ${execs:-?} executions, no finding"
	total=$((total + ${execs:-0}))
done
echo "  FUZZ    all: $total executions, no finding"
