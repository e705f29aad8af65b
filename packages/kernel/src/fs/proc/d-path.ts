// d_path for /proc: the name a file is reached by, as an absolute path with
// no ".", ".." or symbolic link in it. Inodes here do not know their names
// (no dentries), so the name is the path the file was opened or executed
// by, made absolute and resolved, and then checked: it must still lead to
// the same inode. A file whose last link is gone is "PATH (deleted)", as on
// Linux; one renamed since keeps the name it was opened by.

import { Directory, type Inode, Symlink, type Vfs } from '../vfs.js'

/** MAXSYMLINKS: links followed in one resolution. */
const MAX_LINKS = 40

/** The path with every symbolic link resolved (null when it does not resolve). */
export function canonicalPath(vfs: Vfs, path: string, cwd: Directory): string | null {
  const names: string[] = []
  const dirs: Directory[] = [vfs.root]
  if (!path.startsWith('/')) {
    const base = vfs.pathOf(cwd)
    for (const name of base.split('/').filter((p) => p !== '')) {
      const next = dirs[dirs.length - 1].child(name)
      if (!(next instanceof Directory)) return null
      names.push(name)
      dirs.push(next)
    }
  }
  const pending = path.split('/').filter((p) => p !== '' && p !== '.')
  let links = 0
  while (pending.length > 0) {
    const name = pending.shift() as string
    const dir = dirs[dirs.length - 1]
    if (name === '..') {
      if (names.length > 0) {
        names.pop()
        dirs.pop()
      }
      continue
    }
    const next = dir.child(name)
    if (!next) return null
    if (next instanceof Symlink) {
      if (++links > MAX_LINKS) return null
      if (next.target.startsWith('/')) {
        names.length = 0
        dirs.length = 1
      }
      pending.unshift(...next.target.split('/').filter((p) => p !== '' && p !== '.'))
      continue
    }
    names.push(name)
    if (next instanceof Directory) dirs.push(next)
    else if (pending.length > 0) return null
  }
  return `/${names.join('/')}`
}

/** The name of a file that `path` (relative to cwd) reached when it was opened. */
export function dPath(vfs: Vfs, cwd: Directory, path: string, inode: Inode): string {
  const p = canonicalPath(vfs, path, cwd)
  if (p !== null && vfs.lookup(p) === inode) return p
  return inode.nlink === 0 ? `${p ?? path} (deleted)` : (p ?? path)
}
