#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# onesided under real PMIx launchers (shared/recipes/launchers.md), run as root:
#   1. Open MPI's mpirun on this machine (2 and 4 ranks);
#   2. Slurm's srun --mpi=pmix on a one-node Slurm cluster (munge, slurmctld, slurmd by hand);
#   3. three namespace "hosts" osh1..osh3 (hosts.sh), one slurmd in each:
#      srun --mpi=pmix -N3 --ntasks-per-node=2 with UCX over tcp between the hosts, then
#      mpirun across the same hosts (nsrsh as its rsh);
# each with the MPI test programs, a check that the ranks took the PMIx bootstrap and know their
# node peers, and a rank killed by SIGKILL (the job must end quickly, naming the task / rank).
# Every daemon is stopped by its PID and every namespace deleted at the end, also on failure.
# Usage: tests/cluster/run.sh [build-dir]   (default: build)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"
expect_fail="$here/../mpi/expect_fail.sh"
export SLURM_STATE=${SLURM_STATE:-/tmp/onesided-slurm}
export SLURM_CONF=$SLURM_STATE/etc/slurm.conf
NET=${HOSTS_NET:-10.199.77}

if [ "$(id -u)" -ne 0 ]; then
  echo "cluster tests: need root (namespaces, slurmd): skipped" >&2
  exit 0
fi
for c in srun salloc slurmctld slurmd munged mpirun.openmpi ip unshare bc; do
  command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] ||
    { echo "cluster tests: $c not installed (tests/install_deps.sh)" >&2; exit 1; }
done

