#!/bin/sh
# ssh.sh -- run a command in the running guest, its output and exit status here; stdin goes
# to it. As root by default; -u runs it as the user dev, over its own ssh login: a real login
# session (pam_systemd, XDG_RUNTIME_DIR, its systemd user manager), as a user's terminal is.
# Usage: scripts/vm/ssh.sh [-u] 'COMMAND...'
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/vm/lib.sh
. "$here/lib.sh"
who=root
[ "${1:-}" = -u ] && { who=$vm_user; shift; }
vm_alive || { echo "ssh.sh: no guest runs: start one with scripts/vm/boot.sh" >&2; exit 2; }
vm_ssh "$who" "$@"
