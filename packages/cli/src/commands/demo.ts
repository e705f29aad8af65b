// probekit demo: what the stack can show today, on the bundled programs.
// It boots the guest kernel, shows do_fork (the function the seeds' kprobe
// examples probe) as kallsyms and the decoder see it in the real image, and
// runs the seeds' uprobe target and a process tree under the kernel.
// (The seeds' kprobe/jprobe/kretprobe examples join it with @probekit/kprobes.)

import { readFileSync } from 'node:fs'
import { Kernel } from '@probekit/kernel'
import { decode, formatLinear } from '@probekit/x86-emu'
import { disassemble } from '../disassembly/disassemble.js'
import { renderListing } from '../disassembly/render-listing.js'
import { readGuestImage } from '../guest-image.js'
import type { CliIo } from '../io.js'

function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(`../../../kernel/fixtures/bin/${name}`, import.meta.url)))
}

export function demoCommand(io: CliIo): number {
  const say = (s: string) => io.stdout.write(`${s}\n`)
  const head = (s: string) => say(`\n${io.colors.bold(s)}`)
  const out: string[] = []
  const dec = new TextDecoder()
  const kernel = new Kernel({ image: readGuestImage(), cpus: 2, stdout: (d) => out.push(dec.decode(d)) })
  kernel.boot()

  head('1. The guest kernel booted on 2 vCPUs (dmesg):')
  say(kernel.printk.text())

  head("2. do_fork in the guest image, where the seeds' kprobe examples put their probe:")
  const sym = kernel.kallsyms.symbol('do_fork')!
  say(`kallsyms: ${formatLinear(sym.address)} T do_fork (${kernel.kallsyms.format(sym.address)})`)
  const bytes = kernel.machine.memory.readBytes(sym.address + 0x80000000, Math.min(sym.size, 24))
  const { instructions } = disassemble(decode, bytes, sym.address)
  say(renderListing(instructions, io.colors))

  head("3. The seeds' uprobe target (myprog calls myfunc) under the kernel:")
  kernel.vfs.writeFile('/bin/myprog', fixture('myprog'))
  kernel.vfs.writeFile('/bin/proctree', fixture('proctree'))
  kernel.spawn('/bin/myprog', ['/bin/myprog'])
  let r = kernel.run(500_000_000)
  say(out.join('').trimEnd())
  say(`exit status ${r.exit?.status}, ${kernel.machine.totalInstructions()} guest instructions so far`)

  head('4. A process tree (fork, vfork, execve, kill, wait4) on a fresh kernel with 2 vCPUs:')
  out.length = 0
  const k2 = new Kernel({ image: readGuestImage(), cpus: 2, stdout: (d) => out.push(dec.decode(d)) })
  k2.vfs.writeFile('/bin/proctree', fixture('proctree'))
  k2.boot()
  k2.spawn('/bin/proctree', ['/bin/proctree'])
  r = k2.run(500_000_000)
  say(out.join('').trimEnd())
  say(`exit status ${r.exit?.status}`)
  return 0
}
