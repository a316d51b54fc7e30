#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A throw-away Slurm cluster for the tests, with no systemd (shared/recipes/launchers.md §5).
# Run as root.
#   slurm.sh local-up        one node = this machine, on 127.0.0.1     (clients: srun ...)
#   slurm.sh hosts-up N      nodes osh1..oshN = namespaces of hosts.sh (clients: ip netns exec osh1 srun ...)
#   slurm.sh down            stop every daemon this script started, by the PID in its pid file
# Clients need: export SLURM_CONF=$SLURM_STATE/etc/slurm.conf
set -euo pipefail
S=${SLURM_STATE:-/tmp/onesided-slurm}
NET=${HOSTS_NET:-10.199.77}
CONF=$S/etc/slurm.conf

write_conf() { # $1 = controller name(addr), then NodeName lines on stdin
  mkdir -p $S/etc $S/state $S/spool $S/log $S/tmp
  cat > $CONF <<CONF
ClusterName=onesidedtest
SlurmctldHost=$1
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MailProg=/bin/true
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.%n.log
TmpFS=$S/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
CONF
  cat >> $CONF            # NodeName lines
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >> $CONF
  # ip netns exec remounts /sys, so cgroup autodetection fails there; no cgroup plugin is used
  echo "CgroupPlugin=cgroup/v1" > $S/etc/cgroup.conf
}

start_munge() {
  if munge -n </dev/null >/dev/null 2>&1; then return 0; fi    # a munged already answers
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  [ -s /etc/munge/munge.key ] || { dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 status=none
                                   chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key; }
  runuser -u munge -- /usr/sbin/munged
  cp /run/munge/munged.pid $S/munged.pid                        # ours: stopped by "down"
}

wait_idle() { # $1 = prefix to run sinfo with, $2 = node count
  for _ in $(seq 1 300); do
    [ "$($1 sinfo -h -N -o %t 2>/dev/null | grep -cx idle)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "slurm nodes not idle after 30 s:" >&2; $1 sinfo -N >&2 || true; tail -n 20 $S/log/*.log >&2; return 1
}

stop_pidfile() {
  [ -f "$1" ] || return 0
  local p; p=$(cat "$1")
  if kill -TERM "$p" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && { echo "pid $p ($1) ignored TERM; KILL" >&2; kill -KILL "$p"; }
  fi
  rm -f "$1"
}

export SLURM_CONF=$CONF
case "${1:-}" in
local-up)
  rm -rf $S; mkdir -p $S
  H=$(hostname -s)
  echo "NodeName=$H NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN" | write_conf "$H(127.0.0.1)"
  mkdir -p $S/spool/$H
  start_munge
  /usr/sbin/slurmctld -f $CONF
  /usr/sbin/slurmd -f $CONF
  wait_idle "" 1
  ;;
hosts-up)
  n=${2:-3}
  rm -rf $S; mkdir -p $S
  for i in $(seq 1 "$n"); do echo "NodeName=osh$i NodeAddr=$NET.$i CPUs=8 State=UNKNOWN"; done |
    write_conf "osh1($NET.1)"
  start_munge                    # one munged: its socket is a file, reachable from every namespace
  ip netns exec osh1 unshare --uts sh -c "hostname osh1; exec /usr/sbin/slurmctld -f $CONF"
  for i in $(seq 1 "$n"); do
    mkdir -p $S/spool/osh$i $S/nodetmp/osh$i
    # Each node its own TmpFS: Slurm's pmix plugin makes $TmpFS/spmix_appdir_<uid>_<job>.<step>
    # on every node, and the namespaces share one filesystem.
    ip netns exec osh$i unshare --uts sh -c \
      "hostname osh$i; mount --bind $S/nodetmp/osh$i $S/tmp && exec /usr/sbin/slurmd -f $CONF -N osh$i"
  done
  wait_idle "ip netns exec osh1" "$n"
  ;;
down)
  for f in $S/slurmd.*.pid; do stop_pidfile "$f" & done; wait   # ~2 s each: stop them together
  stop_pidfile $S/slurmctld.pid
  stop_pidfile $S/munged.pid
  ;;
*) echo "usage: $0 local-up | hosts-up N | down" >&2; exit 2 ;;
esac
