#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Test "hosts": network namespaces osh1..oshN on one private bridge (in its own namespace oshsw),
# as in shared/recipes/launchers.md section 5.
#   hosts.sh up N     create osh1..oshN, each with interface hnet0 = 10.199.77.<i>/24 and lo
#   hosts.sh down     delete them and the blackhole route
#   hosts.sh check    exit 0 only if the blackhole route is in place in the root namespace
# Traffic stays inside the namespaces: they have no route out, and the root namespace gets a
# blackhole route for the /24, so nothing on this machine can send to those addresses by
# mistake (the root namespace's default route leads off the machine).
set -euo pipefail
NET=${HOSTS_NET:-10.199.77}
case "${1:-}" in
up)
  n=${2:-3}
  # The safeguard first: from here on a stray packet from the root namespace fails locally.
  ip route add blackhole $NET.0/24
  ip netns add oshsw
  ip -n oshsw link add br0 type bridge
  ip -n oshsw link set br0 up
  for i in $(seq 1 "$n"); do
    ip netns add osh$i
    # The same interface name everywhere: UCX_NET_DEVICES is one value for every rank.
    ip link add hnet0 netns osh$i type veth peer name p$i netns oshsw
    ip -n oshsw link set p$i master br0 up
    ip -n osh$i addr add $NET.$i/24 dev hnet0
    ip -n osh$i link set lo up
    ip -n osh$i link set hnet0 up
  done
  ;;
down)
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^osh([0-9]+|sw)$' || true); do
    ip netns del "$ns"
  done
  ip route del blackhole $NET.0/24 2>/dev/null || true
  ;;
check)
  ip route show type blackhole | grep -q "^blackhole $NET.0/24"
  ;;
*) echo "usage: $0 up N | down | check" >&2; exit 2 ;;
esac
