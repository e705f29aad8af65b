// task_mem (fs/proc/task_mmu.c): the Vm* lines of /proc/PID/status, from
// the mm's VMAs and page tables. Linux's counters by kind: total_vm every
// page mapped, exec_vm executable and not writable, stack_vm the stack,
// data_vm private writable memory that is not stack; VmExe is the text
// between start_code and end_code, VmLib the rest of exec_vm. Resident
// pages are counted from the page tables (file pages: in a file mapping).
// VmPeak and VmHWM are left out: no high-water marks are kept.

import { type Mm, PAGE, PROT_EXEC, PROT_WRITE } from '../../mm/mm.js'

export interface MmCounters {
  /** In pages. */
  totalVm: number
  execVm: number
  stackVm: number
  dataVm: number
  anonRss: number
  fileRss: number
  pgtables: number
}

export function mmCounters(mm: Mm): MmCounters {
  const u = mm.usage()
  let execVm = 0
  let stackVm = 0
  let dataVm = 0
  for (const v of mm.vmas) {
    const pages = (v.end - v.start) / PAGE
    if (v.kind === 'stack') stackVm += pages
    else if ((v.prot & (PROT_EXEC | PROT_WRITE)) === PROT_EXEC) execVm += pages
    else if ((v.prot & PROT_WRITE) !== 0 && !v.shared) dataVm += pages
  }
  return { ...u, execVm, stackVm, dataVm }
}

/** The task_mem lines (values in kB, "%8lu kB" after a tab). */
export function taskMem(mm: Mm): string {
  const c = mmCounters(mm)
  const layout = mm.execLayout
  // VmExe: PAGE_ALIGN(end_code) - (start_code & PAGE_MASK), in kB.
  const textKb = layout
    ? (Math.ceil(layout.endCode / PAGE) * PAGE - Math.floor(layout.startCode / PAGE) * PAGE) / 1024
    : 0
  const kb = (pages: number) => pages * (PAGE / 1024)
  const lines: [string, number][] = [
    ['VmSize', kb(c.totalVm)],
    ['VmLck', 0],
    ['VmPin', 0],
    ['VmRSS', kb(c.anonRss + c.fileRss)],
    ['RssAnon', kb(c.anonRss)],
    ['RssFile', kb(c.fileRss)],
    ['RssShmem', 0],
    ['VmData', kb(c.dataVm)],
    ['VmStk', kb(c.stackVm)],
    ['VmExe', textKb],
    ['VmLib', Math.max(0, kb(c.execVm) - textKb)],
    ['VmPTE', kb(c.pgtables)],
    ['VmSwap', 0],
  ]
  return lines.map(([name, v]) => `${name}:\t${String(v).padStart(8)} kB\n`).join('')
}
