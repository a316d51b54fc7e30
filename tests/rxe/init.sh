#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the soft-RoCE VM's initramfs (busybox; made by prepare.sh). Loads the modules, mounts
# the host's root (9p) and runs the job named by onesided.job= on the kernel command line inside
# it with chroot; the job writes its own exit status. Then powers off.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do
  insmod "/mods/$m" || echo "init: insmod $m failed" >/dev/console
done
job=""
for word in $(cat /proc/cmdline); do
  case "$word" in onesided.job=*) job="${word#onesided.job=}" ;; esac
done
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none hostroot /host; then
  mount -t proc proc /host/proc
  mount -t sysfs sys /host/sys
  mount -t devtmpfs dev /host/dev
  mkdir -p /host/dev/pts /host/dev/shm
  mount -t devpts devpts /host/dev/pts
  mount -t tmpfs -o size=1g tmpfs /host/dev/shm
  if [ -n "$job" ]; then
    chroot /host /bin/sh "$job" </dev/console >/dev/console 2>&1
  else
    echo "init: no onesided.job= on the kernel command line" >/dev/console
  fi
else
  echo "init: mounting the host's root over 9p failed" >/dev/console
fi
sync
poweroff -f
