// Tasks sleep in the guest kernel: a busybox pipeline's readers wait on
// their pipes inside vfs_read (wait_event_host -> schedule), other tasks run
// on the CPU meanwhile, and the read returns later in its own task. Probes
// see that as on Linux: a kretprobe on vfs_read reports the bytes each read
// returned, once per read (never a -ERESTART* of a call abandoned and
// started again); the scheduler's functions are there to probe.
// Needs Debian's busybox-static at /bin/busybox; skipped otherwise.

import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { type Kprobe, type Kretprobe, regs_return_value } from '../src/index.js'
import { BUSYBOX, bootBusybox, busyboxAvailable } from './support/busybox.js'

const PIPELINE = '/bin/busybox seq 1 3000 | /bin/busybox sort -r | /bin/busybox md5sum'
/** seq 1 3000's output: 9 one-digit, 90 two-digit, 900 three-digit and 2001 four-digit lines. */
const SEQ_BYTES = 9 * 2 + 90 * 3 + 900 * 4 + 2001 * 5
const TASK_NORMAL = 3

const pipelineKernel = bootBusybox

function nativeOutput(): string {
  return spawnSync('/bin/sh', ['-c', PIPELINE.replaceAll('/bin/busybox', BUSYBOX)], { encoding: 'utf8' })
    .stdout
}

const RESTART_CODES = [-512, -513, -514, -516]

