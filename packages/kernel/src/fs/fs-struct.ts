// struct fs_struct (include/linux/fs_struct.h): a task's root and working directory. Tasks cloned with
// CLONE_FS (threads) share one, so a chdir or chroot in one is seen by all; fork copies it. The root
// is where an absolute path, an absolute symbolic link and ".." at the top stop (nd->root): chroot(2)
// moves it; null is the file system's own root, which nothing goes above.

import type { Task } from '../sched/task.js'
import type { Directory, Vfs } from './vfs.js'

export class FsStruct {
  /** The root path walks start from and ".." stops at (null: the file system's). */
  root: Directory | null = null
  /** The working directory (set when the first task is made, then inherited). */
  cwd!: Directory

  /** copy_fs_struct: what fork without CLONE_FS gives the child. */
  copy(): FsStruct {
    const fs = new FsStruct()
    fs.root = this.root
    fs.cwd = this.cwd
    return fs
  }
}

/** The task's root directory (current->fs->root). */
export function taskRoot(vfs: Vfs, task: Task): Directory {
  return task.fs.root ?? vfs.root
}

/** The name of dir under dir's parent (inodes keep no names: the parent's entries are searched). */
function nameIn(parent: Directory, dir: Directory): string | undefined {
  for (const [name, node] of parent.children) if (node === dir) return name
  return undefined
}

/**
 * prepend_path: dir's path as seen from root. Unreachable (false) when the walk up reaches the file
 * system's root without meeting root: the path is then the whole one from the file system's root,
 * as d_path gives it.
 */
export function pathFromRoot(
  vfs: Vfs,
  dir: Directory,
  root: Directory,
): { path: string; reachable: boolean } {
  const parts: string[] = []
  let d = dir
  while (d !== root && d !== vfs.root && d.parent) {
    const name = nameIn(d.parent, d)
    if (name === undefined) break
    parts.unshift(name)
    d = d.parent
  }
  return { path: `/${parts.join('/')}`, reachable: d === root }
}

/** d_path of a directory for the task looking at it (its root): /proc's links to directories. */
export function dPathDir(vfs: Vfs, dir: Directory, viewer: Task | null): string {
  return pathFromRoot(vfs, dir, viewer ? taskRoot(vfs, viewer) : vfs.root).path
}

/** getcwd's text: the cwd from the task's root, "(unreachable)" before it when the cwd lies outside (a chroot it left). */
export function cwdPath(vfs: Vfs, task: Task): string {
  const { path, reachable } = pathFromRoot(vfs, task.cwd, taskRoot(vfs, task))
  return reachable ? path : `(unreachable)${path}`
}
