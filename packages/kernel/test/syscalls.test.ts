// System calls through the guest kernel's real paths, driven by tiny
// hand-assembled programs: open(2) → sys_open → do_sys_open →
// strncpy_from_user (exception table on a bad pointer), read(2) → vfs_read,
// write(2) → vfs_write, on the in-memory file system and host mounts.

import { describe, expect, it } from 'vitest'
import type { HostDirectory } from '../src/index.js'
import { runGuest } from './support/run.js'
import { movEdi, syscall, TINY_BASE, tinyElf } from './support/tiny-elf.js'

const enc = new TextEncoder()

/** open(path) ; read 256 bytes onto the stack ; write them to stdout ; exit(0). A negative open result exits with -errno. */
function catProgram(path: string): Uint8Array {
  const code: number[] = []
  const pathAt = () => TINY_BASE + 64 + 56 + codeLen
  // lea rdi, [rip + path] is patched below once the code length is known.
  code.push(0x48, 0x8d, 0x3d, 0, 0, 0, 0) // lea rdi, [rip+disp32]
  code.push(0x31, 0xf6) // xor esi, esi
  code.push(...syscall(2)) // open
  code.push(0x85, 0xc0, 0x79, 0x0b) // test eax, eax ; jns +11
  code.push(0x89, 0xc7, 0xf7, 0xdf) // mov edi, eax ; neg edi
  code.push(...syscall(231)) // exit_group(-errno)
  code.push(0x89, 0xc7) // mov edi, eax (fd)
  code.push(0x48, 0x81, 0xec, 0x00, 0x01, 0x00, 0x00) // sub rsp, 256
  code.push(0x48, 0x89, 0xe6) // mov rsi, rsp
  code.push(0xba, 0x00, 0x01, 0x00, 0x00) // mov edx, 256
  code.push(...syscall(0)) // read
  code.push(0x89, 0xc2) // mov edx, eax
  code.push(...movEdi(1))
  code.push(...syscall(1)) // write
  code.push(...movEdi(0))
  code.push(...syscall(231))
  const codeLen = code.length
  const rel = pathAt() - (TINY_BASE + 64 + 56 + 7)
  code[3] = rel & 0xff
  code[4] = (rel >> 8) & 0xff
  code[5] = (rel >> 16) & 0xff
  code[6] = (rel >> 24) & 0xff
  return tinyElf([...code, ...enc.encode(`${path}\0`)])
}

function hostDir(files: Record<string, string>): HostDirectory {
  return {
    list: (p) => (p === '' ? Object.keys(files) : null),
    stat: (p) => (p in files ? { type: 'file', size: files[p].length } : null),
    read: (p) => (p in files ? enc.encode(files[p]) : null),
  }
}

describe('system calls through the guest kernel', () => {
  it('open, read and write a file of the in-memory file system', () => {
    const r = runGuest(catProgram('/etc/motd'), ['cat'], {
      files: { '/etc/motd': enc.encode('probed hello\n') },
    })
    expect(r.stdout).toBe('probed hello\n')
    expect(r.status).toBe(0)
  })

  it('a missing file gives -ENOENT from sys_open', () => {
    expect(runGuest(catProgram('/nope'), ['cat']).status).toBe(2)
  })

  it('a bad path pointer gives -EFAULT through the exception table, not a crash', () => {
    const prog = catProgram('/x')
    // Replace "lea rdi, [rip+path]" with "mov edi, 1 ; nop ; nop": a user pointer to an unmapped page.
    prog.set([0xbf, 0x01, 0x00, 0x00, 0x00, 0x90, 0x90], 64 + 56)
    const r = runGuest(prog, ['cat'])
    expect(r.status).toBe(14)
    expect(r.kernel.printk.text()).not.toMatch(/oops/)
  })

  it('reads a host directory mounted read-only, and nothing outside it', () => {
    const run = (path: string) => {
      const prog = catProgram(path)
      let out = ''
      const r = runGuest(prog, ['cat'], {
        setup: (k) => k.vfs.mountHost('/mnt/host', hostDir({ 'notes.txt': 'from the host\n' })),
      })
      out = r.stdout
      return { out, status: r.status }
    }
    expect(run('/mnt/host/notes.txt')).toEqual({ out: 'from the host\n', status: 0 })
    // '..' leaves the mount: the host file is not there, and /etc/passwd is the guest's own.
    expect(run('/mnt/host/../notes.txt').status).toBe(2)
    expect(run('/mnt/host/../../etc/passwd').out).toMatch(/^root:x:0:0:root:/)
  })
})