cleanup() {
  "$here/slurm.sh" down || true
  "$here/hosts.sh" down || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Programs that run every rank to completion (win_attrs and putget_types are left out across
# hosts: 2000 MPI_Win_fence epochs over UCX tcp take about 30 s there): RMA (across hosts the
# windows span nodes, so accumulates of doubles go by active message), PSCW, request-based and
# dynamic windows, the collectives with the seeds' examples, and messages, nonblocking
# collectives, intercommunicators, topologies and neighbourhood collectives,
# MPI_Comm_create_group, error handlers and the smaller calls. (Not mpit: it compares control
# variables with settings its ctest entry puts in the environment, which no launcher here does.)
progs="launcher/launcher_modes mpi/mapvals_get mpi/mapvals_put mpi/passive_acc mpi/strided
       mpi/create_shared mpi/env_query mpi/mapvals_indexed mpi/pscw mpi/rma_requests
       mpi/dynamic_win mpi/gather_examples mpi/scatter_alltoall mpi/coll_comm
       mpi/split_type mpi/p2p_basic mpi/nbc mpi/intercomm mpi/neighbor mpi/comm_create_group
       mpi/topo_cart mpi/errhandlers mpi/small_calls"
progs=$(echo $progs)
zcopy_progs="mpi/gather_examples mpi/scatter_alltoall"
# Under srun each namespace host's tasks run in a session, so a CPU autogroup, of their own: 6
# ranks in 3 groups of equal share on 2 cores, where sched_yield gives way only inside a group.
# create_shared (accumulates over UCX tcp: every remote operation waits for the target's
# progress) took 46-80 s that way, and over 120 s in 2 of 3 runs, while transport waits yielded
# for as long as they lasted; they sleep in the wakeup fd after 2 ms now (15-17 s).
srun_progs=$progs
local_progs="$progs mpi/win_attrs mpi/putget_types"
passed=0
failed=0
failures=""
log=$(mktemp -d /tmp/onesided-cluster.XXXXXX)
# What the launchers say when rank 1 is killed (Slurm may list it with the tasks it cancelled);
# the survivors must not get past the fence that waits for it.
# Either the launcher's line or a survivor's error naming what failed, and the ranks' fence never
# completes.
killed="srun: error: .*: tasks? [0-9,-]+: Killed|process rank 1 .*exited on signal 9|^onesided: rank [0-9]+: .*aborting the job"
srun_killed=$killed
mpirun_killed=$killed
export EXPECT_FAIL_FORBID="modes: sigkill done" EXPECT_FAIL_KILLED_OK=1

# step NAME CMD...: runs CMD (bounded by the caller's timeout), prints one line with the time.
step() {
  local name=$1 s e
  shift
  s=$(date +%s.%N)
  if "$@" >"$log/out" 2>&1; then
    passed=$((passed + 1))
    e=$(echo "$(date +%s.%N) - $s" | bc)
    printf '  ok    %-52s %6.2f s\n' "$name" "$e"
  else
    failed=$((failed + 1))
    failures="$failures $name"
    e=$(echo "$(date +%s.%N) - $s" | bc)
    printf '  FAIL  %-52s %6.2f s\n' "$name" "$e"
    # Enough to hold a failed sub-step of the salloc step whole (its error line, a UCX backtrace).
    tail -n 150 "$log/out" | sed 's/^/        /'
  fi
}

# The ranks' own account: PMIx bootstrap, and node peers = the ranks placed on their node.
# $1 = expected number of ranks, $2 = ranks per node; reads ONESIDED_LOG=core=debug output.
check_up_lines() {
  local n=$1 per=$2 out=$3 r first peers want=0
  for r in $(seq 0 $((n - 1))); do
    first=$((r / per * per))
    peers=$(seq -s, "$first" $((first + per - 1)))
    grep -qE "rank $r of $n up: transport ucx, bootstrap pmix, node peers $peers\$" "$out" &&
      want=$((want + 1))
  done
  [ "$want" -eq "$n" ] || { echo "expected $n ranks up over pmix with node peers:"; cat "$out"; return 1; }
}
export -f check_up_lines

mpirun_local() { # NP CMD...
  local np=$1
  shift
  timeout -k 5 120 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" \
    --mca oob_tcp_if_include lo "$@"
}

echo "== cluster 1: Open MPI's mpirun on this machine"
for np in 2 4; do
  step "mpirun -np $np: pmix bootstrap, node peers" bash -c "
    $(declare -f mpirun_local); mpirun_local $np -x ONESIDED_LOG=core=debug \
      $build/tests/launcher/launcher_modes >$log/up 2>&1 && check_up_lines $np $np $log/up"
  for p in $local_progs; do
    step "mpirun -np $np $(basename "$p")" mpirun_local "$np" "$build/tests/$p"
  done
  step "mpirun -np $np: rank 1 killed" "$expect_fail" 10 "$mpirun_killed" \
    "$build/tests/launcher/launcher_modes" timeout -k 5 60 mpirun.openmpi --allow-run-as-root \
    --oversubscribe -np "$np" --mca oob_tcp_if_include lo \
    "$build/tests/launcher/launcher_modes" sigkill
done
step "no PMIx server: one-line error at MPI_Init" "$expect_fail" 10 \
  "^onesided: rank 0: MPI_Init: bootstrap: no PMIx server reachable" \
  "$build/tests/launcher/launcher_modes" env PMIX_NAMESPACE=gone \
  "PMIX_SERVER_URI41=pmix-server.1;tcp4://127.0.0.1:9" "$build/tests/launcher/launcher_modes"

echo "== cluster 2: srun --mpi=pmix on a one-node Slurm cluster"
step "slurm local-up (munge, slurmctld, slurmd)" timeout 60 "$here/slurm.sh" local-up
for np in 2 4; do
  step "srun -n$np: pmix bootstrap, node peers" bash -c "
    timeout -k 5 60 env ONESIDED_LOG=core=debug srun --mpi=pmix -n$np \
      $build/tests/launcher/launcher_modes >$log/up 2>&1 && check_up_lines $np $np $log/up"
done
for p in $local_progs; do
  step "srun -n4 $(basename "$p")" timeout -k 5 120 srun --mpi=pmix -n4 "$build/tests/$p"
done
step "srun -n4: rank 1 killed" "$expect_fail" 10 "$srun_killed" \
  "$build/tests/launcher/launcher_modes" timeout -k 5 60 srun --mpi=pmix -n4 \
  "$build/tests/launcher/launcher_modes" sigkill
step "slurm down" timeout 60 "$here/slurm.sh" down

echo "== cluster 3: three namespace hosts, srun -N3 --ntasks-per-node=2 and mpirun, UCX over tcp"
step "hosts up 3 (blackhole route first)" timeout 30 "$here/hosts.sh" up 3
if ! "$here/hosts.sh" check; then
  echo "  FAIL  no blackhole route for $NET.0/24 in the root namespace: not running across hosts"
  exit 1
fi
step "slurm hosts-up 3" timeout 60 "$here/slurm.sh" hosts-up 3
# Every step in one allocation: successive jobs queue behind the previous one's completion.
cat >"$log/steps.sh" <<EOF
set -u
export UCX_TLS=tcp UCX_NET_DEVICES=hnet0
rc=0
s() { local n=\$1; shift; if "\$@" >$log/step.out 2>&1; then echo "ok \$n"; else echo "FAIL \$n"; tail -n 80 $log/step.out; rc=1; fi; }
s up bash -c "ONESIDED_LOG=core=debug timeout -k 5 60 srun --mpi=pmix $build/tests/launcher/launcher_modes >$log/up 2>&1 && check_up_lines 6 2 $log/up"
for p in $srun_progs; do s "\$(basename \$p)" timeout -k 5 120 srun --mpi=pmix $build/tests/\$p; done
# The collectives again with (almost) every stream by rendezvous: receivers read the senders'
# exposed buffers across the hosts.
for p in $zcopy_progs; do
  s "\$(basename \$p) zcopy" env ONESIDED_COLL_ZCOPY=8 timeout -k 5 120 srun --mpi=pmix $build/tests/\$p
done
s killed $expect_fail 10 "$srun_killed" $build/tests/launcher/launcher_modes timeout -k 5 60 srun --mpi=pmix $build/tests/launcher/launcher_modes sigkill
exit \$rc
EOF
srun_hosts() {
  timeout -k 10 600 ip netns exec osh1 salloc -N3 --ntasks-per-node=2 bash "$log/steps.sh" \
    >"$log/salloc" 2>&1
  local rc=$?
  grep -E "^(ok|FAIL) " "$log/salloc" | sed 's/^/        /'
  [ $rc -eq 0 ] || cat "$log/salloc"
  return $rc
}
step "salloc -N3 x2: srun --mpi=pmix (up, $(echo $srun_progs | wc -w) programs, rank killed)" srun_hosts
step "slurm down" timeout 60 "$here/slurm.sh" down

printf '%s.1 slots=2\n%s.2 slots=2\n%s.3 slots=2\n' "$NET" "$NET" "$NET" >"$log/hostfile"
mpirun_hosts() { # CMD... : mpirun started in osh1, ranks in osh1..osh3 through nsrsh
  timeout -k 5 120 ip netns exec osh1 unshare --uts sh -c "hostname osh1; exec mpirun.openmpi \
    --allow-run-as-root --oversubscribe -np 6 --hostfile $log/hostfile \
    --mca plm_rsh_agent $here/nsrsh --mca oob_tcp_if_include $NET.0/24 \
    -x UCX_TLS=tcp -x UCX_NET_DEVICES=hnet0 $*"
}
export -f mpirun_hosts
export here log NET
step "mpirun 3 hosts x2: pmix bootstrap, node peers" bash -c "
  mpirun_hosts -x ONESIDED_LOG=core=debug $build/tests/launcher/launcher_modes >$log/up 2>&1 &&
    check_up_lines 6 2 $log/up"
for p in $progs; do
  step "mpirun 3 hosts x2 $(basename "$p")" mpirun_hosts "$build/tests/$p"
done
for p in $zcopy_progs; do
  step "mpirun 3 hosts x2 $(basename "$p") zcopy" mpirun_hosts -x ONESIDED_COLL_ZCOPY=8 "$build/tests/$p"
done
step "mpirun 3 hosts x2: rank 1 killed" "$expect_fail" 10 "$mpirun_killed" \
  "$build/tests/launcher/launcher_modes" bash -c \
  "mpirun_hosts $build/tests/launcher/launcher_modes sigkill"
step "hosts down" timeout 30 "$here/hosts.sh" down

rm -rf "$log"
echo "cluster tests: $passed passed, $failed failed${failures:+:$failures}"
[ "$failed" -eq 0 ]
