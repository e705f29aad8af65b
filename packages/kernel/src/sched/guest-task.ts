// The guest's half of a task: its struct task_struct (the fields abi.h
// shares between guest code and the host) and its kernel stack, with the
// pt_regs at the top and, for a task that has not run yet, the
// inactive_task_frame under them that __switch_to_asm pops into
// ret_from_fork.

import { formatLinear, type Machine } from '@probekit/x86-emu'
import {
  FRAME_RET_ADDR,
  INACTIVE_TASK_FRAME_SIZE,
  PAGE_OFFSET,
  PT_REGS_SIZE,
  TASK_COMM,
  TASK_EXIT_CODE,
  TASK_FLAGS,
  TASK_ON_CPU,
  TASK_PID,
  TASK_STACK,
  TASK_STATE,
  TASK_STRUCT_SIZE,
  TASK_TGID,
  TASK_THREAD_SP,
  THREAD_SIZE,
} from '../abi.js'
import { directMap } from '../guest-image.js'
import { utf8Encode } from '../utf8.js'
import type { Task } from './task.js'

const STACK_PAGES = THREAD_SIZE / 4096
const TASK_STRUCT_QUARANTINE = 64

export class GuestTasks {
  private slab = { frame: -1, used: 4096 }
  /** Kernel stacks of dead tasks, for the next ones (first frame of each). */
  private readonly freeStacks: number[] = []
  /**
   * task_structs of forgotten tasks, oldest first: reused once more than TASK_STRUCT_QUARANTINE wait,
   * so a stale pointer the guest still passes (a vfork parent's child) finds nothing rather than
   * the next task, and a million forks do not use a million structs.
   */
  private readonly freeStructs: number[] = []
  /** Tasks by their task_struct's address (what the guest's scheduler hands the host). */
  private readonly byAddress = new Map<number, Task>()

  constructor(
    private readonly machine: Machine,
    /** ret_from_fork's address: where a new task's first switch lands. */
    private readonly retFromFork: number,
  ) {}

  /**
   * Give a task its struct task_struct (pid, tgid, comm, so probe handlers
   * and fetchargs can read them) and, unless stackPhys is given (an idle
   * task on its boot stack), a kernel stack of its own.
   */
  attach(t: Task, stackPhys?: number): void {
    const memory = this.machine.memory
    let phys = this.freeStructs.length > TASK_STRUCT_QUARANTINE ? this.freeStructs.shift() : undefined
    if (phys !== undefined) memory.fill(phys, TASK_STRUCT_SIZE, 0)
    else {
      if (this.slab.used + TASK_STRUCT_SIZE > 4096)
        this.slab = { frame: this.machine.frames.alloc(), used: 0 }
      phys = this.slab.frame * 4096 + this.slab.used
      this.slab.used += TASK_STRUCT_SIZE
    }
    memory.write32(phys + TASK_PID, t.pid)
    memory.write32(phys + TASK_TGID, t.tgid)
    memory.writeBytes(phys + TASK_COMM, utf8Encode(t.comm.slice(0, 15)))
    t.guestTask = directMap(phys)
    this.byAddress.set(t.guestTask, t)
    t.stackPhys = stackPhys ?? this.allocStack()
    this.write64(t, TASK_STACK, directMap(t.stackPhys))
    const top = t.stackPhys + THREAD_SIZE
    t.regs = memory.bytes.subarray(top - PT_REGS_SIZE, top)
  }

  private allocStack(): number {
    const reused = this.freeStacks.pop()
    if (reused === undefined) return this.machine.frames.allocContiguous(STACK_PAGES) * 4096
    this.machine.memory.fill(reused, THREAD_SIZE, 0)
    return reused
  }

  /**
   * copy_thread's frame: the first switch to t pops an inactive_task_frame
   * (callee-saved registers zero, rbp 0 ends the unwinder's chain) and
   * returns to ret_from_fork, which leaves through t's pt_regs.
   */
  setupForkFrame(t: Task): void {
    const frame = t.stackPhys + THREAD_SIZE - PT_REGS_SIZE - INACTIVE_TASK_FRAME_SIZE
    this.machine.memory.fill(frame, INACTIVE_TASK_FRAME_SIZE, 0)
    this.writePhys64(frame + FRAME_RET_ADDR, this.retFromFork)
    this.write64(t, TASK_THREAD_SP, directMap(frame))
  }

  /** The task whose task_struct is at addr (a guest pointer the host must trust). */
  taskAt(addr: number): Task {
    const t = this.byAddress.get(addr)
    if (!t) throw new Error(`no task_struct at ${formatLinear(addr)}`)
    return t
  }

  lookup(addr: number): Task | undefined {
    return this.byAddress.get(addr)
  }

  /** The task is gone for good (reaped, its stack freed): its address means nothing any more. */
  forget(t: Task): void {
    if (this.byAddress.get(t.guestTask) !== t) return
    this.byAddress.delete(t.guestTask)
    this.freeStructs.push(this.phys(t))
  }

  /** put_task_stack: a dead task's stack is free once no CPU runs on it. */
  freeStack(t: Task): void {
    if (t.stackPhys < 0) return
    this.freeStacks.push(t.stackPhys)
    t.stackPhys = -1
    t.regs = new Uint8Array(PT_REGS_SIZE)
  }

  setState(t: Task, state: number): void {
    this.machine.memory.write32(this.phys(t) + TASK_STATE, state)
  }

  state(t: Task): number {
    return this.machine.memory.read32(this.phys(t) + TASK_STATE)
  }

  /** on_cpu: its stack is in use by a CPU (pick_next_task to finish_task_switch). */
  onCpu(t: Task): boolean {
    return this.machine.memory.read32(this.phys(t) + TASK_ON_CPU) !== 0
  }

  setOnCpu(t: Task, on: boolean): void {
    this.machine.memory.write32(this.phys(t) + TASK_ON_CPU, on ? 1 : 0)
  }

  /** thread_info.flags. */
  flags(t: Task): number {
    return this.machine.memory.read32(this.phys(t) + TASK_FLAGS)
  }

  setFlags(t: Task, flags: number): void {
    this.machine.memory.write32(this.phys(t) + TASK_FLAGS, flags)
  }

  // thread_info.flags: only the host writes them, so t.tif mirrors the guest's word exactly.
  setTif(t: Task, bits: number): void {
    if ((t.tif & bits) === bits || !t.guestTask) return
    t.tif |= bits
    this.setFlags(t, t.tif)
  }

  clearTif(t: Task, bits: number): void {
    if ((t.tif & bits) === 0 || !t.guestTask) return
    t.tif &= ~bits
    this.setFlags(t, t.tif)
  }

  /** exit_code: the wait status get_signal leaves for do_group_exit. */
  setExitCode(t: Task, status: number): void {
    this.machine.memory.write32(this.phys(t) + TASK_EXIT_CODE, status)
  }

  /** Keep the guest copy of comm current (after execve). */
  updateComm(t: Task): void {
    const at = this.phys(t) + TASK_COMM
    this.machine.memory.fill(at, 16, 0)
    this.machine.memory.writeBytes(at, utf8Encode(t.comm.slice(0, 15)))
  }

  private phys(t: Task): number {
    return t.guestTask - PAGE_OFFSET
  }

  private write64(t: Task, offset: number, v: number): void {
    this.writePhys64(this.phys(t) + offset, v)
  }

  private writePhys64(phys: number, v: number): void {
    this.machine.memory.write32(phys, v | 0)
    this.machine.memory.write32(phys + 4, Math.floor(v / 0x1_0000_0000) | 0)
  }
}
