# shellcheck shell=sh
# lib.sh -- settings and helpers of the Debian 13 guest that make test-vm boots under qemu
# (scripts/vm/*.sh, tests/vm/run.sh). Sourced, never run. Each setting can be overridden from
# the environment:
#   SB_VM_DIR     the image, its kernel, initrd and ssh key (cached: remade only when the
#                 inputs change) and the running guest's files under run/
#                 (default ${XDG_CACHE_HOME:-~/.cache}/stagebench/vm)
#   SB_MIRROR     the Debian mirror (default http://deb.debian.org/debian, as scripts/lib-root.sh)
#   SB_VM_CPUS SB_VM_MEM SB_VM_PORT SB_VM_BOOT_TIMEOUT
vm_dir=${SB_VM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/stagebench/vm}
vm_mirror=${SB_MIRROR:-http://deb.debian.org/debian}
vm_security=$(echo "$vm_mirror" | sed 's#/debian/*$#/debian-security#')
vm_suite=trixie
vm_cpus=${SB_VM_CPUS:-2}
vm_mem=${SB_VM_MEM:-6G}
vm_port=${SB_VM_PORT:-10022}
vm_boot_timeout=${SB_VM_BOOT_TIMEOUT:-300}
vm_user=dev
vm_img=$vm_dir/debian-13.img
vm_kernel=$vm_dir/vmlinuz
vm_initrd=$vm_dir/initrd.img
vm_key=$vm_dir/id_ed25519
vm_run=$vm_dir/run
vm_ssh_opts="-i $vm_key -p $vm_port -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
 -o LogLevel=ERROR -o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=30"

vm_say() { echo "vm: [$(date +%H:%M:%S)] $*" >&2; }

# vm_ssh WHO COMMAND...: COMMAND in the guest as WHO (root, or the user: its own ssh login, a
# real login session with pam_systemd, XDG_RUNTIME_DIR and its systemd user manager)
vm_ssh() {
	_who=$1
	shift
	# shellcheck disable=SC2086 # the options are words
	ssh $vm_ssh_opts "$_who@127.0.0.1" "$@"
}

# vm_alive: the guest's qemu runs
vm_alive() { [ -s "$vm_run/qemu.pid" ] && kill -0 "$(cat "$vm_run/qemu.pid")" 2>/dev/null; }
