// An error the user can cause or fix. main() prints its message as one line
// (never a stack trace) and exits with its code.

export class CliError extends Error {
  constructor(
    message: string,
    /** 2: the command line or its data is wrong; 1: it cannot be done right now. */
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message)
    this.name = 'CliError'
  }
}
