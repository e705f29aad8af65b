#!/bin/sh
# Determinism, the long run (issue 17): the kernel's bash-static and busybox-static
# suites, each case N times in one process in a shuffled order, optionally under
# CPU load; every run must give identical output, status and counts.
#   tools/determinism.sh [--runs 20] [--load 0|N|cpus] [--suite bash|busybox|all]
# See packages/kernel/README.md, Determinism, for the figures.
cd "$(dirname "$0")/../packages/kernel" &&
  exec node --conditions=@probekit/source --import tsx bench/determinism.ts "$@"
