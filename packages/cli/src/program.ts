// The command line: commander parses it, this file maps every outcome to an
// exit code. 0 done, 1 cannot be done now, 2 the user's input is wrong.

import { Command, CommanderError } from 'commander'
import { CliError } from './cli-error.js'
import { decodeCommand } from './commands/decode.js'
import { demoCommand } from './commands/demo.js'
import { disasmCommand } from './commands/disasm.js'
import { listCommand } from './commands/list.js'
import { type RunOptions, runCommand } from './commands/run.js'
import type { CliIo } from './io.js'
import { packageVersion } from './version.js'

/** commander's own "errors" that are really a finished job. */
const CLEAN_EXITS = new Set(['commander.helpDisplayed', 'commander.version'])

function createProgram(io: CliIo): Command {
  const program = new Command('probekit')
  // Settings before .command(): subcommands copy them when created.
  program
    .description('The Linux dynamic-probing stack (kprobes, uprobes, ...) on an emulated x86-64 machine.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .helpCommand('help [command]', 'print help for a command')
    .exitOverride()
    .showSuggestionAfterError(true)
    .enablePositionalOptions()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // commander says "error: ...\n(Did you mean ...?)"; keep it to one line in our style.
      outputError: (text, write) =>
        write(
          `${io.colors.red('probekit:')} ${text
            .replace(/^error: /, '')
            .trim()
            .replaceAll('\n', ' ')}\n`,
        ),
    })

  program
    .command('decode')
    .description('disassemble x86-64 machine code (64-bit mode)')
    .argument('<hex...>', "instruction bytes in hex: 'cc', '55 48 89 e5', 4889e5, '\\x48\\x89\\xe5'")
    .option('-a, --address <address>', 'address of the first byte (hex or decimal)', '0')
    .addHelpText('after', '\nExample:\n  probekit decode --address 0xffffffff81000000 55 4889e5 cc c3')
    .action((hex: string[], options: { address: string }) => decodeCommand(hex, options, io))

  program
    .command('demo')
    .description('show what probekit does today, on the bundled programs')
    .action(() => {
      exitCode = demoCommand(io)
    })

  program
    .command('disasm')
    .description(
      "disassemble a function: a guest kernel function (SYMBOL, or an ADDRESS inside it) or a program's (BINARY:SYMBOL)",
    )
    .argument('<target>', 'SYMBOL | ADDRESS (hex or decimal) | BINARY:SYMBOL')
    .option(
      '-p, --probe <definition>',
      'a kernel probe to place first, in kprobe_events syntax as run -p takes it; its instruction is marked; repeatable',
      collect,
      [],
    )
    .option('--optimize', "run the kprobe-optimizer: show each optimized probe's jump and its detour buffer")
    .addHelpText(
      'after',
      "\nExamples:\n  probekit disasm do_sys_open\n  probekit disasm -p 'p:myprobe do_sys_open+4' --optimize do_sys_open\n  probekit disasm ./myprog:myfunc",
    )
    .action((target: string, options: { probe: string[]; optimize?: boolean }) =>
      disasmCommand(target, options, io),
    )

  program
    .command('list')
    .description(
      "list probe points: the guest kernel's functions (blacklisted ones marked), or a program's with -x",
    )
    .argument(
      '[glob]',
      "only the names this glob matches, as perf probe --funcs takes it: 'vfs_*', 'do_sys_open*'",
    )
    .option('-x, --exec <binary>', 'the functions of this user program or library instead of the kernel')
    .option('--blacklist', "the kernel's kprobe blacklist, as debugfs kprobes/blacklist prints it")
    .addHelpText(
      'after',
      "\nExamples:\n  probekit list 'vfs_*'\n  probekit list --blacklist\n  probekit list -x /bin/busybox 'sh_*'",
    )
    .action((glob: string | undefined, options: { exec?: string; blacklist?: boolean }) =>
      listCommand(glob, { x: options.exec, blacklist: options.blacklist }, io),
    )

  program
    .command('run')
    .description(
      'run an x86-64 Linux program (static or dynamically linked, or a #! script) under the probekit kernel',
    )
    .argument('<program>', 'the program (an x86-64 ELF executable or a #! script)')
    .argument('[args...]', 'its arguments (put -- before them when they start with -)')
    .option('-c, --cpus <n>', 'number of virtual CPUs, 1 to 16', '1')
    .option(
      '-m, --mount <dir>',
      'HOST[:GUEST]: show a host directory read-only at GUEST (default: the same path); repeatable',
      collect,
      [],
    )
    .option(
      '--isolated',
      "the guest sees an empty root and its --mounts only, not the host's files (which it otherwise sees, its writes kept in memory)",
    )
    .option(
      '--max-instructions <n>',
      'stop a runaway guest after this many instructions, a decimal whole number',
      '20000000000',
    )
    .option(
      '--memory <size>',
      "the guest's memory (RAM) such as 512M or 1G, 16M to 2G; beyond it mmap gives ENOMEM and the OOM killer kills",
      '256M',
    )
    .option(
      '--tmpfs-size <size>',
      "the in-memory file system's size (tmpfs size=), where the guest's writes are kept, such as 64M or 1G, 4K to 64G; beyond it a write gets ENOSPC (default: half of --memory)",
    )
    .option('--dmesg', 'print the kernel log (dmesg) to stderr at the end')
    .option(
      '-p, --probe <definition>',
      "a kernel probe in kprobe_events syntax: 'p[:[GRP/]EVENT] SYM[+OFFS]|ADDR [FETCHARGS]' or 'r[MAXACTIVE][:[GRP/]EVENT] SYM[+0] [FETCHARGS]', or a user probe in uprobe_events syntax: 'p|r[:[GRP/]EVENT] PATH:OFFSET|PATH:SYMBOL[+OFFS] [FETCHARGS]' (OFFSET a file offset); repeatable",
      collect,
      [],
    )
    .option(
      '-P, --probe-file <file>',
      "probe definitions (as -p takes them) from a file, one per line; '#' starts a comment, blank lines are skipped; read after the -p ones; repeatable",
      collect,
      [],
    )
    .option(
      '-f, --filter <event:filter>',
      "EVENT:FILTER, an ftrace event filter (the events/*/filter syntax): EVENT's hits are written only when FILTER matches them, e.g. 'myprobe:comm == \"sh\" && dfd == -100' (EVENT a probe's event name or GROUP/EVENT); repeatable",
      collect,
      [],
    )
    .option('-t, --trace <file>', 'write probe hits (ftrace lines) to this file instead of stderr')
    .option(
      '--stats',
      "at the end, print each probe's hits and misses on stderr, as tracefs kprobe_profile does",
    )
    .option(
      '--sysctl <setting>',
      'NAME=VALUE, as sysctl -w: debug.kprobes_optimization=0 keeps kernel probes int3 probes (1, the default, jump-optimizes them where it can); repeatable',
      collect,
      [],
    )
    .option(
      '--kprobes-list',
      'at the end, print the kernel probes as debugfs kprobes/list does (with [OPTIMIZED])',
    )
    .option('--detours', "at the end, disassemble each kernel probe's patched bytes and its detour buffer")
    .option(
      '--strace',
      'print every system call, signal and exit of every task as strace -f does (on stderr)',
    )
    .option('--strace-file <file>', 'with --strace: write its lines to this file (implies --strace)')
    .option(
      '-e, --strace-expr <expr>',
      "with --strace: strace's trace=NAME[,NAME...] or trace=!NAME,... filter (implies --strace)",
    )
    .option(
      '--json',
      'one JSON object per line: per probe hit (instead of the ftrace line) and, with --strace, per syscall, signal or exit',
    )
    .option(
      '--no-progress',
      'never show the progress line (guest instructions, elapsed time) that a long run shows on an interactive terminal',
    )
    .passThroughOptions()
    .addHelpText(
      'after',
      "\nExamples:\n  probekit run --cpus 2 -- ./hello\n  probekit run --strace -e trace=openat,read -- /usr/bin/cat /etc/hostname\n  probekit run -p 'p:myprobe do_sys_open dfd=$arg1:s32 filename=+0($arg2):ustring' -p 'r do_sys_open ret=$retval:s64' -- ./prog\n  probekit run -p 'p ./prog:myfunc x=%di:s64' -p 'r ./prog:myfunc ret=$retval:s64' -- ./prog",
    )
    .action((prog: string, args: string[], options: RunOptions) => {
      exitCode = runCommand(prog, args, options, io)
    })

  return program
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value]
}

/** Set by commands that end with the guest's status (probekit run). */
let exitCode = 0

/** Runs the CLI on `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    exitCode = 0
    await createProgram(io).parseAsync([...argv], { from: 'user' })
    return exitCode
  } catch (error) {
    if (error instanceof CommanderError) {
      // Message already printed through outputError (or help/version shown).
      return CLEAN_EXITS.has(error.code) || error.exitCode === 0 ? 0 : 2
    }
    if (error instanceof CliError) {
      io.stderr.write(`${io.colors.red('probekit:')} ${error.message}\n`)
      return error.exitCode
    }
    // Only a bug lands here (every outcome a user can cause is a CliError or
    // the guest's own status): say so, and how to report it usefully.
    const message = error instanceof Error ? error.message : String(error)
    io.stderr.write(`${io.colors.red('probekit: internal error:')} ${message}\n`)
    if (process.env.PROBEKIT_DEBUG && error instanceof Error && error.stack)
      io.stderr.write(`${error.stack}\n`)
    io.stderr.write(
      `this is a bug in probekit: please report it with the command line${process.env.PROBEKIT_DEBUG ? ' and the stack trace above' : ' (PROBEKIT_DEBUG=1 adds the stack trace)'}\n`,
    )
    return 1
  }
}
