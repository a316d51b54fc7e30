#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prepares the soft-RoCE VM (../shared/recipes/rxe-vm.md): Debian's own kernel, fetched with
# apt-get download, its modules for virtio + 9p (the host's / is the VM's root), rxe, rdma_cm
# and veth, and a busybox initramfs whose /init loads them, mounts the host's root and runs the
# job vm.sh names on the kernel command line. The host's kernel has no RDMA; this one does.
# Idempotent: a stamp per kernel version; prints the cache directory.
# Usage: prepare.sh [CACHE_DIR]   (default /var/cache/onesided-rxe)
set -euo pipefail
cache="${1:-/var/cache/onesided-rxe}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

pkg="$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')"
if [ -z "$pkg" ]; then
  echo "prepare.sh: apt-cache knows no linux-image-amd64 kernel (run apt-get update)" >&2
  exit 1
fi
ver="${pkg#linux-image-}"
if [ -f "$cache/ready-$ver" ] && [ "$cache/ready-$ver" -nt "$here/init.sh" ]; then
  echo "$cache"
  exit 0
fi

mkdir -p "$cache"
work="$(mktemp -d "$cache/.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
(cd "$work" && apt-get download "$pkg" >/dev/null 2>&1) || {
  echo "prepare.sh: apt-get download $pkg failed" >&2
  exit 1
}
dpkg -x "$work"/*.deb "$work/root"
depmod -b "$work/root" "$ver"

# Modules in dependency order (modprobe resolves modules.dep); the crc32 providers come before
# anything uses them: without one, 'rdma link add ... type rxe' fails with ENOENT.
mods=(crc32_generic crc32-pclmul virtio_pci 9pnet_virtio 9p veth rdma_rxe ib_uverbs rdma_ucm)
initrd="$work/initrd"
mkdir -p "$initrd"/{bin,dev,proc,sys,host,mods}
: >"$initrd/mods/order"
for m in "${mods[@]}"; do
  modprobe -d "$work/root" -S "$ver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  name="$(basename "$ko")"
  case "$name" in
    *.ko.xz) xz -dc "$ko" >"$initrd/mods/${name%.xz}"; name="${name%.xz}" ;;
    *.ko.zst) zstd -qdc "$ko" >"$initrd/mods/${name%.zst}"; name="${name%.zst}" ;;
    *) cp "$ko" "$initrd/mods/$name" ;;
  esac
  echo "$name" >>"$initrd/mods/order"
done
cp /bin/busybox "$initrd/bin/busybox"
for tool in sh mount umount insmod poweroff chroot cat sleep mkdir echo; do
  ln -s busybox "$initrd/bin/$tool"
done
install -m 755 "$here/init.sh" "$initrd/init"
(cd "$initrd" && find . | cpio -o -H newc --quiet | gzip -1) >"$cache/initrd.gz"
cp "$work/root/boot/vmlinuz-$ver" "$cache/vmlinuz"
rm -f "$cache"/ready-*
touch "$cache/ready-$ver"
echo "$cache"
