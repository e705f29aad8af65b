// What exec leaves in the mm for /proc (mm_struct's exe_file, start_code ..
// end_data, start_stack, arg_start .. env_end and saved_auxv): read off the
// new program's stack right after the loader built it, before the program
// runs and may change it, and from the executable's program headers as
// load_elf_binary computes them.

import { imageBytes } from '../../exec/binfmt.js'
import { ET_DYN, PF_X, PT_LOAD, parseElf } from '../../exec/elf.js'
import type { Mm } from '../../mm/mm.js'
import { copyFromUser, readUserU64 } from '../../mm/user-memory.js'
import type { Directory, RegularFile, Vfs } from '../vfs.js'
import { canonicalPath } from './d-path.js'

const AT_NULL = 0
const AT_ENTRY = 9

export interface ExecLayout {
  /** exe_file and the absolute, resolved path it was executed by (/proc/PID/exe). */
  exeFile: RegularFile
  exe: string
  startCode: number
  endCode: number
  startData: number
  endData: number
  /** Where argc lies: the stack pointer the program started with. */
  startStack: number
  argStart: number
  argEnd: number
  envStart: number
  envEnd: number
  /** saved_auxv: (type, value) pairs up to and including AT_NULL. */
  auxv: readonly number[]
}

/** The address just past the NUL that ends the string at addr. */
function stringEnd(mm: Mm, addr: number): number {
  let a = addr
  while (copyFromUser(mm, a, 1)[0] !== 0) a++
  return a + 1
}

/** Record in mm what exec of `path` (relative to cwd) laid out, its initial stack at sp. */
export function saveExecLayout(
  vfs: Vfs,
  cwd: Directory,
  path: string,
  file: RegularFile,
  mm: Mm,
  sp: number,
): void {
  const word = (i: number) => readUserU64(mm, sp + 8 * i)
  const argc = word(0)
  const argv = Array.from({ length: argc }, (_, i) => word(1 + i))
  const envp: number[] = []
  let i = argc + 2
  for (let p = word(i); p !== 0; p = word(++i)) envp.push(p)
  const auxv: number[] = []
  for (i++; ; i += 2) {
    auxv.push(word(i), word(i + 1))
    if (word(i) === AT_NULL) break
  }
  const argEnd = argc > 0 ? stringEnd(mm, argv[argc - 1]) : envp.length > 0 ? envp[0] : sp
  const envStart = envp.length > 0 ? envp[0] : argEnd
  // load_elf_binary's bounds: the lowest executable and the highest segment start, the ends of their file parts.
  const elf = parseElf(imageBytes(file))
  let atEntry = elf.entry
  for (let k = 0; k < auxv.length; k += 2) if (auxv[k] === AT_ENTRY) atEntry = auxv[k + 1]
  const bias = elf.type === ET_DYN ? atEntry - elf.entry : 0
  let startCode = Number.MAX_SAFE_INTEGER
  let endCode = 0
  let startData = 0
  let endData = 0
  for (const ph of elf.programHeaders) {
    if (ph.type !== PT_LOAD) continue
    if ((ph.flags & PF_X) !== 0) {
      startCode = Math.min(startCode, ph.vaddr)
      endCode = Math.max(endCode, ph.vaddr + ph.filesz)
    }
    startData = Math.max(startData, ph.vaddr)
    endData = Math.max(endData, ph.vaddr + ph.filesz)
  }
  if (startCode === Number.MAX_SAFE_INTEGER) startCode = 0
  mm.execLayout = {
    exeFile: file,
    exe: canonicalPath(vfs, path, cwd) ?? path,
    startCode: startCode + bias,
    endCode: endCode + bias,
    startData: startData + bias,
    endData: endData + bias,
    startStack: sp,
    argStart: argc > 0 ? argv[0] : argEnd,
    argEnd,
    envStart,
    envEnd: envp.length > 0 ? stringEnd(mm, envp[envp.length - 1]) : envStart,
    auxv,
  }
}
