#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian 12 packages onesided builds, tests and benchmarks with. Needs root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates \
  libucx-dev ucx-utils libibverbs-dev librdmacm-dev \
  libspdlog-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev libhwloc-dev \
  openmpi-bin libopenmpi-dev mpich libmpich-dev gnuplot-nox python3 procps psmisc clang-format \
  qemu-system-x86 busybox-static cpio kmod xz-utils iproute2 gdb \
  rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest \
  libpmix-dev slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge util-linux bc >/dev/null
# (PMIx bootstrap and tests/cluster: Slurm's mpi_pmix plugin dlopens libpmix.so from
# libpmix-dev, which no Slurm package pulls in. Installing starts no daemon here: policy-rc.d
# denies it and there is no systemd; tests/cluster/slurm.sh starts and stops its own.)
# The soft-RoCE VM's kernel and initramfs (tests/rxe): fetched now, with the other packages.
"$(dirname "${BASH_SOURCE[0]}")/rxe/prepare.sh" >/dev/null
