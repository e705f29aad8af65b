// An error the user can cause or fix. main() prints its message as one line
// (never a stack trace) and exits with its code.

export class CliError extends Error {
  constructor(
    message: string,
    /** 2: the command line or its data is wrong; 1: it cannot be done right now; see EXIT_* for the rest. */
    readonly exitCode: number = 2,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

/** probekit run: the guest ran past --max-instructions (a runaway), as timeout(1) says its time ran out. */
export const EXIT_BUDGET = 124

/** probekit run: stopped by a second Ctrl-C (the first went to the program as SIGINT), as 128 + SIGINT. */
export const EXIT_INTERRUPTED = 130

/** probekit run: the kernel oopsed - a probe handler threw or faulted, or the guest kernel's own code faulted (EX_SOFTWARE: a bug, reported with the oops). */
export const EXIT_OOPS = 70
