# vm-host.sh - host side of the qemu test bed, sourced by tests/vm/run-vm.sh
# and bench/run-bench.sh. Self-contained: nothing here reads
# /work/shared at run time.
#
#   vm_require_host        root? packages (installed quietly when missing)?
#                          a Debian 6.1 kernel? sets VM_KVER; returns 77 with
#                          VM_SKIP_REASON when the VM cannot run here.
#   vm_initramfs WORKDIR   builds (or reuses) the busybox initramfs that
#                          mounts the host's / read-only over 9p under a
#                          tmpfs overlay; sets VM_INITRD.
#   vm_boot LOG TIMEOUT GUEST [ARG=VALUE...]
#                          boots the guest with GUEST as PID 1, guest
#                          arguments passed as vmarg_ARG=VALUE on the kernel
#                          command line; the console (CR stripped) goes to
#                          LOG. qemu runs in its own process group, which is
#                          killed on timeout, on SIGINT/SIGTERM/SIGHUP and
#                          (via PR_SET_PDEATHSIG) when this shell dies.
#                          Returns 0, or 124 on timeout, else qemu's status.

VM_PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static kmod cpio iproute2
 rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest fio
 nfs-kernel-server nfs-common rpcbind util-linux perl procps coreutils nftables attr e2fsprogs"
VM_MEM=${VM_MEM:-3072}
VM_QEMU_PGID=

vm_log() { echo "vm: $*" >&2; }

vm_missing_packages() {
	local p missing=
	for p in $VM_PACKAGES; do
		[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] ||
			missing="$missing $p"
	done
	echo $missing
}

# Installs the packages the guest needs (idempotent, quiet). Package scripts
# are kept from starting daemons on the host (policy-rc.d, as install.sh).
vm_install_packages() {
	local missing log prc=
	missing=$(vm_missing_packages)
	[ -n "$missing" ] || return 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		VM_SKIP_REASON="missing packages ($missing) and cannot install them (need root and apt-get)"
		return 77
	fi
	log=$(mktemp /tmp/rnfsd-vm-apt.XXXXXX)
	vm_log "installing:$missing (log $log)"
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		prc=1
	fi
	if ! { apt-get update -qq &&
	       DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			$VM_PACKAGES; } > "$log" 2>&1; then
		tail -n 20 "$log" >&2
	fi
	[ -z "$prc" ] || rm -f /usr/sbin/policy-rc.d
	missing=$(vm_missing_packages)
	if [ -n "$missing" ]; then
		VM_SKIP_REASON="packages still missing after apt-get install:$missing (see $log)"
		return 77
	fi
	rm -f "$log"
	return 0
}

vm_kernel_version() {
	local k
	for k in $(ls /lib/modules 2>/dev/null | grep -E '^6\.1\.[0-9]+-[0-9]+-amd64$' | sort -rV); do
		if [ -r "/boot/vmlinuz-$k" ] && [ -d "/lib/modules/$k/kernel" ]; then
			echo "$k"
			return 0
		fi
	done
	return 1
}

vm_require_host() {
	VM_SKIP_REASON=
	if [ "$(uname -m)" != x86_64 ]; then
		VM_SKIP_REASON="host is $(uname -m), the test bed needs x86_64"
		return 77
	fi
	if [ "$(id -u)" != 0 ]; then
		VM_SKIP_REASON="needs root (qemu's 9p export of / and apt-get)"
		return 77
	fi
	vm_install_packages || return 77
	if ! qemu-system-x86_64 -version >/dev/null 2>&1; then
		VM_SKIP_REASON="qemu-system-x86_64 does not run"
		return 77
	fi
	VM_KVER=$(vm_kernel_version) || {
		VM_SKIP_REASON="no Debian 6.1 kernel (/boot/vmlinuz-6.1.*-amd64 + modules) after install"
		return 77
	}
	return 0
}

# The initramfs /init: modules for virtio-9p and overlay, the host's / at
# /lower (read-only), a tmpfs upper layer, then switch_root into the guest
# script named by testscript= on the kernel command line.
vm_init_script() {
	cat <<'EOF'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for ko in $(cat /modlist); do insmod $ko; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower || poweroff -f
mount -t tmpfs -o size=1536m tmpfs /rw; mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot || poweroff -f
# The dynamic linker's cache copied up now: an apt run on the host during the
# guest's life rewrites it, and a read of it half rewritten fails every exec.
cp /newroot/etc/ld.so.cache /newroot/etc/ld.so.cache.boot && mv /newroot/etc/ld.so.cache.boot /newroot/etc/ld.so.cache
for a in $(cat /proc/cmdline); do case $a in testscript=*) T=${a#testscript=};; esac; done
[ -x "/newroot$T" ] || { echo "@@ FAIL boot: guest script $T not found"; poweroff -f; }
mount --move /dev /newroot/dev; umount /proc /sys
exec switch_root /newroot $T
EOF
}

