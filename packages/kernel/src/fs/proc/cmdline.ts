// /proc/PID/cmdline, environ and auxv (fs/proc/base.c): the bytes of the
// process's own memory between arg_start and arg_end, env_start and
// env_end (read as access_remote_vm reads them, so a program that rewrites
// its argv strings is seen rewritten), and the saved auxiliary vector.
// A process without an mm (a zombie) shows nothing.

import { copyFromUser } from '../../mm/user-memory.js'
import type { Task } from '../../sched/task.js'

const EMPTY = new Uint8Array(0)

/**
 * get_mm_cmdline: argv's strings as they are now. When the last byte of the
 * argument area is no NUL (setproctitle wrote over it, perhaps on into the
 * environment), get_mm_proctitle's answer: the one string from arg_start.
 */
export function showCmdline(t: Task): Uint8Array {
  const layout = t.mm.execLayout
  if (t.state === 'zombie' || !layout || layout.argEnd <= layout.argStart) return EMPTY
  const args = copyFromUser(t.mm, layout.argStart, layout.argEnd - layout.argStart)
  if (args[args.length - 1] === 0) return args
  const end = layout.envStart === layout.argEnd ? layout.envEnd : layout.argEnd
  const title = copyFromUser(t.mm, layout.argStart, end - layout.argStart)
  const nul = title.indexOf(0)
  return nul < 0 ? title : title.subarray(0, nul)
}

export function showEnviron(t: Task): Uint8Array {
  const layout = t.mm.execLayout
  if (t.state === 'zombie' || !layout) return EMPTY
  return copyFromUser(t.mm, layout.envStart, layout.envEnd - layout.envStart)
}

/** auxv_read: saved_auxv as native unsigned longs, AT_NULL included. */
export function showAuxv(t: Task): Uint8Array {
  const layout = t.mm.execLayout
  if (t.state === 'zombie' || !layout) return EMPTY
  const out = new Uint8Array(layout.auxv.length * 8)
  const v = new DataView(out.buffer)
  layout.auxv.forEach((w, i) => {
    v.setBigUint64(i * 8, BigInt.asUintN(64, BigInt(w)), true)
  })
  return out
}
