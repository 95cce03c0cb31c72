# check --format junit on the hand-written runs of check_md: a test case per mode x stage x
# metric judged, a failure per regression, skipped for "not judged"; the XML parses, and its
# counts agree with its cases.
# exit: 0
cd "$TMP" || exit 99
. "$OLDPWD/check_runs.inc"
make_runs
"$SB" check --format junit --baseline base new >report.xml
echo "exit $?"
cat report.xml
/usr/bin/python3 - report.xml <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites"
cases = root.findall("./testsuite/testcase")
fails = [c for c in cases if c.find("failure") is not None]
skips = [c for c in cases if c.find("skipped") is not None]
assert int(root.get("tests")) == len(cases) and int(root.get("failures")) == len(fails)
assert int(root.get("skipped")) == len(skips)
for s in root.findall("testsuite"):
    assert int(s.get("tests")) == len(s.findall("testcase"))
print("parsed: %d cases, %d failures, %d skipped" % (len(cases), len(fails), len(skips)))
print("failed: " + ", ".join(sorted("%s %s" % (c.get("classname"), c.get("name")) for c in fails)))
PY
