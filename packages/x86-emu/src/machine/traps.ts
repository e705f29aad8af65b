// Raising exceptions and interrupts on a vCPU: the system above sees each
// one first and chooses to handle it on the host, let it go through the
// guest's IDT, or stop the machine.

import type { Cpu } from '../cpu/cpu.js'
import {
  CpuFault,
  hasErrorCode,
  SoftwareInterrupt,
  Unimplemented,
  VECTOR_NAMES,
  Vector,
} from '../cpu/exceptions.js'
import { deliverThroughIdt } from '../cpu/interrupts.js'

export interface TrapEvent {
  vector: number
  /** Architectural error code (0 when the vector has none). */
  errorCode: number
  /** CR2 for #PF. */
  address: number
  /** 'fault': RIP is the faulting instruction; 'trap': RIP is after it; 'interrupt': external. */
  kind: 'fault' | 'trap' | 'interrupt'
  /** int n / int3 from the instruction stream. */
  software: boolean
  /** Length of the int instruction (software interrupts only). */
  length?: number
  detail: string
  /** A #UD for an instruction the emulator does not implement (not one the architecture defines as #UD). */
  unimplemented?: boolean
}

/** 'deliver' through the guest IDT; 'handled' on the host (state already adjusted); 'stop' the machine. */
export type TrapDisposition = 'deliver' | 'handled' | 'stop'

export type TrapHandler = (cpu: Cpu, event: TrapEvent) => TrapDisposition

export function describeTrap(ev: TrapEvent): string {
  const name = VECTOR_NAMES[ev.vector] ?? `vector ${ev.vector}`
  const parts = [name]
  if (hasErrorCode(ev.vector)) parts.push(`error 0x${ev.errorCode.toString(16)}`)
  if (ev.vector === Vector.PF) parts.push(`address 0x${BigInt.asUintN(64, BigInt(ev.address)).toString(16)}`)
  if (ev.detail) parts.push(ev.detail)
  return parts.join(', ')
}

export function eventFromFault(f: CpuFault): TrapEvent {
  return {
    vector: f.vector,
    errorCode: f.errorCode,
    address: f.address,
    kind: f.trap ? 'trap' : 'fault',
    software: f instanceof SoftwareInterrupt,
    length: f instanceof SoftwareInterrupt ? f.length : undefined,
    detail: f.detail,
    unimplemented: f instanceof Unimplemented,
  }
}

/**
 * Deliver through the IDT, escalating a fault during delivery to #DF, and
 * a fault during #DF to a triple fault (returned as an error string).
 */
export function deliver(c: Cpu, ev: TrapEvent): string | null {
  if (c.idtLimit === 0) return `unhandled ${describeTrap(ev)} (no IDT)`
  try {
    deliverThroughIdt(c, ev.vector, hasErrorCode(ev.vector) ? ev.errorCode : -1, ev.software)
    return null
  } catch (e) {
    if (!(e instanceof CpuFault)) throw e
    if (ev.vector === Vector.DF) return `triple fault: ${describeTrap(ev)} then ${e.name}`
    if (ev.software && e.vector === Vector.GP) {
      // int n through a gate the caller may not use: a #GP fault at the int instruction itself.
      c.rip -= ev.length ?? 0
      return deliver(c, { ...ev, vector: Vector.GP, errorCode: e.errorCode, software: false, kind: 'fault' })
    }
    return deliver(c, {
      vector: Vector.DF,
      errorCode: 0,
      address: 0,
      kind: 'fault',
      software: false,
      detail: `during ${describeTrap(ev)}`,
    })
  }
}
