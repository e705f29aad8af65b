// Ctrl-C under `probekit run`, as bin/probekit.js receives it (a terminal sends SIGINT to the whole
// foreground group; kill -INT reaches the wrapper alone): the first is the console's ^C, SIGINT to
// the program's process group, which may catch it or die of it (exit 130, quietly, as in a shell);
// a second stops a program that ignores it. Either way what was printed stays, and the end-of-run
// reports (--stats) are still written.

import { spawn, spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const BUSYBOX = '/bin/busybox'
const SCRIPT = '/usr/bin/script'
const scratch = mkdtempSync(join(tmpdir(), 'probekit-interrupt-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/**
 * Start probekit run, send `presses` Ctrl-Cs once the program said "ready", one per "ready" seen (or,
 * with `gapMs`, the later ones that long after the first). stdin: node's pipe (a socket) left open,
 * unless a descriptor is given.
 */
function interrupted(args: string[], presses: number, opts: { stdin?: number; gapMs?: number } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((done) => {
    const child = spawn(process.execPath, [bin, 'run', ...args], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: [opts.stdin ?? 'pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let sent = 0
    let first = 0
    const press = () => {
      sent++
      if (sent === 1) first = Date.now()
      child.kill('SIGINT')
    }
    // Both are pipes ('pipe' above): never null.
    child.stdout?.on('data', (d) => {
      stdout += d
      const ready = stdout.split('ready').length - 1
      if (opts.gapMs !== undefined) {
        if (ready > 0 && sent === 0) {
          press()
          for (let i = 1; i < presses; i++) setTimeout(press, opts.gapMs * i)
        }
        return
      }
      while (sent < Math.min(ready, presses)) press()
    })
    child.stderr?.on('data', (d) => {
      stderr += d
    })
    child.on('exit', (code) => done({ code, stdout, stderr, ms: Date.now() - first }))
  })
}

describe.skipIf(!existsSync(BUSYBOX))('probekit run: Ctrl-C', () => {
  it('the program dies of SIGINT: exit 130, no message, --stats still printed', {
    timeout: 120_000,
  }, async () => {
    const r = await interrupted(
      ['-p', 'p:myopen do_sys_open', '--stats', BUSYBOX, 'sh', '-c', 'echo ready; while :; do :; done'],
      1,
    )
    expect(r.stdout).toBe('ready\n')
    expect(r.stderr).toMatch(/^ {2}myopen +\d+ +0\n$/m)
    expect(r.stderr).not.toMatch(/killed by|internal error/)
    expect(r.code).toBe(130)
  })

  it('a program that catches SIGINT handles it and ends as it chooses', { timeout: 120_000 }, async () => {
    const r = await interrupted(
      [BUSYBOX, 'sh', '-c', 'trap "echo caught INT; exit 7" INT; echo ready; while :; do :; done'],
      1,
    )
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 7,
      stdout: 'ready\ncaught INT\n',
      stderr: '',
    })
  })

  it('a program that ignores SIGINT is stopped by a second Ctrl-C: one line, exit 130', {
    timeout: 120_000,
  }, async () => {
    // The trap echoes "ready" again once the first SIGINT arrived, and only then is the second sent.
    const r = await interrupted(
      [BUSYBOX, 'sh', '-c', 'trap "echo ready again" INT; echo ready; while :; do :; done'],
      2,
    )
    expect(r.stdout).toBe('ready\nready again\n')
    expect(r.stderr).toBe(`probekit: ${BUSYBOX}: interrupted (Ctrl-C twice): the run was stopped\n`)
    expect(r.code).toBe(130)
  })
})

// A program blocked reading its stdin (a terminal, or a pipe nobody writes to): the Ctrl-C is taken at
// once, not after the next line of input - the read ends as n_tty_read's does, with the signal.
describe.skipIf(!existsSync(BUSYBOX))('probekit run: Ctrl-C while the program waits for input', () => {
  const READER = [BUSYBOX, 'sh', '-c', 'echo ready; read x; echo "never $x"']

  it("stdin a socket left open (node's pipe): SIGINT ends the read, exit 130 quietly", {
    timeout: 120_000,
  }, async () => {
    const r = await interrupted(READER, 1)
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 130,
      stdout: 'ready\n',
      stderr: '',
    })
  })

  it('stdin a FIFO whose writer stays open: the same; the FIFO is left as it was (blocking)', {
    timeout: 120_000,
  }, async () => {
    const fifo = join(scratch, 'fifo')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    const fd = openSync(fifo, 'r+') // a reader and a writer: opening does not wait, and no EOF comes
    try {
      const r = await interrupted(READER, 1, { stdin: fd })
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 130,
        stdout: 'ready\n',
        stderr: '',
      })
      // The open file probekit shared with its parent is not left non-blocking (fdinfo's octal flags).
      const flags = Number.parseInt(
        /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '',
        8,
      )
      expect(flags & 0o4000).toBe(0)
    } finally {
      closeSync(fd)
    }
  })

  it('a program that catches SIGINT runs its handler while the read waits', {
    timeout: 120_000,
  }, async () => {
    const r = await interrupted(
      [BUSYBOX, 'sh', '-c', 'trap "echo caught INT; exit 7" INT; echo ready; read x; echo "never $x"'],
      1,
    )
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 7,
      stdout: 'ready\ncaught INT\n',
      stderr: '',
    })
  })

  it('a program that ignores SIGINT goes on waiting for input; a second Ctrl-C stops the run', {
    timeout: 120_000,
  }, async () => {
    const r = await interrupted([BUSYBOX, 'sh', '-c', 'trap "" INT; echo ready; read x; echo "read $x"'], 2, {
      gapMs: 1500,
    })
    expect(r.stdout).toBe('ready\n') // the read neither returned nor failed
    expect(r.stderr).toBe(`probekit: ${BUSYBOX}: interrupted (Ctrl-C twice): the run was stopped\n`)
    expect(r.code).toBe(130)
    expect(r.ms).toBeGreaterThanOrEqual(1500)
  })

  it.skipIf(!existsSync(SCRIPT))(
    'on a terminal (script(1)): ^C typed while the read waits, exit 130; typed input is read',
    {
      timeout: 120_000,
    },
    async () => {
      const line = [
        process.execPath,
        bin,
        'run',
        BUSYBOX,
        'sh',
        '-c',
        'echo ready; read x; echo "got $x"; echo ready2; read y; echo "never $y"',
      ]
        .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
        .join(' ')
      const r = await new Promise<{ code: number | null; out: string }>((done) => {
        const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'dumb', NO_COLOR: '1' }
        delete env.CI
        const c = spawn(SCRIPT, ['-qec', line, '/dev/null'], { env })
        let out = ''
        let stage = 0
        c.stdout.on('data', (d) => {
          out += d
          if (stage === 0 && out.includes('ready\r\n')) {
            stage = 1
            c.stdin.write('abc\n')
          }
          if (stage === 1 && out.includes('ready2\r\n')) {
            stage = 2
            c.stdin.write('\x03') // the terminal's VINTR: SIGINT to the foreground process group
          }
        })
        c.on('exit', (code) => done({ code, out }))
      })
      // The terminal echoes what was typed (and ^C); the program read the line, then died of the SIGINT.
      expect(r.out).toBe('ready\r\nabc\r\ngot abc\r\nready2\r\n^C')
      expect(r.code).toBe(130)
    },
  )
})
