#!/bin/sh
# cluster.sh -- a real single-node Slurm cluster on this machine, for tests.
#
#   tests/slurm/cluster.sh up DIR     start munged, slurmctld and slurmd with
#                                     all state, sockets and logs under DIR
#   tests/slurm/cluster.sh up DIR N   the same with N nodes sbn1..sbnN (see below)
#   tests/slurm/cluster.sh kill DIR NODE  a node fails: its slurmd (the node's
#                                     process 1) and everything on it killed
#   tests/slurm/cluster.sh down DIR   stop the daemons started for DIR
#
# With N nodes each node is a network, UTS, PID and mount namespace of its own:
# its own hostname (sbnI) and address (veth to a bridge, 10.R.0.10+I), its own
# /proc, a node-local tmpfs at DIR/local, and its own slurmd as process 1;
# slurmctld and munged run beside them, on the bridge's address. Every node sees
# the rest of the filesystem (the repository, DIR) as it is: the shared one.
#
# Needs root and Debian's slurmctld, slurmd and munge (scripts/deps.sh slurm).
# The generated slurm.conf names this machine (hostname -s) with its CPUs and
# its memory less 1 GiB, one partition "sb", no accounting; ports 16817/16818
# (not Slurm's defaults, so a real cluster's daemons on the machine are left
# alone). After `up`, `export SLURM_CONF=DIR/slurm.conf` points sbatch,
# squeue and scontrol at it.
set -eu

die() { echo "cluster.sh: $*" >&2; exit 1; }


# The parts of slurm.conf that every cluster has; $1: the directory.
conf_common() {
	cat <<EOC
ClusterName=stagebench
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$1/munge/munge.sock
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$1/state
SlurmctldPidFile=$1/slurmctld.pid
SlurmctldLogFile=$1/log/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
EOC
}

start_munge() { # DIR
	mkdir -p "$1/state" "$1/spool" "$1/log" "$1/munge"
	chmod 700 "$1/munge"
	head -c 1024 /dev/urandom >"$1/munge/munge.key"
	chmod 400 "$1/munge/munge.key"
	/usr/sbin/munged --key-file="$1/munge/munge.key" --socket="$1/munge/munge.sock" \
		--pid-file="$1/munge/munged.pid" --log-file="$1/munge/munged.log" \
		--seed-file="$1/munge/seed" -f || die "munged did not start (see $1/munge/munged.log)"
}

