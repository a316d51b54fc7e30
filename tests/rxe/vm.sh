#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command inside the soft-RoCE VM (prepare.sh makes it): QEMU under TCG (KVM hung in
# every try on these machines), 2 vCPUs, the host's / as the VM's root over 9p, so the command
# sees this checkout and its build unchanged. Inside, rxe0 runs on veth0 with 10.77.0.1/24, an
# address that exists only inside the VM (the host never sends there). The command runs in the
# caller's working directory with the variables named in RXE_PASS_ENV (space separated) passed
# through; its output appears here, and vm.sh exits with its status: 124 when the command or
# the VM ran out of time, 125 when the VM did not come up (the console log's tail is printed).
# Usage: vm.sh [--timeout S] [--mem MB] [--cache DIR] -- COMMAND [ARGS...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
limit=600
mem=4096
cache=/var/cache/onesided-rxe
while [ "$#" -gt 0 ]; do
  case "$1" in
    --timeout) limit="$2"; shift 2 ;;
    --mem) mem="$2"; shift 2 ;;
    --cache) cache="$2"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
if [ "$#" -eq 0 ]; then
  echo "usage: $0 [--timeout S] [--mem MB] [--cache DIR] -- COMMAND [ARGS...]" >&2
  exit 2
fi
if ! command -v qemu-system-x86_64 >/dev/null; then
  echo "vm.sh: qemu-system-x86_64 is not installed (tests/install_deps.sh installs it)" >&2
  exit 125
fi
"$here/prepare.sh" "$cache" >/dev/null

dir="$(mktemp -d /tmp/onesided-vm.XXXXXX)"
chmod 755 "$dir"
qemu_pid=""
cleanup() {
  if [ -n "$qemu_pid" ]; then kill -KILL "$qemu_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The job: network and rxe first (each step guarded), then the command under its own timeout
# (a little shorter than the VM's, so a hung command still reports 124 from inside).
{
  echo '#!/bin/sh'
  echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root'
  # /tmp is the host's, over 9p, where FIFOs and shared mappings fail (Open MPI's session
  # directory needs both): temporary files go to the VM's own tmpfs.
  echo 'export TMPDIR=/dev/shm'
  echo 'echo "vm: job starts"'
  echo 'hostname rxe-vm 2>/dev/null  # the kernel says "(none)", which Open MPI rejects'
  echo 'ip link set lo up'
  echo 'ip link add veth0 type veth peer name veth1 && ip addr add 10.77.0.1/24 dev veth0 &&'
  echo '  ip link set veth0 up && ip link set veth1 up &&'
  echo '  timeout 30 rdma link add rxe0 type rxe netdev veth0 ||'
  printf '  { echo "vm: setting up rxe0 failed"; echo 125 >%q; exit 0; }\n' "$dir/status"
  for name in ${RXE_PASS_ENV:-}; do
    if [ -n "${!name+x}" ]; then printf 'export %s=%q\n' "$name" "${!name}"; fi
  done
  printf 'cd %q || exit 0\n' "$PWD"
  printf 'timeout -k 5 %q' "$((limit > 60 ? limit - 30 : limit))"
  printf ' %q' "$@"
  echo
  printf 'echo $? >%q\n' "$dir/status"
} >"$dir/job.sh"

# tsc=reliable clocksource=tsc: under TCG the kernel otherwise picks the HPET, and every clock
# read is then an emulated device access: clock_gettime cost 2.2 us in the VM (0.13 us on the
# TSC), paid by every benchmark iteration and timed wait that reads the clock, and not by
# perftest, which reads the TSC. TCG's TSC follows the host's, which is invariant, so it is one
# clock for both vCPUs.
# ONESIDED_VM_CPU: QEMU's CPU model, qemu64 unless set (max before 2026-12-03). With qemu64
# glibc takes its baseline SSE2 routines, not the AVX2 / EVEX ones that TCG emulates with more
# work, and every process starts and runs faster. On the Intel host of stops 38-40, two pairs
# of boots (max, then qemu64) at stop 40: 5 launches of a 2-rank MPI program 16.7 / 9.8 s and
# 13.5 / 8.7 s, the 9 Verbs unit tests 12.9 / 7.3 s and 8.7 / 5.4 s; of stop 39's two pairs,
# one showed start-up 1.4-1.8x faster, the other noise. Nothing here needs more than x86-64's
# baseline (the build's, Debian's), the clock stays the TSC, and perftest reads the same cpu MHz.
timeout -k 5 "$((limit + 60))" qemu-system-x86_64 \
  -accel tcg,thread=multi -cpu "${ONESIDED_VM_CPU:-qemu64}" -m "$mem" -smp 2 -nographic -no-reboot -nic none \
  -kernel "$cache/vmlinuz" -initrd "$cache/initrd.gz" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 tsc=reliable clocksource=tsc onesided.job=$dir/job.sh" \
  -virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,multidevs=remap,writeout=immediate" \
  </dev/null 2>"$dir/qemu.err" | tee "$dir/console" | tr -d '\r' |
  awk '/vm: job starts/ {on = 1; next} /reboot: Power down/ {on = 0} on {print; fflush()}' &
qemu_pid=$!  # the pipeline's last process; the timeout above ends QEMU itself
wait "$qemu_pid" || true
qemu_pid=""
if [ ! -s "$dir/status" ]; then
  if grep -q . "$dir/qemu.err"; then tail -20 "$dir/qemu.err" >&2; fi
  tr -d '\r' <"$dir/console" | tail -20 >&2
  echo "vm.sh: the VM ended without a result (no boot, a crash, or out of time after ${limit} s)" >&2
  exit 124
fi
status="$(cat "$dir/status")"
exit "$status"
