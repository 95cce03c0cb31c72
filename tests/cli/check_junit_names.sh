# check --format junit with mode and stage names that hold characters XML 1.0 forbids (valid
# JSON, accepted by the reader): U+FFFE, U+FFFF, a control character. The report stays
# well-formed XML (each such character replaced by '?') and parses.
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
for d in base new; do
	mkdir -p "$d"
	for r in 1 2; do
		w=$((400 + (r - 1) * 10))
		[ "$d" = new ] && w=$((w + 300))
		run 'm\uffff\u0001' "$w" 20 3 c "" "" | sed 's/"stage":"work"/"stage":"w\\ufffe"/' \
			>"$d/x-$r.trace.jsonl"
	done
done
"$SB" check --format junit --baseline base new >report.xml
echo "exit $?"
/usr/bin/python3 - report.xml <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall("./testsuite/testcase")
print("parsed: %d cases" % len(cases))
print("\n".join(sorted(set("%s | %s" % (c.get("classname"), c.get("name")) for c in cases
                            if c.find("failure") is not None))))
PY