# Ready when COUNT nodes report idle: sinfo is the handshake.
wait_idle() { # COUNT DIR
	i=0
	until [ "$(sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$')" -ge "$1" ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || die "$1 node(s) never became idle (see $2/log)"
		sleep 0.1
	done
}

up_nodes() { # DIR N
	d=$1 n=$2
	for b in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd ip unshare nsenter; do
		command -v "$b" >/dev/null || die "$b missing: run scripts/deps.sh slurm"
	done
	# a bridge and a subnet of their own: the tag is DIR's
	tag=$(printf '%s' "$d" | cksum | cut -c1-5)
	net=10.$((tag % 200 + 20)).$((tag / 200 % 250))
	br=sbbr$tag
	echo "$tag $br" >"$d/net"
	ip link add "$br" type bridge || die "cannot create bridge $br"
	ip addr add "$net.1/24" dev "$br" && ip link set "$br" up
	start_munge "$d"
	mkdir -p "$d/local"
	host=$(hostname -s)
	cpus=$(nproc)
	mem=$(awk '/MemTotal/ { m = int($2 / 1024) - 1024; print (m < 512 ? 512 : m) }' /proc/meminfo)
	{
		echo "127.0.0.1 localhost"
		echo "$net.1 $host"
		for i in $(seq 1 "$n"); do echo "$net.$((10 + i)) sbn$i"; done
	} >"$d/hosts"
	{
		echo "SlurmctldHost=$host($net.1)"
		conf_common "$d"
		echo "SlurmdSpoolDir=$d/spool/%n"
		echo "SlurmdPidFile=$d/slurmd-%n.pid"
		echo "SlurmdLogFile=$d/log/slurmd-%n.log"
		# a node that stops answering is down after 6 s; its jobs end (NODE_FAIL), not requeued
		echo "SlurmdTimeout=6"
		echo "JobRequeue=0"
		# the scheduler looks at pending jobs (a merge whose array ended) every 2 s, not 60
		echo "SchedulerParameters=sched_interval=2,bf_interval=2"
		for i in $(seq 1 "$n"); do
			echo "NodeName=sbn$i NodeAddr=$net.$((10 + i)) CPUs=$cpus RealMemory=$mem State=UNKNOWN"
		done
		echo "PartitionName=sb Nodes=sbn[1-$n] Default=YES MaxTime=INFINITE State=UP"
	} >"$d/slurm.conf"
	export SLURM_CONF="$d/slurm.conf"
	/usr/sbin/slurmctld -f "$d/slurm.conf" || die "slurmctld did not start (see $d/log)"
	for i in $(seq 1 "$n"); do
		ns=sb$tag-$i
		ip netns add "$ns" || die "cannot create network namespace $ns"
		ip link add "sb${tag}h$i" type veth peer name "sb${tag}n$i" || die "cannot create veth"
		ip link set "sb${tag}n$i" netns "$ns"
		ip link set "sb${tag}h$i" master "$br" up
		ip -n "$ns" link set lo up
		ip -n "$ns" addr add "$net.$((10 + i))/24" dev "sb${tag}n$i"
		ip -n "$ns" link set "sb${tag}n$i" up
		# the node: its hostname, hosts file, local disk; slurmd in the foreground as its
		# process 1 (when it dies, so does everything on the node)
		mkdir -p "$d/spool/sbn$i"
		# nsenter, not ip netns exec: that one mounts a /sys without /sys/fs/cgroup
		nsenter --net="/run/netns/$ns" unshare --uts --pid --mount --kill-child --mount-proc sh -c '
			hostname "$1" && mount --bind "$2/hosts" /etc/hosts &&
			mount -t tmpfs -o size=4g "local-$1" "$2/local" &&
			exec /usr/sbin/slurmd -D -f "$2/slurm.conf"' sh "sbn$i" "$d" \
			</dev/null >"$d/log/node-sbn$i.console" 2>&1 &
		echo $! >"$d/node-sbn$i.pid"
	done
	wait_idle "$n" "$d"
}

kill_node() { # DIR NODE
	[ -s "$1/node-$2.pid" ] || die "no node $2 in $1"
	kill -KILL "$(cat "$1/node-$2.pid")"
}

up() {
	d=$1
	[ "$(id -u)" = 0 ] || die "needs root (slurmd runs jobs as their user)"
	for b in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do
		[ -x "$b" ] || die "$b missing: run scripts/deps.sh slurm"
	done
	start_munge "$d"
	host=$(hostname -s)
	cpus=$(nproc)
	mem=$(awk '/MemTotal/ { m = int($2 / 1024) - 1024; print (m < 512 ? 512 : m) }' /proc/meminfo)
	{
		echo "SlurmctldHost=$host"
		conf_common "$d"
		echo "SlurmdSpoolDir=$d/spool"
		echo "SlurmdPidFile=$d/slurmd.pid"
		echo "SlurmdLogFile=$d/log/slurmd.log"
		echo "NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN"
		echo "PartitionName=sb Nodes=$host Default=YES MaxTime=INFINITE State=UP"
	} >"$d/slurm.conf"
	export SLURM_CONF="$d/slurm.conf"
	/usr/sbin/slurmctld -f "$d/slurm.conf" || die "slurmctld did not start (see $d/log)"
	/usr/sbin/slurmd -f "$d/slurm.conf" || die "slurmd did not start (see $d/log)"
	wait_idle 1 "$d"
}

down() {
	d=$1
	for p in "$d"/node-*.pid; do
		[ -s "$p" ] && kill -KILL "$(cat "$p")" 2>/dev/null || true
	done
	if [ -s "$d/net" ]; then
		read -r tag br <"$d/net"
		for ns in $(ip netns list | awk -v t="sb$tag-" 'index($1, t) == 1 { print $1 }'); do
			ip netns del "$ns" || true
		done
		ip link del "$br" 2>/dev/null || true
	fi
	for p in "$d/slurmd.pid" "$d/slurmctld.pid" "$d/munge/munged.pid"; do
		[ -s "$p" ] || continue
		pid=$(cat "$p")
		kill "$pid" 2>/dev/null || continue
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$pid" 2>/dev/null || true
	done
}

case "${1:-}" in
up) [ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: cluster.sh up DIR [NODES]"
	if [ $# -eq 2 ]; then
		up "$2"
	else
		[ "$(id -u)" = 0 ] || die "needs root"
		mkdir -p "$2"
		up_nodes "$2" "$3"
	fi ;;
kill) [ $# -eq 3 ] || die "usage: cluster.sh kill DIR NODE"; kill_node "$2" "$3" ;;
down) [ $# -eq 2 ] || die "usage: cluster.sh down DIR"; down "$2" ;;
*) die "usage: cluster.sh up DIR [NODES] | kill DIR NODE | down DIR" ;;
esac
