// What execve runs (fs/exec.c's search_binary_handler and
// fs/binfmt_script.c): the file must be a regular file with an execute
// bit (EACCES otherwise); one starting with "#!" names its interpreter,
// which runs with the optional argument and the script's path before the
// original arguments, up to five scripts deep (ELOOP past that); anything
// else goes to binfmt_elf (exec-loader.ts).

import { EACCES, ELOOP, ENOENT, ENOEXEC, ENOMEM } from '../errno.js'
import { Directory, RegularFile, type Vfs } from '../fs/vfs.js'
import { utf8Decode } from '../utf8.js'
import type { ExecImage } from './exec-loader.js'

/** BINPRM_BUF_SIZE: how much of the file binfmt_script sees. */
const BINPRM_BUF_SIZE = 256
const MAX_DEPTH = 5

export interface BinaryImage extends ExecImage {
  /** The file that runs (the interpreter, for a script). */
  path: string
  argv: string[]
}

/** Open an executable as execve does (do_open_execat's checks): its image, or -errno. */
export function openExec(
  vfs: Vfs,
  path: string,
  cwd: Directory,
  root: Directory = vfs.root,
): { file: RegularFile; bytes: Uint8Array } | number {
  // getname: an empty name is no file (not the working directory).
  if (path === '') return -ENOENT
  const node = vfs.lookup(path, cwd, false, root)
  if (typeof node === 'number') return node
  if (node instanceof Directory || !(node instanceof RegularFile)) return -EACCES
  // Root may run a file with any execute bit (and no other).
  if ((node.mode & 0o111) === 0) return -EACCES
  // The loader reads the image whole: one larger than the guest's RAM could never be mapped.
  if (node.size() > vfs.shmem.maxRead) return -ENOMEM
  return { file: node, bytes: imageBytes(node) }
}

/**
 * A tmpfs file's bytes as of its current version: a program run again (every exec of a
 * shell's commands) is not copied out of its pages again, 1-2 MiB each time for bash-static or
 * busybox. A host file is read each time, as the host may change it under the run.
 */
const images = new WeakMap<RegularFile, { version: number; bytes: Uint8Array }>()
export function imageBytes(file: RegularFile): Uint8Array {
  if (Object.getPrototypeOf(file) !== RegularFile.prototype) return file.contents()
  const hit = images.get(file)
  if (hit !== undefined && hit.version === file.version) return hit.bytes
  const bytes = file.contents()
  images.set(file, { version: file.version, bytes })
  return bytes
}

/**
 * search_binary_handler: resolve scripts to their interpreters (argv
 * rewritten as load_script does) down to the binary that really runs.
 */
export function resolveBinary(
  vfs: Vfs,
  path: string,
  argv: readonly string[],
  cwd: Directory,
  root: Directory = vfs.root,
): BinaryImage | number {
  let current = { path, argv: [...argv] }
  for (let depth = 0; ; depth++) {
    const img = openExec(vfs, current.path, cwd, root)
    if (typeof img === 'number') return img
    if (img.bytes[0] !== 0x23 || img.bytes[1] !== 0x21) return { ...img, ...current }
    if (depth === MAX_DEPTH) return -ELOOP
    const line = scriptLine(img.bytes)
    if (typeof line === 'number') return line
    // The interpreter, its one optional argument, then the script as execve named it, then argv[1..].
    current = {
      path: line.interpreter,
      argv: [
        line.interpreter,
        ...(line.arg !== null ? [line.arg] : []),
        current.path,
        ...current.argv.slice(1),
      ],
    }
  }
}

/** The "#!interpreter [arg]" line: the interpreter, and the rest of the line as one argument. */
function scriptLine(bytes: Uint8Array): { interpreter: string; arg: string | null } | number {
  const buf = bytes.subarray(2, BINPRM_BUF_SIZE)
  const nl = buf.indexOf(0x0a)
  const text = utf8Decode(nl < 0 ? buf : buf.subarray(0, nl)).replace(/\0.*$/s, '')
  const trimmed = text.replace(/^[ \t]+/, '').replace(/[ \t]+$/, '')
  if (trimmed === '') return -ENOEXEC
  const sp = trimmed.search(/[ \t]/)
  // An interpreter name cut off by the end of the buffer cannot be run (a cut argument is kept).
  if (nl < 0 && sp < 0 && bytes.length > BINPRM_BUF_SIZE) return -ENOEXEC
  if (sp < 0) return { interpreter: trimmed, arg: null }
  return { interpreter: trimmed.slice(0, sp), arg: trimmed.slice(sp).replace(/^[ \t]+/, '') }
}
