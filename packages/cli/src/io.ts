// Where a command writes, so tests can run the CLI in-process and capture it.

import type pc from 'picocolors'

/** picocolors' colour functions; tests pass pc.createColors(false). */
export type Colors = ReturnType<typeof pc.createColors>

export interface CliIo {
  stdout: { write(chunk: string): unknown }
  stderr: { write(chunk: string): unknown }
  colors: Colors
  /** stderr is an interactive terminal (main.ts asks the host; in-process tests leave it out): where progress may be shown. */
  stderrIsTty?: boolean
}
