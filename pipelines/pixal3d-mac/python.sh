#!/bin/sh
# python.sh PYTHON PORT SCRIPT ARG... -- run SCRIPT with PYTHON, or (PYTHON empty) with the
# checkout's .venv/bin/python when it has one (PORT, else $PIXAL3D_MAC_DIR, else the current
# directory), else python3. exec: the pipeline keeps this process (and the probe's pipe).
py=$1
port=${2:-${PIXAL3D_MAC_DIR:-.}}
shift 2
if [ -z "$py" ]; then
	if [ -x "$port/.venv/bin/python" ]; then py=$port/.venv/bin/python; else py=python3; fi
fi
exec "$py" "$@"
