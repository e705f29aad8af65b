// A lock between processes on this machine: a directory (mkdir is atomic)
// holding the owner's pid. Builds of the site run in parallel (the test files
// each build it), and only one of them may regenerate the API reference.

import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** A lock whose owner died is taken over; one that was never completed, after this long. */
const UNFINISHED_LOCK_MS = 60_000

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

function isStale(lock: string): boolean {
  let pid: number
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'))
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs > UNFINISHED_LOCK_MS
    } catch {
      return false // released meanwhile
    }
  }
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return errorCode(error) === 'ESRCH'
  }
}

/** Runs `fn` holding the lock directory `lock`, waiting up to `timeoutMs` for it. */
export async function withDirLock<T>(lock: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error
    }
    if (isStale(lock)) {
      rmSync(lock, { recursive: true, force: true })
      continue
    }
    if (Date.now() > deadline) {
      throw new Error(`${lock} is still held by another process; remove it if no docs build is running`)
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  try {
    writeFileSync(join(lock, 'pid'), String(process.pid))
    return await fn()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
