// The progress line of a long `probekit run` on an interactive terminal: a
// spinner, the guest instructions run so far and the elapsed time. The run
// is one synchronous call, so nothing can draw on a timer: the guest's timer
// tick (Kernel's hostTick) calls tick(), which redraws at most every
// REDRAW_MS of wall-clock time. The line only ever sits alone on the
// terminal's last line: it is erased before anything else is written there
// (the guest's output, trace lines) or read from there (the guest's stdin),
// and drawn again only when the cursor is at the start of a line, so a
// guest's prompt or half-written line is never overwritten. It reads the
// machine's counters and writes to the host's terminal, nothing else: the run
// (output, traces, instruction counts) is the same with it or without it.

import ora, { type Ora } from 'ora'
import { writeHost } from './host-write.js'

/** Quiet for this long: a short run shows no progress at all. */
const FIRST_DRAW_MS = 500
/** A redraw at most this often (spinner frames, counters). */
const REDRAW_MS = 150

export interface RunProgressOptions {
  /** The terminal's descriptor (stderr). */
  fd: number
  /** Its width: the line is cut to fit, so it never wraps. */
  columns: number
  /** What is running (the program's name). */
  label: string
  /** Guest instructions run so far. */
  instructions: () => number
  /** Wall-clock milliseconds (tests may pass their own). */
  now?: () => number
}

const encoder = new TextEncoder()

export class RunProgress {
  private readonly spinner: Ora
  private readonly now: () => number
  private readonly start: number
  private readonly base: number
  private lastDraw = Number.NEGATIVE_INFINITY
  /** The line is on the terminal now. */
  private shown = false
  /** The last byte written to the terminal ended a line (the cursor is in column 0). */
  private atLineStart = true
  /** Set once a write of its own fails (the terminal went away): it stays off. */
  private broken = false
  /** What ora writes for one draw or erase, sent in one write. */
  private pending = ''

  constructor(private readonly options: RunProgressOptions) {
    this.now = options.now ?? (() => performance.now())
    this.start = this.now()
    this.base = options.instructions()
    // ora draws through this: the escape sequences a TTY WriteStream would write, queued so
    // each draw is one write(2). Never start()ed: no timer, no hooks on process.stdout or
    // stdin (a discarding stdin would eat what the guest reads), the cursor left as it is.
    const put = (s: string) => {
      this.pending += s
      return true
    }
    const stream = {
      isTTY: true,
      columns: options.columns,
      write: put,
      cursorTo: (x: number) => put(`\x1b[${x + 1}G`),
      moveCursor: (dx: number, dy: number) =>
        put(
          `${dx < 0 ? `\x1b[${-dx}D` : dx > 0 ? `\x1b[${dx}C` : ''}${dy < 0 ? `\x1b[${-dy}A` : dy > 0 ? `\x1b[${dy}B` : ''}`,
        ),
      clearLine: (dir: number) => put(dir < 0 ? '\x1b[1K' : dir > 0 ? '\x1b[0K' : '\x1b[2K'),
    }
    this.spinner = ora({
      stream: stream as unknown as NodeJS.WriteStream,
      isEnabled: true,
      discardStdin: false,
      hideCursor: false,
      color: false,
    })
  }

  /** From the guest's timer tick: redraw when it is time and the terminal's cursor is free. */
  tick(): void {
    if (this.broken || !this.atLineStart) return
    const now = this.now()
    if (now - this.start < FIRST_DRAW_MS || now - this.lastDraw < REDRAW_MS) return
    this.lastDraw = now
    this.spinner.text = this.text(now)
    this.spinner.render()
    this.shown = true
    this.flush()
  }

  /** Before something else is written to the terminal or read from it: erase the line. */
  clear(): void {
    if (!this.shown) return
    this.spinner.clear()
    this.shown = false
    this.flush()
  }

  /** After data went to the terminal: whether the cursor is back in column 0. */
  wrote(data: Uint8Array): void {
    if (data.length > 0) this.atLineStart = data[data.length - 1] === 0x0a
  }

  /** The run is over: erase the line for good. */
  stop(): void {
    this.clear()
    this.broken = true
  }

  private text(now: number): string {
    const count = (this.options.instructions() - this.base).toLocaleString('en-US')
    const seconds = ((now - this.start) / 1000).toFixed(1)
    const text = `${this.options.label}: ${count} guest instructions, ${seconds} s`
    // The spinner's frame and a space come first; one column spare, so the line never wraps.
    const room = Math.max(0, this.options.columns - 3)
    return text.length > room ? text.slice(0, room) : text
  }

  private flush(): void {
    const data = encoder.encode(this.pending)
    this.pending = ''
    if (writeHost(this.options.fd, data) < 0) this.broken = true
  }
}

/** The environment says a person is not watching: CI (as ora's is-interactive and most tools read it), or a dumb terminal. */
export function progressUnwanted(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI
  return (ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false') || env.TERM === 'dumb'
}
