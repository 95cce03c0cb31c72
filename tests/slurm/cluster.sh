#!/bin/sh
# cluster.sh -- a real single-node Slurm cluster on this machine, for tests.
#
#   tests/slurm/cluster.sh up DIR     start munged, slurmctld and slurmd with
#                                     all state, sockets and logs under DIR
#   tests/slurm/cluster.sh down DIR   stop the daemons started for DIR
#
# Needs root and Debian's slurmctld, slurmd and munge (scripts/deps.sh slurm).
# The generated slurm.conf names this machine (hostname -s) with its CPUs and
# its memory less 1 GiB, one partition "sb", no accounting; ports 16817/16818
# (not Slurm's defaults, so a real cluster's daemons on the machine are left
# alone). After `up`, `export SLURM_CONF=DIR/slurm.conf` points sbatch,
# squeue and scontrol at it.
set -eu

die() { echo "cluster.sh: $*" >&2; exit 1; }

up() {
	d=$1
	[ "$(id -u)" = 0 ] || die "needs root (slurmd runs jobs as their user)"
	for b in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do
		[ -x "$b" ] || die "$b missing: run scripts/deps.sh slurm"
	done
	mkdir -p "$d/state" "$d/spool" "$d/log" "$d/munge"
	chmod 700 "$d/munge"
	host=$(hostname -s)
	cpus=$(nproc)
	mem=$(awk '/MemTotal/ { m = int($2 / 1024) - 1024; print (m < 512 ? 512 : m) }' /proc/meminfo)
	head -c 1024 /dev/urandom >"$d/munge/munge.key"
	chmod 400 "$d/munge/munge.key"
	/usr/sbin/munged --key-file="$d/munge/munge.key" --socket="$d/munge/munge.sock" \
		--pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" \
		--seed-file="$d/munge/seed" -f || die "munged did not start (see $d/munge/munged.log)"
	cat >"$d/slurm.conf" <<EOC
ClusterName=stagebench
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
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
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=sb Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOC
	export SLURM_CONF="$d/slurm.conf"
	/usr/sbin/slurmctld -f "$d/slurm.conf" || die "slurmctld did not start (see $d/log)"
	/usr/sbin/slurmd -f "$d/slurm.conf" || die "slurmd did not start (see $d/log)"
	# Ready when the node reports idle: sinfo is the handshake.
	i=0
	until sinfo -h -o %T 2>/dev/null | grep -qx idle; do
		i=$((i + 1))
		[ $i -lt 300 ] || die "the node never became idle (see $d/log)"
		sleep 0.1
	done
}

down() {
	d=$1
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
up) [ $# -eq 2 ] || die "usage: cluster.sh up DIR"; up "$2" ;;
down) [ $# -eq 2 ] || die "usage: cluster.sh down DIR"; down "$2" ;;
*) die "usage: cluster.sh up|down DIR" ;;
esac
