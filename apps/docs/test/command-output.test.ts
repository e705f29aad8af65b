// The commands the guides show print what the guides say: every plain code
// block that is a shell session (lines starting with "$ probekit", "$ echo")
// is run, and every block marked <!-- output of: COMMAND --> is COMMAND's
// output (in the directory a <!-- cwd: DIR --> before the block names). The shown lines must be the real ones, in order; a "..." line
// stands for any number of lines left out. So an address, a count or a
// message that changes in the code fails here instead of going stale on the
// page.

import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const docs = new URL('../', import.meta.url)
const repo = fileURLToPath(new URL('../../', docs))
const probekit = fileURLToPath(new URL('../../packages/cli/bin/probekit.js', docs))

/** One command and the lines the page shows for it. */
interface Shown {
  page: string
  command: string
  lines: string[]
  /** Where the command runs, from the repository root (<!-- cwd: DIR --> before the block). */
  cwd: string
}

const SESSION = /^\$ /
const MARK = /^<!-- output of: (.+) -->$/
const CWD = /^<!-- cwd: (.+) -->$/

/** The shown commands of a page: session blocks, and marked blocks. */
function shownCommands(page: string, markdown: string): Shown[][] {
  const sessions: Shown[][] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('```')) continue
    // A fence opens a block up to the next bare fence; only plain blocks (no language) are output.
    let end = lines.indexOf('```', i + 1)
    if (end < 0) end = lines.length
    if (lines[i] !== '```') {
      i = end
      continue
    }
    const body = lines.slice(i + 1, end)
    const before = [lines[i - 1] ?? '', lines[i - 2] ?? '']
    const mark = MARK.exec(before[0]) ?? MARK.exec(before[1])
    const cwd = (CWD.exec(before[0]) ?? CWD.exec(before[1]))?.[1] ?? '.'
    if (mark) sessions.push([{ page, command: mark[1], lines: body, cwd }])
    else if (SESSION.test(body[0] ?? '')) {
      const session: Shown[] = []
      for (let j = 0; j < body.length; j++) {
        if (!SESSION.test(body[j])) {
          session[session.length - 1].lines.push(body[j])
          continue
        }
        // A command continues over lines that end in a backslash.
        let command = body[j].slice(2)
        while (command.endsWith('\\') && j + 1 < body.length)
          command = `${command.slice(0, -1)} ${body[++j].trim()}`
        session.push({ page, command, lines: [], cwd })
      }
      sessions.push(session)
    }
    i = end
  }
  return sessions
}

/** Run a session's commands in one shell (so `echo $?` sees the one before), each one's output apart. */
function runSession(session: Shown[]): string[][] {
  const marker = '@@probekit-docs-command@@'
  const script = [
    // sh exports PWD, whose length (where the repository is checked out) would move the guest's stack.
    'unset PWD OLDPWD',
    `probekit() { node ${JSON.stringify(probekit)} "$@"; }`,
    'status=0',
    // The group's stderr joins its stdout; a redirection the command itself makes still applies.
    // $? is the previous command's again after the marker's echo (for a shown `echo $?`).
    ...session.flatMap((s) => [`echo ${marker}`, '(exit $status)', `{ ${s.command}\n} 2>&1`, 'status=$?']),
  ].join('\n')
  const r = spawnSync('sh', ['-c', script], {
    cwd: join(repo, session[0].cwd),
    encoding: 'utf8',
    // The guest sees the host's environment, whose size moves the guest's stack and so its
    // instruction counts and timestamps: the pages show runs in this small fixed one (not the test
    // runner's PATH, whose length depends on where the repository is checked out).
    env: {
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: '/root',
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
    },
    timeout: 300_000,
  })
  return (
    r.stdout
      .split(`${marker}\n`)
      .slice(1)
      // Blank lines around a command's output are not shown on a page.
      .map((out) => out.replace(/^\n+|\n+$/g, '').split('\n'))
  )
}

/** A shown line is the real one; an ellipsis (…) in it stands for any text (a page shortens long paths so). */
function same(shown: string, real: string): boolean {
  const s = shown.trimEnd()
  const r = real.trimEnd()
  if (!s.includes('…')) return s === r
  const pattern = s
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*')
  return new RegExp(`^${pattern}$`).test(r)
}

/** The shown lines appear in the real output in order; "..." skips any number of lines. Null when they do. */
function mismatch(shown: readonly string[], real: readonly string[]): string | null {
  // Memoized on (shown line, real line): without it a failing match with several "..." is exponential.
  const memo = new Map<number, boolean>()
  const match = (s: number, r: number): boolean => {
    const key = s * (real.length + 1) + r
    const known = memo.get(key)
    if (known !== undefined) return known
    let ok: boolean
    if (s === shown.length) ok = r === real.length
    else if (shown[s].trim() === '...') {
      ok = false
      for (let k = r; k <= real.length && !ok; k++) ok = match(s + 1, k)
    } else ok = r < real.length && same(shown[s], real[r]) && match(s + 1, r + 1)
    memo.set(key, ok)
    return ok
  }
  if (match(0, 0)) return null
  // The first shown line the real output lacks (in order), for the failure message.
  let r = 0
  for (const line of shown) {
    if (line.trim() === '...') continue
    const k = real.findIndex((x, i) => i >= r && same(line, x))
    if (k < 0) return line
    r = k + 1
  }
  return '(the lines are all there, but other lines stand where the page shows no "...")'
}

const guides = ['guide/', 'packages/']
  .flatMap((dir) => readdirSync(new URL(dir, docs)).map((f) => `${dir}${f}`))
  .filter((f) => f.endsWith('.md'))
const sessions = guides.flatMap((page) => shownCommands(page, readFileSync(new URL(page, docs), 'utf8')))

describe('the commands shown in the guides print what the guides show', () => {
  it('there are commands to check', () => {
    expect(sessions.length).toBeGreaterThan(2)
  })
  for (const session of sessions) {
    const title = `${session[0].page}: ${session.map((s) => s.command).join('; ')}`
    it(title, { timeout: 300_000 }, () => {
      const outputs = runSession(session)
      session.forEach((shown, i) => {
        const real = outputs[i] ?? []
        const missing = mismatch(shown.lines, real)
        expect(
          missing,
          `${shown.command}: the page shows\n  ${missing}\nbut it printed:\n${real.join('\n')}`,
        ).toBeNull()
      })
    })
  }
})
