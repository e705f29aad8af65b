#!/usr/bin/python3
"""Run a bare workload (native/workloads/*-bare, the vmcall ABI of
native/workloads/platform.h) under Unicorn: the peer the emulator's MIPS is
measured against, on the very same machine code, in the same bench run.

Usage: unicorn-peer.py ELF  ->  one JSON line {"ms", "status", "stdout"}.

Unicorn has no instruction counter without a per-instruction hook (which
would cost it most of its speed), so the caller divides the instruction count
the emulator retired for the same bytes by the time here. No hooks run while
the workload computes: vmcall is not an instruction Unicorn knows, so each
one ends emu_start() with an invalid-instruction hook; the loop below does
the call (exit or write) and starts again after it.
"""
import json
import struct
import sys
import time

from unicorn import UC_ARCH_X86, UC_HOOK_INSN_INVALID, UC_MODE_64, Uc
from unicorn.x86_const import UC_X86_REG_RAX, UC_X86_REG_RDI, UC_X86_REG_RIP, UC_X86_REG_RSI, UC_X86_REG_RSP

PAGE = 0x1000
STACK_TOP = 0x7FFF_F000_0000
STACK_SIZE = 1 << 20
VMCALL = b"\x0f\x01\xc1"


def load(uc, elf):
    """Maps every PT_LOAD segment (read-write-execute: Unicorn's protections
    are not what is measured) and returns the entry point."""
    entry, phoff = struct.unpack_from("<QQ", elf, 0x18)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        ptype, _flags, offset, vaddr, _paddr, filesz, memsz, _align = struct.unpack_from(
            "<IIQQQQQQ", elf, phoff + i * phentsize
        )
        if ptype != 1 or memsz == 0:
            continue
        start = vaddr & ~(PAGE - 1)
        end = (vaddr + memsz + PAGE - 1) & ~(PAGE - 1)
        uc.mem_map(start, end - start)
        uc.mem_write(vaddr, elf[offset : offset + filesz])
    return entry


def main():
    elf = open(sys.argv[1], "rb").read()
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    entry = load(uc, elf)
    uc.mem_map(STACK_TOP - STACK_SIZE, STACK_SIZE)
    uc.reg_write(UC_X86_REG_RSP, STACK_TOP - 64)
    uc.hook_add(UC_HOOK_INSN_INVALID, lambda uc, _data: False)

    out = bytearray()
    status = None
    rip = entry
    t0 = time.perf_counter()
    while status is None:
        try:
            uc.emu_start(rip, 0)
        except Exception:  # the invalid-instruction stop
            pass
        rip = uc.reg_read(UC_X86_REG_RIP)
        if bytes(uc.mem_read(rip, 3)) != VMCALL:
            raise SystemExit(f"unicorn-peer.py: stopped at {rip:#x}, not at a vmcall")
        nr = uc.reg_read(UC_X86_REG_RAX)
        if nr == 1:
            status = uc.reg_read(UC_X86_REG_RDI) & 0xFF
        elif nr == 2:
            buf, length = uc.reg_read(UC_X86_REG_RDI), uc.reg_read(UC_X86_REG_RSI)
            out += uc.mem_read(buf, length)
            uc.reg_write(UC_X86_REG_RAX, length)
        else:
            raise SystemExit(f"unicorn-peer.py: unknown hypercall {nr}")
        rip += len(VMCALL)
    ms = (time.perf_counter() - t0) * 1000
    print(json.dumps({"ms": ms, "status": status, "stdout": out.decode("latin-1")}))


main()
