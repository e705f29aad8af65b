// sse-oracle: like regs-oracle (see regs-oracle.c for the execution model:
// code at 0x10000000, one data page at 0x20000000, all 16 GPRs and RFLAGS
// loaded, exceptions caught as signals), but each case also carries the
// SSE state, and each result reports it. The reference side of
// test/sse-differential.test.ts.
//
// Protocol (little-endian, binary, stdin -> stdout, any number of records):
//
//   case   u32 magic 'SSEC' (0x43455353), u32 code_len (<= 4080),
//          u64 gpr[16], u64 rflags, u32 mxcsr, u32 zero, u8 xmm[16][16],
//          u8 data[4096], u8 code[code_len]
//   result u32 magic 'SSER' (0x52455353), i32 vector (-1: none, -2: timeout),
//          u32 error_code, u32 signal, u64 gpr[16], u64 rflags, u64 rip,
//          u64 cr2, u32 mxcsr, u32 zero, u8 xmm[16][16], u8 data[4096]
//                                                           (4528 bytes)
//
// The case's SSE state is loaded with fxrstor64 from an image whose x87 part
// is the fninit state (FCW 0x037f, FSW 0, all registers empty, zero
// contents), so fxsave in a case sees the same x87 fields every time. MXCSR
// bits 16-31 must be zero in a case (the oracle rejects it otherwise). At the
// end the state is taken with fxsave64 (normal completion) or from the
// signal frame's fpstate (an exception), and MXCSR is reset to 0x1f80 for
// the oracle itself. RFLAGS masking is as in regs-oracle.
//
// Build: see rebuild.sh (static, no PIE, fixed 0x400000 load address).

#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#define CODE_ADDR 0x10000000UL
#define DATA_ADDR 0x20000000UL
#define PAGE 4096
#define TAIL_LEN 14
#define MAX_CODE (PAGE - TAIL_LEN - 2)
#define IN_RFLAGS_MASK 0xcd5UL
#define OUT_RFLAGS_MASK 0x7dd5UL
#define MAGIC_CASE 0x43455353U
#define MAGIC_RESULT 0x52455353U

// Shared with the assembly below (plain globals: non-PIE, rip-relative).
uint64_t g_in_gpr[16];
uint64_t g_in_rflags;
uint64_t g_out_gpr[16];
uint64_t g_out_rflags;
uint64_t g_host_rsp;
uint64_t g_code_entry = CODE_ADDR;
volatile uint8_t g_in_case;
uint8_t g_stub_stack[4096] __attribute__((aligned(16)));
uint8_t g_in_fx[512] __attribute__((aligned(64)));
uint8_t g_out_fx[512] __attribute__((aligned(64)));
uint32_t g_default_mxcsr = 0x1f80;

static sigjmp_buf g_jmp;
static int32_t g_vector;
static uint32_t g_error;
static uint32_t g_signo;
static uint64_t g_rip;
static uint64_t g_cr2;
static uint32_t g_out_mxcsr;
static uint8_t g_out_xmm[256];

int run_case(void);
void exit_stub(void);

