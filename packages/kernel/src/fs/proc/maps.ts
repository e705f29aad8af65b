// /proc/PID/maps (fs/proc/task_mmu.c show_map_vma): one line a VMA,
//   start-end perms offset major:minor inode
// as show_vma_header_prefix prints it ("%08lx-%08lx %c%c%c%c %08llx
// %02x:%02x %lu "), then, for a named mapping, spaces up to column 73
// (seq_setwidth(25 + 6 * sizeof(void *) - 1) and seq_pad) and the name:
// the file's path, [heap] or [stack]. Files are on device 00:01, the
// st_dev stat reports. VMAs that Linux's vma_merge would have joined
// (adjacent, same kind, rights and sharing, the same file at a
// continuing offset) print as one line, as they are one VMA on Linux:
// brk and mmap here add a VMA per call.

import type { Kernel } from '../../kernel.js'
import { PROT_EXEC, PROT_READ, PROT_WRITE, type Vma } from '../../mm/mm.js'
import type { Task } from '../../sched/task.js'
import { dPath } from './d-path.js'

const NAME_COLUMN = 25 + 6 * 8 - 1
/** The st_dev of every file here (major 0, minor 1). */
const FILE_DEV = '00:01'

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')

function mergeable(a: Vma, b: Vma): boolean {
  return (
    a.end === b.start &&
    a.kind === b.kind &&
    a.prot === b.prot &&
    a.shared === b.shared &&
    a.name === b.name &&
    a.file === b.file &&
    (a.file === undefined || (a.pgoff ?? 0) + (a.end - a.start) === (b.pgoff ?? 0))
  )
}

/** The VMAs as Linux would hold them: mergeable neighbours joined. */
export function mergedVmas(vmas: readonly Vma[]): Vma[] {
  const out: Vma[] = []
  for (const v of vmas) {
    const last = out[out.length - 1]
    if (last && mergeable(last, v)) out[out.length - 1] = { ...last, end: v.end }
    else out.push(v)
  }
  return out
}

/** The name show_map_vma prints: the file's path (seq_file_path escapes newlines), or the VMA's own name. */
function vmaName(kernel: Kernel, task: Task, v: Vma): string {
  if (!v.file) return v.name
  const layout = task.mm.execLayout
  const path = layout && v.file === layout.exeFile ? layout.exe : dPath(kernel.vfs, task.cwd, v.name, v.file)
  return path.replaceAll('\n', '\\012')
}

export function showMaps(kernel: Kernel, task: Task): string {
  if (task.state === 'zombie') return ''
  let out = ''
  for (const v of mergedVmas(task.mm.vmas)) {
    const perms =
      ((v.prot & PROT_READ) !== 0 ? 'r' : '-') +
      ((v.prot & PROT_WRITE) !== 0 ? 'w' : '-') +
      ((v.prot & PROT_EXEC) !== 0 ? 'x' : '-') +
      (v.shared ? 's' : 'p')
    const pgoff = v.file ? (v.pgoff ?? 0) : 0
    const dev = v.file ? FILE_DEV : '00:00'
    const line = `${hex(v.start, 8)}-${hex(v.end, 8)} ${perms} ${hex(pgoff, 8)} ${dev} ${v.file ? kernel.vfs.inoOf(v.file) : 0} `
    const name = vmaName(kernel, task, v)
    out += name === '' ? `${line}\n` : `${line.padEnd(NAME_COLUMN)} ${name}\n`
  }
  return out
}
