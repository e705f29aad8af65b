// Debian's busybox-static applet cases, shared by busybox.test.ts (native
// against emulated) and tools/determinism.ts (emulated, many times over):
// each case's command line, stdin and whether it needs a writable directory.

import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { nodeHostDirectory } from './host-directory.js'
import { runGuest } from './run.js'

export const BUSYBOX = '/bin/busybox'
export const inputs = fileURLToPath(new URL('../busybox/', import.meta.url)).replace(/\/$/, '')
export const available =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  // Debian's busybox-static is static; a dynamically linked busybox would not run under the kernel.
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))

export const env = { LC_ALL: 'C', PATH: '/nonexistent', TZ: 'UTC' }
const F = (name: string) => `${inputs}/${name}`
/** The emulated run's work directory: not under /tmp, where the host mount of the inputs may create directories. */
export const GUEST_WORK = '/probekit-work'

export interface Case {
  name: string
  argv: string[]
  stdin?: string
  /** Gets a fresh writable directory in $W (natively a temp dir, emulated GUEST_WORK). */
  work?: boolean
}

export const cases: Case[] = [
  { name: 'sort', argv: ['sort', F('fruits.txt')] },
  { name: 'sort -n -r', argv: ['sort', '-n', '-r', F('numbers.txt')] },
  { name: 'wc', argv: ['wc', F('fruits.txt'), F('stock.csv')] },
  { name: 'sed', argv: ['sed', '-e', 's/an/AN/g', '-e', '2d', F('fruits.txt')] },
  { name: 'grep -n -i', argv: ['grep', '-n', '-i', 'banana', F('fruits.txt')] },
  { name: 'grep without a match', argv: ['grep', 'kiwi', F('fruits.txt')] },
  {
    name: 'md5sum and sha256sum',
    argv: ['sh', '-c', `/bin/busybox md5sum ${F('stock.csv')}; /bin/busybox sha256sum ${F('fruits.txt')}`],
  },
  {
    name: 'head and tail',
    argv: [
      'sh',
      '-c',
      `/bin/busybox head -n 2 ${F('fruits.txt')}; /bin/busybox tail -n 2 ${F('numbers.txt')}`,
    ],
  },
  { name: 'tr from stdin', argv: ['tr', 'a-z', 'A-Z'], stdin: 'hello, emulated world\n' },
  { name: 'cut', argv: ['cut', '-d', ',', '-f', '1,3', F('stock.csv')] },
  {
    name: 'awk',
    argv: [
      'awk',
      '-F',
      ',',
      'NR > 1 { q[$2] += $3; n++ } END { for (k in q) print k, q[k]; printf "%d rows, %.2f avg\\n", n, (q["fruit"] + q["vegetable"]) / n }',
      F('stock.csv'),
    ],
  },
  { name: 'seq', argv: ['seq', '1', '3', '20'] },
  { name: 'expr true', argv: ['expr', '6', '*', '7'] },
  { name: 'expr false', argv: ['expr', '1', '=', '2'] },
  { name: 'printf', argv: ['printf', '%05.1f|%x|%-6s|%c\\n', '3.14159', '255', 'ab', 'xyz'] },
  { name: 'od', argv: ['od', '-A', 'x', '-t', 'x1z'], stdin: 'probe\x00\x01\xff kit\n' },
  { name: 'ls', argv: ['ls', '-1', inputs] },
  { name: 'date', argv: ['date', '-u', '-d', '@86461', '+%Y-%m-%d %H:%M:%S %a'] },
  { name: 'a missing file', argv: ['cat', '/nonexistent/file'] },
  { name: 'an unknown applet', argv: ['no-such-applet'] },
  {
    name: 'sh: a pipeline of applets',
    argv: [
      'sh',
      '-c',
      `/bin/busybox sort ${F('fruits.txt')} | /bin/busybox uniq -c | /bin/busybox sort -rn | /bin/busybox head -n 1`,
    ],
  },
  {
    name: 'sh: a writer killed by SIGPIPE when its reader has gone',
    argv: [
      'sh',
      '-c',
      '(/bin/busybox yes; echo "yes: $?" >&2) | /bin/busybox head -n 2; (/bin/busybox seq 1 100000000; echo "seq: $?" >&2) | /bin/busybox head -n 1',
    ],
  },
  {
    name: 'tar: an archive piped to a listing and an extraction (sendfile)',
    argv: [
      'sh',
      '-c',
      `/bin/busybox tar -c -C ${inputs} fruits.txt stock.csv | /bin/busybox tar -t; /bin/busybox tar -c -C ${inputs} stock.csv | /bin/busybox tar -x -O`,
    ],
  },
  {
    name: 'gzip and gunzip, bzip2',
    argv: [
      'sh',
      '-c',
      `/bin/busybox gzip -9 -c ${F('stock.csv')} | /bin/busybox md5sum; /bin/busybox bzip2 -c ${F('fruits.txt')} | /bin/busybox bunzip2 -c`,
    ],
  },
  {
    name: 'bc and dc',
    argv: ['sh', '-c', "echo '3^40; scale=20; 4*a(1)' | /bin/busybox bc -l; /bin/busybox dc -e '2 64 ^ p'"],
  },
  {
    name: 'awk arithmetic functions',
    argv: ['awk', 'BEGIN { printf "%.6f %.6f %.6f %.6f %e\n", sin(1), exp(2), log(10), sqrt(2), 12345.678 }'],
  },
  {
    name: 'id and whoami (/etc/passwd, /etc/group)',
    argv: ['sh', '-c', '/bin/busybox id; /bin/busybox whoami'],
  },
  {
    name: 'files in a writable directory',
    work: true,
    argv: [
      'sh',
      '-c',
      'cd "$W" && b=/bin/busybox && $b mkdir -p a/b/c && $b touch a/b/c/f && echo hi > x && $b cp x y && $b mv y z && $b ln -s z l && $b readlink l && $b chmod 600 z && $b stat -c "%a %s %F %n" z && $b du -s z && $b find . | $b sort && $b rm -r a x && $b ls && $b mkdir / . ; echo $?',
    ],
  },
  {
    name: 'file times: written files are newer (-nt, find -newer)',
    work: true,
    argv: [
      'sh',
      '-c',
      'cd "$W" && b=/bin/busybox && echo a > f && $b sleep 1 && echo b > g && { [ g -nt f ] && echo "g is newer"; } && $b touch -d "2001-01-01" g && $b find . -newer g | $b sort',
    ],
  },
  {
    name: 'touch -d and date -r (utimensat)',
    work: true,
    argv: [
      'sh',
      '-c',
      'cd "$W" && /bin/busybox touch -d "2001-02-03 04:05:06" f && /bin/busybox date -u -r f "+%F %T"',
    ],
  },
  {
    name: 'sh: read from a pipe (poll)',
    argv: [
      'sh',
      '-c',
      'echo "a b c" | { read x y z; echo $z $y $x; }; printf "l1\\nl2\\n" | while read l; do echo "<$l>"; done; read -t 1 v < /dev/null; echo rc=$?',
    ],
  },
  {
    // A fatal signal ends its target when the target next runs, not inside kill(): the shell reaps the job in wait and says so.
    name: 'sh: a background job killed, and one stopped, killed, continued',
    argv: [
      'sh',
      '-c',
      '( /bin/busybox sleep 5 & kill $!; wait $!; echo killed=$? ); /bin/busybox sleep 5 & p=$!; kill -STOP $p; kill $p; kill -CONT $p; wait $p; echo st=$?',
    ],
  },
  {
    name: 'sh: loops, arithmetic, command substitution',
    argv: [
      'sh',
      '-c',
      'n=0; for i in $(/bin/busybox seq 1 10); do n=$((n + i * i)); done; echo "sum=$n"; test $n -eq 385 && echo ok; exit 3',
    ],
  },
]

/** A case under the kernel, in a fresh kernel: what it printed, its status, and the kernel (for counts). */
export function emulated(c: Case) {
  const r = runGuest(new Uint8Array(readFileSync(BUSYBOX)), [BUSYBOX, ...c.argv], {
    path: BUSYBOX,
    env: Object.entries(c.work ? { ...env, W: GUEST_WORK } : env).map(([k, v]) => `${k}=${v}`),
    stdin: new TextEncoder().encode(c.stdin ?? ''),
    memorySize: 256 * 1024 * 1024,
    maxInstructions: 2_000_000_000,
    setup: (k) => {
      k.vfs.mountHost(inputs, nodeHostDirectory(inputs))
      k.vfs.mkdirp(GUEST_WORK)
    },
  })
  return { run: r, result: { stdout: r.stdout, stderr: r.stderr, status: r.status } }
}
