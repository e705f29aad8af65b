// probekit run's progress line (src/progress.ts): a long run on an
// interactive terminal shows the guest instructions run so far and the
// elapsed time, erased before every line the guest or a probe writes there,
// so the terminal ends up showing exactly what a run without it shows; in a
// pipe (or under CI, with --json, with --no-progress) not one byte of it.
// The terminal is util-linux script(1)'s pseudo-terminal; what it recorded
// is played on a small terminal model (cursor moves and erases, the escape
// sequences the line uses) to see what a person would see. Skipped where
// script(1) or Debian's busybox-static is absent.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const BUSYBOX = '/bin/busybox'
const SCRIPT = '/usr/bin/script'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const available =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  existsSync(SCRIPT) &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))
if (!available) console.warn(`run-progress: skipped, needs Linux x86-64, ${SCRIPT} and a static ${BUSYBOX}`)

/** Long enough (seconds of emulation) for the line to be drawn many times between its lines of output. */
const GUEST = [
  BUSYBOX,
  'sh',
  '-c',
  'echo start; i=0; while [ $i -lt 400 ]; do i=$((i+1)); [ $((i % 100)) = 0 ] && echo "at $i"; done; echo end',
]
/** A kernel probe on every write(2), so trace lines reach the terminal too (stderr). */
const PROBE = ['-p', 'p:w ksys_write fd=$arg1:s32 count=$arg3:u64']
const PROGRESS = /guest instructions, \d+\.\d s/
/** What the guest writes. */
const OUTPUT = 'start\nat 100\nat 200\nat 300\nat 400\nend\n'
/** One trace line per write(2): the guest's lines, one write each (a terminal makes its stdout line-buffered). */
const TRACE_LINE =
  /^\s+busybox-1\s+\[000\] d\.\.\.\.\s+\d+\.\d{6}: w: \(ksys_write\+0x0\/0x[0-9a-f]+\) fd=1 count=\d+$/

