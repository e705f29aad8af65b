// /proc/meminfo (fs/proc/meminfo.c): "Label:" padded to 16 columns, the
// value in kB in 8 (show_val_kb). MemTotal is the machine's memory,
// MemFree what the frame allocator has not handed out; nothing here is
// reclaimable (page cache frames stay), so MemAvailable is MemFree. No
// swap, no block devices (Buffers 0). Counters not kept here are left out.

import type { Machine } from '@probekit/x86-emu'

export function showMeminfo(machine: Machine): string {
  const totalKb = machine.memory.size / 1024
  const freeKb = totalKb - machine.frames.used * 4
  const lines: [string, number][] = [
    ['MemTotal', totalKb],
    ['MemFree', freeKb],
    ['MemAvailable', freeKb],
    ['Buffers', 0],
    ['SwapCached', 0],
    ['SwapTotal', 0],
    ['SwapFree', 0],
  ]
  return lines.map(([label, kb]) => `${`${label}:`.padEnd(16)}${String(kb).padStart(8)} kB\n`).join('')
}