vm_initramfs() {
	local work=$1 key r m ko
	key=$( { echo "$VM_KVER"; vm_init_script; } | sha256sum | cut -c1-12)
	VM_INITRD=$work/initramfs-$VM_KVER-$key.cpio.gz
	[ -s "$VM_INITRD" ] && return 0
	mkdir -p "$work"
	r=$(mktemp -d "$work/initramfs.XXXXXX")
	mkdir -p "$r"/bin "$r"/dev "$r"/proc "$r"/sys "$r"/lower "$r"/rw "$r"/newroot
	mkdir -p "$r"/lib/modules
	cp /bin/busybox "$r/bin/busybox"
	for a in sh mount umount mkdir insmod switch_root cat echo sleep poweroff cp mv; do
		ln -s busybox "$r/bin/$a"
	done
	: > "$r/modlist"
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -S "$VM_KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' | while read -r ko; do
		cp "$ko" "$r/lib/modules/"
		echo "/lib/modules/$(basename "$ko")" >> "$r/modlist"
	done
	if [ ! -s "$r/modlist" ]; then
		vm_log "no virtio/9p modules found for $VM_KVER"
		rm -rf "$r"
		return 1
	fi
	vm_init_script > "$r/init"
	chmod +x "$r/init"
	(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$VM_INITRD.tmp" &&
		mv "$VM_INITRD.tmp" "$VM_INITRD"
	rm -rf "$r"
	[ -s "$VM_INITRD" ]
}

vm_kill_qemu() {
	[ -n "$VM_QEMU_PGID" ] || return 0
	kill -TERM -- "-$VM_QEMU_PGID" 2>/dev/null
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 -- "-$VM_QEMU_PGID" 2>/dev/null || break
		sleep 0.5
	done
	kill -KILL -- "-$VM_QEMU_PGID" 2>/dev/null
	VM_QEMU_PGID=
}

vm_on_signal() {
	vm_kill_qemu
	exit 1
}

vm_boot() {
	local log=$1 timeout=$2 guest=$3 append a rc=0 start pid
	shift 3
	append="console=ttyS0 panic=-1 loglevel=4 testscript=$guest"
	for a in "$@"; do
		case $a in
		*" "*) vm_log "guest argument with a space: '$a'"; return 2;;
		esac
		append="$append vmarg_$a"
	done
	rm -f "$log" "$log.raw"
	trap vm_on_signal INT TERM HUP
	# setsid: qemu leads its own process group (killed as a whole);
	# setpriv --pdeathsig: qemu dies with this shell even on SIGKILL.
	setsid setpriv --pdeathsig KILL \
		qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m "$VM_MEM" \
		-display none -nodefaults -no-reboot -monitor none -nic none \
		-serial "file:$log.raw" \
		-kernel "/boot/vmlinuz-$VM_KVER" -initrd "$VM_INITRD" \
		-append "$append" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		< /dev/null > "$log.qemu" 2>&1 &
	pid=$!
	VM_QEMU_PGID=$(ps -o pgid= -p "$pid" | tr -d ' ')
	[ -n "$VM_QEMU_PGID" ] || VM_QEMU_PGID=$pid
	start=$SECONDS
	while kill -0 "$pid" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$timeout" ]; then
			vm_log "guest still running after ${timeout}s: killing qemu (process group $VM_QEMU_PGID)"
			vm_kill_qemu
			rc=124
			break
		fi
		sleep 1
	done
	if [ "$rc" = 0 ]; then
		wait "$pid"
		rc=$?
	else
		wait "$pid" 2>/dev/null
	fi
	VM_QEMU_PGID=
	trap - INT TERM HUP
	{ tr -d '\r' < "$log.raw"; [ -s "$log.qemu" ] && sed 's/^/qemu: /' "$log.qemu"; } > "$log"
	rm -f "$log.raw" "$log.qemu"
	VM_BOOT_SECONDS=$((SECONDS - start))
	return "$rc"
}