// run_case: save the host's callee-saved registers and rsp, load RFLAGS and
// every GPR from g_in_*, jump to the code. Returns 0 via exit_stub.
__asm__(
    ".text\n"
    ".globl run_case\n"
    ".type run_case,@function\n"
    "run_case:\n"
    "  push %rbx\n"
    "  push %rbp\n"
    "  push %r12\n"
    "  push %r13\n"
    "  push %r14\n"
    "  push %r15\n"
    "  mov %rsp, g_host_rsp(%rip)\n"
    "  fxrstor64 g_in_fx(%rip)\n"
    "  lea g_in_rflags(%rip), %rsp\n"
    "  popfq\n"
    "  mov g_in_gpr+0(%rip), %rax\n"
    "  mov g_in_gpr+8(%rip), %rcx\n"
    "  mov g_in_gpr+16(%rip), %rdx\n"
    "  mov g_in_gpr+24(%rip), %rbx\n"
    "  mov g_in_gpr+40(%rip), %rbp\n"
    "  mov g_in_gpr+48(%rip), %rsi\n"
    "  mov g_in_gpr+56(%rip), %rdi\n"
    "  mov g_in_gpr+64(%rip), %r8\n"
    "  mov g_in_gpr+72(%rip), %r9\n"
    "  mov g_in_gpr+80(%rip), %r10\n"
    "  mov g_in_gpr+88(%rip), %r11\n"
    "  mov g_in_gpr+96(%rip), %r12\n"
    "  mov g_in_gpr+104(%rip), %r13\n"
    "  mov g_in_gpr+112(%rip), %r14\n"
    "  mov g_in_gpr+120(%rip), %r15\n"
    "  mov g_in_gpr+32(%rip), %rsp\n"
    "  jmp *g_code_entry(%rip)\n"
    ".size run_case, .-run_case\n"
    "\n"
    ".globl exit_stub\n"
    ".type exit_stub,@function\n"
    "exit_stub:\n"
    "  mov %rsp, g_out_gpr+32(%rip)\n"
    "  mov %rax, g_out_gpr+0(%rip)\n"
    "  mov %rcx, g_out_gpr+8(%rip)\n"
    "  mov %rdx, g_out_gpr+16(%rip)\n"
    "  mov %rbx, g_out_gpr+24(%rip)\n"
    "  mov %rbp, g_out_gpr+40(%rip)\n"
    "  mov %rsi, g_out_gpr+48(%rip)\n"
    "  mov %rdi, g_out_gpr+56(%rip)\n"
    "  mov %r8, g_out_gpr+64(%rip)\n"
    "  mov %r9, g_out_gpr+72(%rip)\n"
    "  mov %r10, g_out_gpr+80(%rip)\n"
    "  mov %r11, g_out_gpr+88(%rip)\n"
    "  mov %r12, g_out_gpr+96(%rip)\n"
    "  mov %r13, g_out_gpr+104(%rip)\n"
    "  mov %r14, g_out_gpr+112(%rip)\n"
    "  mov %r15, g_out_gpr+120(%rip)\n"
    "  fxsave64 g_out_fx(%rip)\n"
    "  ldmxcsr g_default_mxcsr(%rip)\n"
    "  lea g_stub_stack+4096(%rip), %rsp\n"
    "  pushfq\n"
    "  pop %rax\n"
    "  mov %rax, g_out_rflags(%rip)\n"
    "  movb $0, g_in_case(%rip)\n"
    "  cld\n"
    "  mov g_host_rsp(%rip), %rsp\n"
    "  pop %r15\n"
    "  pop %r14\n"
    "  pop %r13\n"
    "  pop %r12\n"
    "  pop %rbp\n"
    "  pop %rbx\n"
    "  xor %eax, %eax\n"
    "  ret\n"
    ".size exit_stub, .-exit_stub\n");

static void die(const char *what) {
  char buf[256];
  int n = snprintf(buf, sizeof buf, "sse-oracle: %s: %s\n", what, strerror(errno));
  if (n > 0) (void)!write(2, buf, (size_t)n);
  _exit(2);
}