describe.skipIf(!busyboxAvailable).each([1, 2])('a busybox pipeline on %i vCPU(s)', (cpus) => {
  it('a kretprobe on vfs_read reports each read once, with the bytes it returned', () => {
    const { k, kp, out, current } = pipelineKernel(cpus)
    const reads: [number, number][] = []
    const returned: [number, number][] = []
    let sleptAcross = 0
    const rp: Kretprobe = {
      kp: { symbol_name: 'vfs_read' },
      maxactive: 16,
      data_size: 8,
      // The entry remembers the number of task switches so far: a read that slept sees it grow.
      entry_handler: (ri) => {
        new DataView(ri.data.buffer).setFloat64(0, switches)
        return 0
      },
      handler: (ri, regs) => {
        expect(ri.task).toBe(current())
        reads.push([ri.task?.pid ?? -1, regs_return_value(regs)])
        if (switches > new DataView(ri.data.buffer).getFloat64(0)) sleptAcross++
        return 0
      },
    }
    // What user mode got back from each read(2): the frame at syscall exit (orig_ax 0 = read).
    const exit: Kprobe = {
      symbol_name: 'syscall_exit_to_user_mode',
      pre_handler: (_p, regs) => {
        const frame = k.frame(regs.get('di'))
        if (frame.get('orig_ax') === 0) returned.push([current().pid, frame.get('ax')])
        return 0
      },
    }
    let switches = 0
    const fts: Kprobe = {
      symbol_name: 'finish_task_switch',
      pre_handler: () => {
        switches++
        return 0
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    expect(kp.register_kprobes([exit, fts])).toBe(0)
    k.spawn(BUSYBOX, ['sh', '-c', PIPELINE])
    const { exit: status } = k.run(2_000_000_000)
    expect(status?.status).toBe(0)
    expect(out()).toBe(nativeOutput())
    expect(rp.nmissed ?? 0).toBe(0)

    expect(reads.length).toBeGreaterThan(4)
    expect(reads.filter(([, r]) => RESTART_CODES.includes(r))).toEqual([])
    expect(reads).toEqual(returned)
    // sort and md5sum each read all of seq's (sorted) output through their pipes.
    const perPid = new Map<number, number>()
    for (const [pid, r] of reads) if (r > 0) perPid.set(pid, (perPid.get(pid) ?? 0) + r)
    expect([...perPid.values()].filter((n) => n === SEQ_BYTES)).toHaveLength(2)
    // Reads really slept: other tasks ran between their entry and their return.
    expect(sleptAcross).toBeGreaterThan(0)
  })

  it('pipe_read(filp, buf, count, ppos) carries the reads of the pipes: vfs_read dispatches through f_op', () => {
    const { k, kp } = pipelineKernel(cpus)
    const FILE_KIND_PIPE = 1
    const kinds = new Map<number, number>() // struct file -> f_kind, as vfs_read saw it
    const asked: number[] = []
    const got = new Map<number, number>()
    const vfs: Kprobe = {
      symbol_name: 'vfs_read',
      pre_handler: (_p, regs) => {
        kinds.set(regs.get('di'), kp.peek(regs.get('di') + 12, 4))
        return 0
      },
    }
    const entry: Kprobe = {
      symbol_name: 'pipe_read',
      pre_handler: (_p, regs) => {
        // The file is a pipe's, and vfs_read passed it on (with the user's count, $arg3).
        expect(kinds.get(regs.get('di'))).toBe(FILE_KIND_PIPE)
        asked.push(regs.get('dx'))
        return 0
      },
    }
    const ret: Kretprobe = {
      kp: { symbol_name: 'pipe_read' },
      maxactive: 16,
      handler: (ri, regs) => {
        const pid = ri.task?.pid ?? -1
        got.set(pid, (got.get(pid) ?? 0) + regs_return_value(regs))
        return 0
      },
    }
    expect(kp.register_kprobes([vfs, entry])).toBe(0)
    expect(kp.register_kretprobe(ret)).toBe(0)
    k.spawn(BUSYBOX, ['sh', '-c', PIPELINE])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(asked.length).toBeGreaterThan(4)
    for (const n of asked) expect(n).toBeGreaterThan(0)
    // sort and md5sum read seq's 13893 bytes from their pipes, all through pipe_read.
    expect([...got.values()].filter((n) => n === SEQ_BYTES)).toHaveLength(2)
  })

  it('is deterministic: the same run twice gives the same reads, switches and instruction count', () => {
    const once = () => {
      const { k, kp } = pipelineKernel(cpus)
      const events: string[] = []
      const rp: Kretprobe = {
        kp: { symbol_name: 'vfs_read' },
        maxactive: 16,
        handler: (ri, regs) => {
          events.push(`read ${ri.task?.pid} ${regs_return_value(regs)}`)
          return 0
        },
      }
      const fts: Kprobe = {
        symbol_name: 'finish_task_switch',
        pre_handler: (_p, regs) => {
          events.push(`switch cpu${kp.smp_processor_id()} from ${kp.peek(regs.get('di'), 4)}`)
          return 0
        },
      }
      expect(kp.register_kretprobe(rp)).toBe(0)
      expect(kp.register_kprobe(fts)).toBe(0)
      k.spawn(BUSYBOX, ['sh', '-c', PIPELINE])
      expect(k.run(2_000_000_000).exit?.status).toBe(0)
      return { events, instructions: k.machine.totalInstructions() }
    }
    const a = once()
    const b = once()
    expect(a.events.length).toBeGreaterThan(10)
    expect(b).toEqual(a)
  })

  it('try_to_wake_up, finish_task_switch and copy_process are hit with their real arguments', () => {
    const { k, kp } = pipelineKernel(cpus)
    const pidOf = (task: number) => kp.peek(task, 4)
    const woken: { pid: number; state: number }[] = []
    const prevs: number[] = []
    const created: number[] = []
    const cloned: number[] = []
    const ttwu: Kprobe = {
      symbol_name: 'try_to_wake_up',
      pre_handler: (_p, regs) => {
        woken.push({ pid: pidOf(regs.get('di')), state: regs.get('si') })
        return 0
      },
    }
    const fts: Kprobe = {
      symbol_name: 'finish_task_switch',
      pre_handler: (_p, regs) => {
        prevs.push(pidOf(regs.get('di')))
        return 0
      },
    }
    const copy: Kretprobe = {
      kp: { symbol_name: 'copy_process' },
      handler: (_ri, regs) => {
        created.push(pidOf(regs_return_value(regs)))
        return 0
      },
    }
    const clone: Kretprobe = {
      kp: { symbol_name: 'kernel_clone' },
      handler: (_ri, regs) => {
        cloned.push(regs_return_value(regs))
        return 0
      },
    }
    expect(kp.register_kprobes([ttwu, fts])).toBe(0)
    expect(kp.register_kretprobes([copy, clone])).toBe(0)
    k.spawn(BUSYBOX, ['sh', '-c', PIPELINE])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)

    // The shell forked the three commands: copy_process returned each new task_struct.
    expect(created).toHaveLength(3)
    expect(created).toEqual(cloned)
    // Sleepers were woken (readers of the pipes, the shell in wait4), each as TASK_NORMAL.
    expect(woken.length).toBeGreaterThan(2)
    for (const w of woken) expect(w.state).toBe(TASK_NORMAL)
    expect(new Set(woken.map((w) => w.pid)).size).toBeGreaterThan(1)
    // Every switch finished with the task it left: the shell, its children, or an idle task (pid 0).
    const known = new Set([0, 1, ...created])
    expect(prevs.length).toBeGreaterThan(5)
    for (const p of prevs) expect(known.has(p)).toBe(true)
  })
})
