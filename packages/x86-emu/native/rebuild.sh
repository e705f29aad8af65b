#!/bin/sh
# Rebuild every native artefact of @probekit/x86-emu:
#   regs-oracle                 the register oracle (static glibc)
#   sse-oracle                  the same with XMM registers and MXCSR (static glibc)
#   workloads/<name>-bare       freestanding ELF for the emulator (vmcall ABI);
#                               intmix and selfcheck integer-only, fpmix SSE2
#   workloads/<name>-native     the same source as a normal static program
#   workloads/expected/<name>.stdout, .status   what the native build prints and
#                               exits with (the reference for the bare build)
#   TOOLCHAIN                   gcc, binutils and glibc versions used
#
# Usage: native/rebuild.sh [OUTDIR]   (default: this directory, in place)
#
# The build is reproducible: it runs from this directory with relative source
# paths, maps the prefix away, has no build-id, and strips the glibc programs.
# Byte identity with the committed files needs the same toolchain; the one
# used is recorded in TOOLCHAIN (and test/workloads.test.ts checks it).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE}
mkdir -p "$OUT/workloads"
OUT=$(cd "$OUT" && pwd)
cd "$HERE"

CC=${CC:-gcc}
export LC_ALL=C SOURCE_DATE_EPOCH=0

BASE="-O2 -fno-pic -no-pie -fno-stack-protector -fcf-protection=none -fno-asynchronous-unwind-tables \
-fno-unwind-tables -ffile-prefix-map=$HERE=. -Wall -Wextra -Werror"
LINK="-static -Wl,--build-id=none -Wl,-z,noexecstack"

# The oracle.
$CC $BASE -frandom-seed=regs-oracle -o "$OUT/regs-oracle" regs-oracle.c $LINK -s
$CC $BASE -frandom-seed=sse-oracle -o "$OUT/sse-oracle" sse-oracle.c $LINK -s

# Workloads: the code generation flags are the same for both builds; only the
# platform layer differs. -mgeneral-regs-only keeps SSE out (these measure and
# test the integer core); -fno-tree-loop-distribute-patterns keeps gcc from turning the
# bare build's byte loops in memcpy/memset into calls to themselves.
WFLAGS="-mgeneral-regs-only -fno-tree-loop-distribute-patterns"
BARE="-ffreestanding -nostdlib -DPLATFORM_BARE -Wl,-Ttext-segment=0x400000 -Wl,-z,norelro"

build() {
  name=$1
  shift
  $CC $BASE "$@" -frandom-seed="$name" $BARE -o "$OUT/workloads/$name-bare" "workloads/$name.c" $LINK -lgcc
  $CC $BASE "$@" -frandom-seed="$name" -o "$OUT/workloads/$name-native" "workloads/$name.c" $LINK -s
}

build intmix $WFLAGS
build selfcheck $WFLAGS -mmemcpy-strategy=rep_byte:-1:noalign -mmemset-strategy=rep_8byte:-1:noalign
# The floating-point workload: SSE2 (the x86-64 baseline) at -O3, so gcc
# vectorises its double loops; no -ffast-math, so results are exact IEEE.
build fpmix -O3 -fno-math-errno -fno-tree-loop-distribute-patterns
# The two loops the performance issue compares with Unicorn on the same bytes.
build calls $WFLAGS
build crcloop $WFLAGS

# Reference output: what the native builds print and exit with.
mkdir -p "$OUT/workloads/expected"
for name in intmix selfcheck fpmix calls crcloop; do
  status=0
  "$OUT/workloads/$name-native" >"$OUT/workloads/expected/$name.stdout" || status=$?
  echo "$status" >"$OUT/workloads/expected/$name.status"
done

{
  $CC --version | head -n 1
  ld --version | head -n 1
  ldd --version | head -n 1
} >"$OUT/TOOLCHAIN"

# The integer bare builds must not contain SSE/AVX/x87/MMX instructions.
for f in "$OUT"/workloads/intmix-bare "$OUT"/workloads/selfcheck-bare "$OUT"/workloads/calls-bare "$OUT"/workloads/crcloop-bare; do
  if objdump -d --no-show-raw-insn "$f" | grep -Eq '%[xyz]mm|%mm[0-7]|%st\b|\bf(ld|st|add|mul|div)'; then
    echo "rebuild.sh: $f contains vector or x87 instructions" >&2
    exit 1
  fi
done