describe('more system calls', () => {
  it('mremap grows an anonymous mapping and keeps its contents', () => {
    const prog = tinyElf([
      0xbf,
      0,
      0,
      0,
      0, // mov edi, 0
      0xbe,
      0,
      0x10,
      0,
      0, // mov esi, 4096
      0xba,
      3,
      0,
      0,
      0, // mov edx, PROT_READ|PROT_WRITE
      0x41,
      0xba,
      0x22,
      0,
      0,
      0, // mov r10d, MAP_PRIVATE|MAP_ANONYMOUS
      0x49,
      0xc7,
      0xc0,
      0xff,
      0xff,
      0xff,
      0xff, // mov r8, -1
      0x45,
      0x31,
      0xc9, // xor r9d, r9d
      ...syscall(9), // mmap
      0xc6,
      0x00,
      0x2a, // mov byte [rax], 42
      0x48,
      0x89,
      0xc7, // mov rdi, rax
      0xbe,
      0,
      0x10,
      0,
      0, // mov esi, 4096
      0xba,
      0,
      0x30,
      0,
      0, // mov edx, 3 pages
      0x41,
      0xba,
      1,
      0,
      0,
      0, // mov r10d, MREMAP_MAYMOVE
      ...syscall(25), // mremap
      0xc6,
      0x80,
      0xff,
      0x2f,
      0,
      0,
      7, // mov byte [rax+0x2fff], 7: the new last page is usable
      0x0f,
      0xb6,
      0x38, // movzx edi, byte [rax]
      ...syscall(231),
    ])
    expect(runGuest(prog, ['mremap']).status).toBe(42)
  })

  it.each([
    [true, 0],
    [false, 256 - 25],
  ])('ioctl(TCGETS) on the console: tty %s gives %i', (tty, status) => {
    const prog = tinyElf([
      ...movEdi(1),
      0xbe,
      0x01,
      0x54,
      0,
      0, // mov esi, TCGETS
      0x48,
      0x8d,
      0x54,
      0x24,
      0xc0, // lea rdx, [rsp-64]
      ...syscall(16),
      0x89,
      0xc7, // mov edi, eax
      ...syscall(231),
    ])
    const r = runGuest(prog, ['tty'], { setup: (k) => Object.assign(k.options, { consoleIsTty: tty }) })
    expect(r.status).toBe(status)
  })
})

describe('waitid', () => {
  it('reports a child exit as a siginfo (si_code CLD_EXITED, si_status)', () => {
    const prog = tinyElf([
      ...syscall(57), // fork
      0x85,
      0xc0,
      0x75,
      0x0c, // test eax, eax ; jnz parent
      ...movEdi(7),
      ...syscall(60), // child: exit(7)
      0x31,
      0xff, // parent: xor edi, edi (P_ALL)
      0x31,
      0xf6, // xor esi, esi
      0x48,
      0x8d,
      0x54,
      0x24,
      0x80, // lea rdx, [rsp-128] (infop)
      0x41,
      0xba,
      4,
      0,
      0,
      0, // mov r10d, WEXITED
      0x45,
      0x31,
      0xc0, // xor r8d, r8d
      ...syscall(247), // waitid
      0x8b,
      0x7c,
      0x24,
      0x98, // mov edi, [rsp-104] (si_status)
      0x03,
      0x7c,
      0x24,
      0x88, // add edi, [rsp-120] (si_code)
      ...syscall(231),
    ])
    expect(runGuest(prog, ['waitid']).status).toBe(7 + 1)
  })
})
