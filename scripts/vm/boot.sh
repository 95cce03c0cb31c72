#!/bin/sh
# boot.sh -- start the guest in the background and wait until its sshd answers. The guest
# writes to a fresh qcow2 overlay over the image (run/overlay.qcow2), so the image stays as
# image.sh made it. qemu runs under TCG (-accel tcg,thread=multi -cpu max): software, so a
# machine whose KVM cannot run a stock Debian kernel runs it too (SB_VM_ACCEL=kvm for KVM).
# A boot whose sshd never answers within SB_VM_BOOT_TIMEOUT s (a guest kernel can oops early
# under TCG) is killed and tried once more, and the second try says so. Prints the time.
# Stop it with scripts/vm/down.sh.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/vm/lib.sh
. "$here/lib.sh"
[ -s "$vm_img" ] || { echo "boot.sh: no image $vm_img: run scripts/vm/image.sh" >&2; exit 2; }
case ${SB_VM_ACCEL:-tcg} in
kvm) accel="-accel kvm -cpu host" ;;
*) accel="-accel tcg,thread=multi,tb-size=512 -cpu max" ;;
esac
mkdir -p "$vm_run"
vm_alive && "$here/down.sh"
rm -f "$vm_run"/console-*.log

# try N: one boot; 0 once sshd answers, 1 when qemu died or the time ran out
try() {
	rm -f "$vm_run/overlay.qcow2" "$vm_run/qemu.pid"
	qemu-img create -q -f qcow2 -b "$vm_img" -F raw "$vm_run/overlay.qcow2"
	t0=$(date +%s)
	# shellcheck disable=SC2086 # the accelerator's options are words
	qemu-system-x86_64 $accel -smp "$vm_cpus" -m "$vm_mem" -nodefaults -no-user-config \
		-display none -daemonize -pidfile "$vm_run/qemu.pid" -serial "file:$vm_run/console-$1.log" \
		-monitor "unix:$vm_run/monitor.sock,server,nowait" -kernel "$vm_kernel" -initrd "$vm_initrd" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1" -no-reboot \
		-drive "file=$vm_run/overlay.qcow2,if=virtio,format=qcow2,cache=unsafe" \
		-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$vm_port-:22" \
		-device virtio-net-pci,netdev=n0 -device virtio-rng-pci
	while ! vm_ssh root true 2>/dev/null; do
		if ! vm_alive; then
			vm_say "boot $1: qemu ended after $(($(date +%s) - t0)) s; the console's end:"
			tail -15 "$vm_run/console-$1.log" >&2
			return 1
		fi
		if [ $(($(date +%s) - t0)) -ge "$vm_boot_timeout" ]; then
			vm_say "boot $1: no sshd after $vm_boot_timeout s; the console's end:"
			tail -15 "$vm_run/console-$1.log" >&2
			"$here/down.sh"
			return 1
		fi
		sleep 3
	done
	vm_say "guest up: sshd answered $(($(date +%s) - t0)) s after qemu started (boot $1, $vm_cpus vCPUs, $vm_mem)"
}
vm_say "booting the Debian 13 guest (${SB_VM_ACCEL:-tcg})"
try 1 && exit 0
vm_say "the first boot failed: trying once more"
try 2 && { vm_say "note: the guest came up on the second boot"; exit 0; }
echo "boot.sh: the guest did not come up in two boots (consoles: $vm_run/console-*.log)" >&2
exit 1
