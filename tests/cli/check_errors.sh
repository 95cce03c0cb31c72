# check: usage errors exit 2; a missing directory, one without traces, a garbage trace or an
# unreadable latent copy exit 3 naming the path, with nothing on stdout.
# exit: 0
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
mkdir empty
"$SB" check new 2>/dev/null; echo "no --baseline: $?"
"$SB" check --baseline base 2>/dev/null; echo "no RUN_DIR: $?"
"$SB" check --baseline base new new2 2>/dev/null; echo "two RUN_DIRs: $?"
"$SB" check --baseline base --format xml new 2>/dev/null; echo "bad format: $?"
"$SB" check --baseline base --max-growth lots new 2>/dev/null; echo "bad --max-growth: $?"
"$SB" check --baseline base --max-time-growth -3s new 2>/dev/null; echo "bad --max-time-growth: $?"
"$SB" check --baseline base --bogus new 2>/dev/null; echo "bad option: $?"
"$SB" check --baseline 2>/dev/null; echo "option without value: $?"
"$SB" check --help | head -n 1; echo "help: $?"
"$SB" check --baseline base missing >out 2>err; echo "missing dir: $? (stdout $(wc -c <out) bytes)"; cat err
"$SB" check --baseline empty new >out 2>err; echo "no traces: $? (stdout $(wc -c <out) bytes)"; cat err
"$SB" check --baseline base base/runs.json >out 2>err; echo "not a directory: $?"; cat err
mkdir garbage
printf '{"type":"start","mode":"staged"}\n{"type":"sample","t":1,"footprint":12}\nnot json\n' >garbage/staged-1.trace.jsonl
"$SB" check --baseline base garbage >out 2>err; echo "garbage trace: $? (stdout $(wc -c <out) bytes)"; cat err
printf 'not json' >new2/runs.json
"$SB" check --baseline base new2 >out 2>err; echo "bad runs.json: $?"
rm new2/runs.json new/l/z2.npy
"$SB" check --baseline base new >out 2>err; echo "latent copy gone: $? (stdout $(wc -c <out) bytes)"; cat err
