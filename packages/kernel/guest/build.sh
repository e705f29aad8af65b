#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Rebuild the guest kernel image: guest/build.sh [OUTDIR]  (default: guest/)
#
# Writes OUTDIR/vmlinux and OUTDIR/toolchain.txt. The build is
# reproducible: fixed relative source paths (-ffile-prefix-map), no build
# id, no .comment, no timestamps, a fixed object order. The same compiler
# and binutils give the same bytes, which test/guest-image.test.ts checks.
# The symbol table is kept on purpose: kallsyms is read from it.
set -eu

GUEST=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$GUEST}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

CC=${CC:-gcc}
LD=${LD:-ld}
export SOURCE_DATE_EPOCH=0
export LC_ALL=C

# Sources, in link order (head_64.S first: startup_64 must be at _text).
SRCS="
arch/x86/kernel/head_64.S
arch/x86/entry/entry_64.S
arch/x86/entry/common.c
arch/x86/entry/syscall_64.c
arch/x86/kernel/apic.c
arch/x86/kernel/cpu/common.c
arch/x86/kernel/idt.c
arch/x86/kernel/kprobes/core.c
arch/x86/kernel/kprobes/trampoline.S
arch/x86/kernel/kprobes/jprobe.S
arch/x86/kernel/process_64.c
arch/x86/kernel/sys_x86_64.c
arch/x86/kernel/traps.c
arch/x86/lib/hypercall.S
arch/x86/lib/string.c
arch/x86/lib/usercopy_64.c
arch/x86/mm/extable.c
arch/x86/mm/fault.c
fs/exec.c
fs/namei.c
fs/open.c
fs/pipe.c
fs/read_write.c
init/main.c
kernel/exit.c
kernel/fork.c
kernel/futex/core.c
kernel/notifier.c
kernel/printk.c
kernel/signal.c
kernel/sched/core.c
kernel/sched/wait.c
kernel/sys_ni.c
kernel/time/hrtimer.c
lib/test_kprobes.c
lib/vsprintf.c
mm/mmap.c
mm/oom_kill.c
"

# The x86-64 kernel's code generation: kernel code model (everything in the
# top 2 GiB, 32-bit sign-extended addresses), no red zone (interrupts push
# onto the kernel stack), integer registers only (the emulator has no FPU
# state in the kernel), 8-byte stack alignment, frame pointers for
# unwinding (set up on entry, not shrink-wrapped past early returns: a
# probe at a function's first byte sees its frame begin), arguments built
# in memory for a callee that only passes them on are really there (no
# -fipa-modref: a probe reads them), no CET (endbr64)
# and no stack protector. Jump tables stay ON:
# do_syscall_64's switch must become an indirect jump.
CFLAGS="-std=gnu11 -O2 -ffreestanding -nostdinc -fno-pic -fno-pie -mcmodel=kernel
	-mno-red-zone -mno-sse -mno-sse2 -mno-mmx -mno-80387 -mgeneral-regs-only
	-mpreferred-stack-boundary=3 -fno-stack-protector -fno-asynchronous-unwind-tables
	-fno-unwind-tables -fcf-protection=none -fno-omit-frame-pointer
	-fno-optimize-sibling-calls -fno-shrink-wrap -fno-ipa-modref -fno-strict-aliasing -fno-common
	-fno-delete-null-pointer-checks -fno-ident -Wall -Wextra -Wno-unused-parameter
	-ffile-prefix-map=$GUEST/=
	-I include"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cd "$GUEST"
OBJS=""
for src in $SRCS; do
	obj="$TMP/$(echo "$src" | tr / _).o"
	case "$src" in
	*.S) $CC $CFLAGS -D__ASSEMBLY__ -c "$src" -o "$obj" ;;
	*.c) $CC $CFLAGS -c "$src" -o "$obj" ;;
	esac
	OBJS="$OBJS $obj"
done

$LD -T kernel.lds -nostdlib -static --build-id=none -z max-page-size=4096 \
	-z noexecstack -o "$TMP/vmlinux" $OBJS
cp "$TMP/vmlinux" "$OUT/vmlinux"

# The toolchain that produced these bytes: the reproducibility test only
# compares images built by the same one.
{
	$CC --version | head -n 1
	$LD --version | head -n 1
} > "$OUT/toolchain.txt"

echo "built $OUT/vmlinux"
