// probekit demo: what the stack can show today, on the bundled programs.
// It boots the guest kernel, shows do_fork as kallsyms and the decoder see
// it in the real image, then runs the seeds' kprobe, jprobe and kretprobe
// examples while bundled programs fork and open files, the seeds'
// uprobe example on its target (myprog's myfunc), and a kprobe that jump
// optimization turns into a jmp to a detour buffer.

import { Kernel, parseElf, readSymbols } from '@probekit/kernel'
import { jprobeExample, Kprobes, kprobeExample, kretprobeExample } from '@probekit/kprobes'
import { Optprobes } from '@probekit/optprobes'
import { uprobeExample, uprobesOf } from '@probekit/uprobes'
import { decode, formatLinear } from '@probekit/x86-emu'
import { disassemble } from '../disassembly/disassemble.js'
import { renderListing } from '../disassembly/render-listing.js'
import { readBundledProgram as fixture, readGuestImage } from '../guest-image.js'
import type { CliIo } from '../io.js'
import { detoursListing } from '../optprobes-report.js'

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

  head("3. The seeds' kprobe and jprobe examples on do_fork, while a process tree runs:")
  kernel.vfs.writeFile('/bin/proctree', fixture('proctree'))
  const kprobes = new Kprobes(kernel)
  const kp = kprobeExample(kernel, kprobes)
  const jp = jprobeExample(kernel, kprobes)
  const logFrom = kernel.printk.lines.length
  kp.init_module()
  jp.init_module()
  kernel.spawn('/bin/proctree', ['/bin/proctree'])
  let r = kernel.run(500_000_000)
  kp.cleanup_module()
  jp.cleanup_module()
  say(io.colors.dim('program output:'))
  say(out.join('').trimEnd())
  say(io.colors.dim(`exit status ${r.exit?.status}; the kernel log (dmesg), first lines:`))
  const log = kernel.printk.lines.slice(logFrom).map((l) => l.text)
  say(log.slice(0, 14).join('\n'))
  say(
    io.colors.dim(
      `... ${log.filter((l) => l.startsWith('pre_handler')).length} do_fork hits in all; at unload:`,
    ),
  )
  say(log.slice(-2).join('\n'))

  head("4. The seeds' kretprobe example on sys_open, while a program opens files (some fail):")
  const k2 = new Kernel({ image: readGuestImage(), cpus: 2, stdout: () => {} })
  k2.vfs.writeFile('/bin/fileio', fixture('fileio'))
  k2.boot()
  const rp = kretprobeExample(k2, new Kprobes(k2))
  const from2 = k2.printk.lines.length
  rp.init_module()
  k2.spawn('/bin/fileio', ['/bin/fileio', '/tmp'])
  r = k2.run(500_000_000)
  rp.cleanup_module()
  say(
    k2.printk.lines
      .slice(from2)
      .map((l) => l.text)
      .join('\n'),
  )

  head("5. The seeds' uprobe example on myprog's myfunc (insmod uprobe_example.ko pid=... vaddr=...):")
  out.length = 0
  const k3 = new Kernel({ image: readGuestImage(), cpus: 1, stdout: (d) => out.push(dec.decode(d)) })
  const myprog = fixture('myprog')
  k3.vfs.writeFile('/bin/myprog', myprog)
  k3.boot()
  // $ nm -p myprog | awk '$3=="myfunc"'
  const myfunc = readSymbols(parseElf(myprog)).find((s) => s.name === 'myfunc' && s.type === 2)
  if (!myfunc) throw new Error('the bundled myprog has no myfunc symbol')
  say(`$ nm -p myprog | awk '$3=="myfunc"'\n${myfunc.value.toString(16).padStart(16, '0')} T myfunc`)
  const task = k3.spawn('/bin/myprog', ['/bin/myprog'])
  const from3 = k3.printk.lines.length
  const up = uprobeExample(k3, uprobesOf(k3), { pid: task.pid, vaddr: myfunc.value })
  if (up.init_module() !== 0) throw new Error('the uprobe example did not register')
  r = k3.run(500_000_000)
  up.cleanup_module()
  say(
    k3.printk.lines
      .slice(from3)
      .map((l) => l.text)
      .join('\n'),
  )
  say(io.colors.dim('myprog printed:'))
  say(out.join('').trimEnd())
  say(io.colors.dim(`exit status ${r.exit?.status}`))

  head(
    "6. Jump optimization (the seeds' 1.4): a kprobe on do_sys_open, an int3 first, then a jmp to a detour buffer:",
  )
  const k4 = new Kernel({ image: readGuestImage(), cpus: 2, stdout: () => {} })
  k4.vfs.writeFile('/bin/fileio', fixture('fileio'))
  k4.boot()
  const kprobes4 = new Kprobes(k4)
  const optprobes = new Optprobes(kprobes4)
  let opens = 0
  const openProbe = {
    symbol_name: 'do_sys_open',
    pre_handler: () => {
      opens++
      return 0
    },
  }
  kprobes4.register_kprobe(openProbe)
  say(io.colors.dim('debugfs kprobes/list just after register_kprobe:'))
  say(kprobes4.debugfsList().trimEnd())
  // The kprobe-optimizer's delayed work, run now (it would run from the timer OPTIMIZE_DELAY jiffies later).
  optprobes.wait_for_kprobe_optimizer()
  say(io.colors.dim('after the kprobe-optimizer ran:'))
  say(kprobes4.debugfsList().trimEnd())
  say(detoursListing(k4, optprobes, [k4.symbol('do_sys_open')], io.colors).trimEnd())
  k4.spawn('/bin/fileio', ['/bin/fileio', '/tmp'])
  r = k4.run(500_000_000)
  kprobes4.unregister_kprobe(openProbe)
  say(io.colors.dim(`fileio exit status ${r.exit?.status}; do_sys_open hit ${opens} times through the jump`))
  return 0
}