static void on_signal(int signo, siginfo_t *si, void *ctx) {
  ucontext_t *uc = ctx;
  greg_t *g = uc->uc_mcontext.gregs;
  if (!g_in_case) {
    // A fault in the oracle itself, not in a case: report and stop.
    char buf[160];
    int n = snprintf(buf, sizeof buf, "sse-oracle: signal %d outside a case at rip=%#llx addr=%p\n", signo,
                     (unsigned long long)g[REG_RIP], si->si_addr);
    if (n > 0) (void)!write(2, buf, (size_t)n);
    _exit(3);
  }
  g_in_case = 0;
  static const int order[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  for (int i = 0; i < 16; i++) g_out_gpr[i] = (uint64_t)g[order[i]];
  g_out_rflags = (uint64_t)g[REG_EFL];
  g_rip = (uint64_t)g[REG_RIP];
  g_signo = (uint32_t)signo;
  if (uc->uc_mcontext.fpregs) {
    g_out_mxcsr = uc->uc_mcontext.fpregs->mxcsr;
    memcpy(g_out_xmm, uc->uc_mcontext.fpregs->_xmm, sizeof g_out_xmm);
  } else {
    g_out_mxcsr = 0xffffffffU;
    memset(g_out_xmm, 0xee, sizeof g_out_xmm);
  }
  if (signo == SIGALRM) {
    g_vector = -2;
    g_error = 0;
    g_cr2 = 0;
  } else {
    g_vector = (int32_t)g[REG_TRAPNO];
    g_error = (uint32_t)g[REG_ERR];
    g_cr2 = (uint64_t)g[REG_CR2];
  }
  siglongjmp(g_jmp, 1);
}

static int read_full(void *buf, size_t len) {
  size_t got = fread(buf, 1, len, stdin);
  if (got == len) return 1;
  if (got == 0 && feof(stdin)) return 0;
  fprintf(stderr, "sse-oracle: truncated input\n");
  exit(2);
}

int main(void) {
  static uint8_t altstack[65536];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) die("sigaltstack");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigfillset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGALRM};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (sigaction(sigs[i], &sa, NULL) != 0) die("sigaction");

  uint8_t *code = mmap((void *)CODE_ADDR, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
  if (code != (uint8_t *)CODE_ADDR) die("mmap code page");
  uint8_t *data = mmap((void *)DATA_ADDR, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
  if (data != (uint8_t *)DATA_ADDR) die("mmap data page");

  static uint8_t inbuf[1 << 20], outbuf[1 << 20];
  setvbuf(stdin, (char *)inbuf, _IOFBF, sizeof inbuf);
  setvbuf(stdout, (char *)outbuf, _IOFBF, sizeof outbuf);

  for (;;) {
    uint32_t head[2];
    if (!read_full(head, sizeof head)) break;
    if (head[0] != MAGIC_CASE || head[1] > MAX_CODE) {
      fprintf(stderr, "sse-oracle: bad case header (magic %#x, code_len %u)\n", head[0], head[1]);
      return 2;
    }
    uint32_t code_len = head[1];
    uint64_t rflags;
    uint32_t mx[2];
    static uint8_t page[PAGE], text[PAGE], xmm[256];
    if (!read_full(g_in_gpr, sizeof g_in_gpr) || !read_full(&rflags, 8) || !read_full(mx, sizeof mx) ||
        !read_full(xmm, sizeof xmm) || !read_full(page, PAGE) || (code_len && !read_full(text, code_len))) {
      fprintf(stderr, "sse-oracle: truncated case\n");
      return 2;
    }
    if (mx[0] & 0xffff0000U) {
      fprintf(stderr, "sse-oracle: case MXCSR %#x has reserved bits set\n", mx[0]);
      return 2;
    }
    g_in_rflags = (rflags & IN_RFLAGS_MASK) | 2;
    // fxrstor image: fninit x87 state, the case's MXCSR and XMM registers.
    memset(g_in_fx, 0, sizeof g_in_fx);
    g_in_fx[0] = 0x7f;
    g_in_fx[1] = 0x03;
    memcpy(g_in_fx + 24, &mx[0], 4);
    memcpy(g_in_fx + 160, xmm, sizeof xmm);

    if (mprotect(code, PAGE, PROT_READ | PROT_WRITE) != 0) die("mprotect rw");
    memset(code, 0xcc, PAGE);
    memcpy(code, text, code_len);
    // jmp qword ptr [rip+0]; .quad exit_stub
    static const uint8_t jmp_abs[6] = {0xff, 0x25, 0, 0, 0, 0};
    uint64_t stub = (uint64_t)(uintptr_t)exit_stub;
    memcpy(code + code_len, jmp_abs, 6);
    memcpy(code + code_len + 6, &stub, 8);
    if (mprotect(code, PAGE, PROT_READ | PROT_EXEC) != 0) die("mprotect rx");
    memcpy(data, page, PAGE);

    g_vector = -1;
    g_error = 0;
    g_signo = 0;
    g_cr2 = 0;
    if (sigsetjmp(g_jmp, 1) == 0) {
      struct itimerval t = {.it_interval = {0, 0}, .it_value = {2, 0}};
      setitimer(ITIMER_REAL, &t, NULL);
      g_in_case = 1;
      run_case();
      g_rip = CODE_ADDR + code_len;
      memcpy(&g_out_mxcsr, g_out_fx + 24, 4);
      memcpy(g_out_xmm, g_out_fx + 160, sizeof g_out_xmm);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    uint32_t rhead[4] = {MAGIC_RESULT, (uint32_t)g_vector, g_error, g_signo};
    uint64_t tail[3] = {(g_out_rflags & OUT_RFLAGS_MASK) | 2, g_rip, g_cr2};
    fwrite(rhead, sizeof rhead, 1, stdout);
    fwrite(g_out_gpr, sizeof g_out_gpr, 1, stdout);
    uint32_t mxout[2] = {g_out_mxcsr, 0};
    fwrite(tail, sizeof tail, 1, stdout);
    fwrite(mxout, sizeof mxout, 1, stdout);
    fwrite(g_out_xmm, sizeof g_out_xmm, 1, stdout);
    fwrite(data, PAGE, 1, stdout);
  }
  fflush(stdout);
  return 0;
}