const shellQuote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`

/** The environment of a person at a terminal: not CI, no forced colours. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', SHELL: '/bin/sh', ...extra }
  for (const k of ['CI', 'FORCE_COLOR', 'NO_COLOR', 'FORCE_TTY', 'COLUMNS']) if (!(k in extra)) delete env[k]
  return env
}

const probekitLine = (args: readonly string[]) =>
  [process.execPath, bin, 'run', '--mount', '/bin', ...args].map(shellQuote).join(' ')

/** probekit run ARGS on a pseudo-terminal (stdin, stdout and stderr), with a shell redirection if given: the bytes the terminal got. */
function onTerminal(args: readonly string[], opts: { redirect?: string; env?: Record<string, string> } = {}) {
  const line = `${probekitLine(args)}${opts.redirect ? ` ${opts.redirect}` : ''}`
  const r = spawnSync(SCRIPT, ['-qec', line, '/dev/null'], {
    env: userEnv(opts.env),
    encoding: 'utf8',
    timeout: 300_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  if (r.error) throw r.error
  return { status: r.status, out: r.stdout, err: r.stderr }
}

/** probekit run ARGS with stdout and stderr pipes. */
function piped(args: readonly string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [bin, 'run', '--mount', '/bin', ...args], {
    env: userEnv(env),
    encoding: 'utf8',
    timeout: 300_000,
  })
  if (r.error) throw r.error
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/**
 * What a terminal shows after these bytes: printable characters overwrite cells, CR and LF move
 * the cursor, CSI n G moves it to a column, CSI K erases; synchronized-output brackets (CSI ? 2026
 * h/l) change nothing on the screen. Any other control sequence fails: the line uses no other.
 */
function screen(bytes: string): string {
  const lines: string[][] = [[]]
  let row = 0
  let col = 0
  for (let i = 0; i < bytes.length; ) {
    const ch = bytes[i]
    if (ch === '\x1b') {
      // CSI: ESC [ (? for a private mode) parameters, a final letter.
      const m = /^\[(\??)([0-9;]*)([A-Za-z])/.exec(bytes.slice(i + 1, i + 16))
      if (!m) throw new Error(`unexpected escape at ${i}: ${JSON.stringify(bytes.slice(i, i + 16))}`)
      const [seq, priv, arg, fin] = m
      const line = lines[row]
      if (priv === '?' && arg === '2026' && (fin === 'h' || fin === 'l')) {
        // synchronized output: no effect on the cells
      } else if (priv === '' && fin === 'G') col = Math.max(0, Number(arg || '1') - 1)
      else if (priv === '' && fin === 'K' && (arg === '' || arg === '0'))
        line.length = Math.min(line.length, col)
      else if (priv === '' && fin === 'K' && arg === '2') line.length = 0
      else throw new Error(`unexpected control sequence ${JSON.stringify(`\x1b${seq}`)}`)
      i += 1 + seq.length
      continue
    }
    if (ch === '\r') col = 0
    else if (ch === '\n') {
      row++
      lines[row] ??= []
    } else {
      const line = lines[row]
      while (line.length < col) line.push(' ')
      line[col++] = ch
    }
    i++
  }
  return lines.map((l) => l.join('').trimEnd()).join('\n')
}

describe.skipIf(!available)('probekit run: the progress line', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'probekit-progress-'))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  // Computed once, compared by several tests: the same run without the line.
  let plain: ReturnType<typeof onTerminal> | undefined
  const withoutProgress = () => {
    plain ??= onTerminal(['--no-progress', ...PROBE, '--', ...GUEST])
    return plain
  }

  it('is drawn on a terminal, and erased so the guest output and trace lines come out whole and the same', {
    timeout: 600_000,
  }, () => {
    const shown = onTerminal([...PROBE, '--', ...GUEST])
    expect(shown.status).toBe(0)
    expect(shown.err).toBe('')
    // Drawn, more than once, with a growing instruction count.
    const counts = [...shown.out.matchAll(/([0-9][0-9,]*) guest instructions/g)].map((m) =>
      Number(m[1].replaceAll(',', '')),
    )
    expect(counts.length).toBeGreaterThan(2)
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1])
    expect(counts[counts.length - 1]).toBeGreaterThan(counts[0])

    const reference = withoutProgress()
    expect(reference.status).toBe(0)
    expect(reference.out).not.toMatch(PROGRESS)
    expect(reference.out).not.toContain('\x1b')
    // What the person sees at the end is exactly the run without the line: every output and
    // trace line whole, in order, nothing of the line left, the same trace timestamps (guest
    // time: the line changed nothing in the run).
    const seen = screen(shown.out)
    expect(seen).toBe(screen(reference.out))
    const lines = seen.split('\n')
    expect(lines.filter((l) => !TRACE_LINE.test(l)).join('\n')).toBe(OUTPUT)
    expect(lines.filter((l) => TRACE_LINE.test(l))).toHaveLength(6)
  })

  it('leaves stdout untouched when only stderr is the terminal', { timeout: 600_000 }, () => {
    const file = join(scratch, 'stdout')
    const shown = onTerminal(['--', ...GUEST], { redirect: `> ${shellQuote(file)}` })
    expect(shown.status).toBe(0)
    expect(shown.out).toMatch(PROGRESS)
    // The terminal shows nothing once the line is erased, and the file holds only the guest's output.
    expect(screen(shown.out)).toBe('')
    expect(readFileSync(file, 'utf8')).toBe(OUTPUT)
  })

  it('is never written to a pipe: the output is byte-identical to --no-progress', {
    timeout: 600_000,
  }, () => {
    const run = piped([...PROBE, '--', ...GUEST])
    const off = piped(['--no-progress', ...PROBE, '--', ...GUEST])
    expect(run.status).toBe(0)
    expect(run.stdout).toBe(OUTPUT)
    expect(run.stderr).not.toContain('\x1b')
    expect(run.stderr.match(/: w: /g)?.length).toBe(6)
    expect({ stdout: run.stdout, stderr: run.stderr }).toEqual({ stdout: off.stdout, stderr: off.stderr })
  })

  it('is off on a terminal under CI, and with --json', { timeout: 600_000 }, () => {
    const reference = withoutProgress()
    const ci = onTerminal([...PROBE, '--', ...GUEST], { env: { CI: 'true' } })
    expect(ci.status).toBe(0)
    // The guest's environment has CI=true in it too, so its timestamps may differ; nothing else does.
    const times = (s: string) => s.replace(/\d+\.\d{6}: /g, 'T: ')
    expect(times(ci.out)).toBe(times(reference.out))
    const json = onTerminal(['--json', ...PROBE, '--', ...GUEST])
    expect(json.status).toBe(0)
    expect(json.out).not.toMatch(PROGRESS)
    expect(json.out).not.toContain('\x1b')
    expect(json.out).toContain('"event":"w"')
  })
})
