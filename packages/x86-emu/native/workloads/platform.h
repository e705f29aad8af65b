// platform.h: the whole of what a workload may use from its environment.
//
// Two builds of the same source:
//   -DPLATFORM_BARE    freestanding, no libc; _start below; output and exit go
//                      through the emulator's hypercall ABI (vmcall):
//                        rax=1 exit(status=rdi)
//                        rax=2 write(buf=rdi, len=rsi) -> rax=len
//   (default)          a normal static glibc program: write(2) and _exit(2).
//
// Either way the workload calls only plat_write/plat_exit and the small
// formatting helpers here, so both builds print byte-identical text.
#ifndef PLATFORM_H
#define PLATFORM_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
typedef int i32;
typedef unsigned long usize;

#ifdef PLATFORM_BARE

static inline long plat_hypercall(long nr, long a, long b) {
  long ret;
  __asm__ volatile("vmcall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "memory");
  return ret;
}

static inline void plat_write(const char *buf, usize len) { plat_hypercall(2, (long)buf, (long)len); }

__attribute__((noreturn)) static inline void plat_exit(int status) {
  plat_hypercall(1, status, 0);
  for (;;) __asm__ volatile("ud2");
}

int main(int argc, char **argv);

// The stack pointer is 16-byte aligned at entry (ABI above); align anyway,
// clear rbp for backtraces, call main(0, NULL), exit with its status.
__asm__(".text\n"
        ".globl _start\n"
        ".type _start,@function\n"
        "_start:\n"
        "  xor %ebp, %ebp\n"
        "  xor %edi, %edi\n"
        "  xor %esi, %esi\n"
        "  and $-16, %rsp\n"
        "  call main\n"
        "  mov %eax, %edi\n"
        "  mov $1, %eax\n"
        "  vmcall\n"
        "  ud2\n"
        ".size _start, .-_start\n");

// gcc may emit calls to these even in freestanding code (struct copies,
// zeroing, loops it recognises). Byte loops are enough; they are compiled
// with -fno-tree-loop-distribute-patterns so they do not call themselves.
__attribute__((used)) void *memcpy(void *d, const void *s, usize n) {
  u8 *dp = d;
  const u8 *sp = s;
  while (n--) *dp++ = *sp++;
  return d;
}
__attribute__((used)) void *memmove(void *d, const void *s, usize n) {
  u8 *dp = d;
  const u8 *sp = s;
  if (dp < sp) {
    while (n--) *dp++ = *sp++;
  } else {
    while (n--) dp[n] = sp[n];
  }
  return d;
}
__attribute__((used)) void *memset(void *d, int c, usize n) {
  u8 *dp = d;
  while (n--) *dp++ = (u8)c;
  return d;
}
__attribute__((used)) int memcmp(const void *a, const void *b, usize n) {
  const u8 *ap = a, *bp = b;
  for (; n; n--, ap++, bp++)
    if (*ap != *bp) return *ap < *bp ? -1 : 1;
  return 0;
}

#else

#include <unistd.h>

static inline void plat_write(const char *buf, usize len) {
  while (len) {
    long n = write(1, buf, len);
    if (n <= 0) _exit(120);
    buf += n;
    len -= (usize)n;
  }
}

__attribute__((noreturn)) static inline void plat_exit(int status) { _exit(status); }

#endif

// The iteration count: argv[1] in decimal for the native build (the bench
// runs it under qemu-user that way), else `built` (the bare build's volatile
// global, which the bench patches).
static inline u32 plat_iterations(int argc, char **argv, u32 built) {
#ifndef PLATFORM_BARE
  if (argc > 1) {
    u32 n = 0;
    for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++) n = n * 10 + (u32)(*p - '0');
    return n;
  }
#endif
  (void)argc;
  (void)argv;
  return built;
}

// ---- formatting (identical in both builds) --------------------------------

static char plat_outbuf[4096];
static usize plat_outlen;

static inline void out_flush(void) {
  if (plat_outlen) plat_write(plat_outbuf, plat_outlen);
  plat_outlen = 0;
}

static inline void out_char(char c) {
  if (plat_outlen == sizeof plat_outbuf) out_flush();
  plat_outbuf[plat_outlen++] = c;
}

static inline void out_str(const char *s) {
  while (*s) out_char(*s++);
}

static inline void out_hex(u64 v, int digits) {
  static const char hex[] = "0123456789abcdef";
  for (int i = digits - 1; i >= 0; i--) out_char(hex[(v >> (i * 4)) & 15]);
}

static inline void out_udec(u64 v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) out_char(tmp[--n]);
}

static inline void out_sdec(i64 v) {
  if (v < 0) {
    out_char('-');
    out_udec(0 - (u64)v);
  } else {
    out_udec((u64)v);
  }
}

// "name=0x<16 hex digits>\n"
static inline void out_kv64(const char *name, u64 v) {
  out_str(name);
  out_str("=0x");
  out_hex(v, 16);
  out_char('\n');
}

#endif
