# Device-memory readings timed before the run's start or long after its end (a probe's clock,
# a hostile line) are dropped with a warning: the last stage is not stretched to 27 hours, and
# analyze and table give what they give for the trace without those lines (ref/).
# exit: 0
cd "$TMP" || exit 99
mkdir cut ref
run() { # run WITH_STRAYS: a staged run, setup 0-10 s, work 10-20 s, devmem on the interval
	printf '{"type":"start","format":"stagebench/1","mode":"staged","interval":1}\n'
	[ "$1" = 1 ] && printf '{"type":"sample","t":-5,"devmem":9663676416}\n'
	printf '{"type":"sample","t":0.5,"footprint":209715200}\n'
	printf '{"type":"sample","t":1,"devmem":104857600}\n'
	printf '{"type":"event","kind":"stage","stage":"work","t":10}\n'
	printf '{"type":"sample","t":12,"footprint":734003200}\n'
	printf '{"type":"sample","t":15,"devmem":524288000}\n'
	printf '{"type":"sample","t":19.5,"footprint":314572800}\n'
	[ "$1" = 1 ] && printf '{"type":"sample","t":99999,"devmem":8589934592}\n'
	printf '{"type":"sample","t":20.5,"devmem":209715200}\n'
	[ "$2" = end ] && printf '{"type":"end","exit":0,"wall":21}\n'
	return 0
}
for end in end killed; do
	echo "--- a run that $([ $end = end ] && echo ended || echo was killed: no end record)"
	run 1 $end >cut/staged-1.trace.jsonl
	run 0 $end >ref/staged-1.trace.jsonl
	"$SB" analyze cut/staged-1.trace.jsonl >a.cut 2>a.err
	echo "analyze: exit $?"
	"$SB" analyze ref/staged-1.trace.jsonl | sed 's|ref/|cut/|' | cmp -s - a.cut && echo "the same as without the two lines"
	cat a.err
	"$SB" table cut/staged-1.trace.jsonl 2>/dev/null | sed 's|cut/|ref/|' >t.cut
	"$SB" table ref/staged-1.trace.jsonl | cmp -s - t.cut && echo "table: the same as without the two lines"
done
echo "--- analyze"
cat a.cut
