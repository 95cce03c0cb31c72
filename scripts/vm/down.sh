#!/bin/sh
# down.sh -- power the guest off (systemctl poweroff over ssh; then qemu's monitor; then
# SIGKILL) and remove its overlay. Does nothing when no guest runs; always ends with none.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/vm/lib.sh
. "$here/lib.sh"
if vm_alive; then
	pid=$(cat "$vm_run/qemu.pid")
	vm_ssh root 'systemctl poweroff' >/dev/null 2>&1 </dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	if kill -0 "$pid" 2>/dev/null; then
		python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"quit\n")' \
			"$vm_run/monitor.sock" 2>/dev/null || true
		sleep 2
	fi
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
	vm_say "guest down"
fi
rm -f "$vm_run/qemu.pid" "$vm_run/overlay.qcow2" "$vm_run/monitor.sock"
