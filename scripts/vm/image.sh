#!/bin/sh
# image.sh -- the Debian 13 guest of make test-vm: systemd as init (cgroup v2 only, as Debian
# 13 is out of the box), sshd taking the key made here, a user dev (uid 1000) whose systemd
# user manager runs (linger), and only what the cases of tests/vm/ need: python3, numpy and
# torch for the demo, zstd, the binary's libraries, util-linux (unshare). Built with
# mmdebstrap from $SB_MIRROR into an ext4 image (mke2fs -d) under $SB_VM_DIR (scripts/vm/lib.sh);
# remade only when its inputs change: the package list, the mirror, this script, the key.
# The guest reaches no network: qemu forwards only the host's 127.0.0.1:$SB_VM_PORT to its sshd.
# Needs root, mmdebstrap, e2fsprogs, ssh-keygen. FORCE=1 remakes it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/vm/lib.sh
. "$here/lib.sh"
pkgs="systemd systemd-sysv udev dbus dbus-user-session libpam-systemd passwd
linux-image-amd64 initramfs-tools openssh-server iproute2 procps util-linux
python3 python3-numpy python3-torch zstd libzstd1 libjansson4 libssl3t64"
[ "$(id -u)" = 0 ] || { echo "image.sh: needs root (mmdebstrap's root mode, mke2fs -d keeping owners)" >&2; exit 2; }
for t in mmdebstrap mke2fs ssh-keygen; do
	command -v "$t" >/dev/null || { echo "image.sh: $t not found: run 'scripts/deps.sh vm'" >&2; exit 2; }
done
mkdir -p "$vm_dir"
[ -s "$vm_key" ] || ssh-keygen -q -t ed25519 -N '' -C stagebench-vm -f "$vm_key"
stamp=$({ echo "$vm_suite $vm_mirror $pkgs"; cat "$0" "$vm_key.pub"; } | sha256sum | cut -c1-16)
if [ -z "${FORCE:-}" ] && [ -s "$vm_img" ] && [ -s "$vm_kernel" ] && [ -s "$vm_initrd" ] &&
	[ "$(cat "$vm_img.stamp" 2>/dev/null)" = "$stamp" ]; then
	vm_say "image $vm_img is up to date ($stamp)"
	exit 0
fi
t0=$(date +%s)
root=$vm_dir/root.tmp
rm -rf "$root" "$vm_img.tmp"
trap 'rm -rf "$root" "$vm_img.tmp"' EXIT
vm_say "mmdebstrap $vm_suite from $vm_mirror (log: $vm_dir/mmdebstrap.log)"
mmdebstrap --mode=root --variant=apt --include="$(echo $pkgs | tr ' ' ,)" \
	--aptopt='Acquire::Retries "3"' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook='chroot "$1" systemctl enable -q systemd-networkd' \
	--customize-hook='chroot "$1" systemctl mask -q apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer' \
	"$vm_suite" "$root" "deb $vm_mirror $vm_suite main" "deb $vm_mirror $vm_suite-updates main" \
	"deb $vm_security $vm_suite-security main" >"$vm_dir/mmdebstrap.log" 2>&1 ||
	{ tail -30 "$vm_dir/mmdebstrap.log" >&2; exit 1; }

# The machine: its name, its disk, DHCP on qemu's user network (systemd-networkd, enabled
# above, where mmdebstrap's hooks have /proc; the timers that would wake up to do housework
# in the middle of a test are masked there), sshd by key only.
echo sbvm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 sbvm\n' >"$root/etc/hosts"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$root/etc/fstab"
mkdir -p "$root/etc/systemd/network"
printf '[Match]\nName=en*\n[Network]\nDHCP=yes\n' >"$root/etc/systemd/network/20-vm.network"
printf 'PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n' \
	>"$root/etc/ssh/sshd_config.d/stagebench-vm.conf"
# The user, its manager kept running (linger), and the key for both.
chroot "$root" useradd -m -u 1000 -s /bin/sh "$vm_user"
mkdir -p "$root/var/lib/systemd/linger"
: >"$root/var/lib/systemd/linger/$vm_user"
for h in root "home/$vm_user"; do
	install -d -m 700 "$root/$h/.ssh"
	install -m 600 "$vm_key.pub" "$root/$h/.ssh/authorized_keys"
done
chroot "$root" chown -R "$vm_user:$vm_user" "/home/$vm_user/.ssh"

cp "$(ls "$root"/boot/vmlinuz-* | sort -V | tail -1)" "$vm_kernel"
cp "$(ls "$root"/boot/initrd.img-* | sort -V | tail -1)" "$vm_initrd"
mke2fs -q -t ext4 -L root -d "$root" "$vm_img.tmp" 12G
mv "$vm_img.tmp" "$vm_img"
echo "$stamp" >"$vm_img.stamp"
vm_say "image $vm_img made in $(($(date +%s) - t0)) s ($(du -h "$vm_img" | cut -f1) used)"
