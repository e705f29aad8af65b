/* SPDX-License-Identifier: MIT */
/*
 * The guest kernel ABI, as constants. This file mirrors ../../ABI.md (the
 * contract) and ../../src/abi.ts (the host's copy); test/abi.test.ts checks
 * that the two agree. Every line is "#define NAME <literal>" so a tiny
 * parser can read it, and it is valid in both C and assembly.
 *
 * Additions beyond ABI.md are marked [ext] and explained in ../README.md.
 */
#ifndef _PROBEKIT_ABI_H
#define _PROBEKIT_ABI_H

/* ---- Address space ---------------------------------------------------- */
#define START_KERNEL_MAP	0xffffffff80000000	/* __START_KERNEL_map: virt = this + phys */
#define KERNEL_PHYS_BASE	0x1000000		/* the image is loaded at 16 MiB physical */
#define KERNEL_TEXT		0xffffffff81000000	/* _text */
#define PAGE_OFFSET		0xffff888000000000	/* direct map of all RAM */
#define TASK_SIZE_MAX		0x00007ffffffff000	/* user pointers are below this (access_ok) */
#define TASK_SIZE		0x00007ffffffff000	/* = TASK_SIZE_MAX (src/abi.ts's name) */
#define PAGE_SIZE		0x1000

/* ---- Segment selectors (GDT layout as in Linux) ----------------------- */
#define KERNEL32_CS		0x08
#define KERNEL_CS		0x10
#define KERNEL_DS		0x18
#define KERNEL_SS		0x18	/* = KERNEL_DS */
#define USER32_CS		0x23
#define USER_DS			0x2b
#define USER_SS			0x2b	/* = USER_DS */
#define USER_CS			0x33
#define TSS_SEL			0x40
#define GDT_SIZE		80	/* 8 descriptors + the 16-byte TSS descriptor */

/* ---- MSRs written by start_kernel ------------------------------------- */
#define MSR_EFER		0xc0000080
#define MSR_STAR		0xc0000081
#define MSR_LSTAR		0xc0000082
#define MSR_FMASK		0xc0000084
#define MSR_FS_BASE		0xc0000100
#define MSR_GS_BASE		0xc0000101
#define MSR_KERNEL_GS_BASE	0xc0000102
#define EFER_SCE		0x1
#define STAR_VALUE		0x0023001000000000	/* 0x10 << 32 | 0x23 << 48 */
#define SYSCALL_FMASK		0x47700			/* TF|IF|DF|AC|NT */

/* ---- Per-CPU area (GS base in kernel mode) ----------------------------- */
#define PERCPU_SELF		0
#define PERCPU_CPU_NUMBER	8
#define PERCPU_CURRENT_TASK	16
#define PERCPU_TOP_OF_STACK	24
#define PERCPU_USER_RSP		32
#define PERCPU_NEED_RESCHED	40
#define PERCPU_IRQ_COUNT	48
#define PERCPU_TTWU_PENDING	56	/* [ext] the host has tasks for sched_ttwu_pending() to wake */
#define PERCPU_GDT		64
#define PERCPU_TSS		256
#define PERCPU_SIZE		4096
#define TSS_RSP0		4	/* offset inside the TSS */
#define TSS_IST1		36
#define TSS_SIZE		104

/* ---- struct pt_regs (byte offsets; Linux x86-64 layout) ---------------- */
#define PT_R15			0
#define PT_R14			8
#define PT_R13			16
#define PT_R12			24
#define PT_RBP			32
#define PT_RBX			40
#define PT_R11			48
#define PT_R10			56
#define PT_R9			64
#define PT_R8			72
#define PT_RAX			80
#define PT_RCX			88
#define PT_RDX			96
#define PT_RSI			104
#define PT_RDI			112
#define PT_ORIG_RAX		120
#define PT_RIP			128
#define PT_CS			136
#define PT_EFLAGS		144
#define PT_RSP			152
#define PT_SS			160
#define PT_REGS_SIZE		168

/* ---- Hypercalls: vmcall, rax = nr, args rdi rsi rdx r10 r8, result rax -- */
#define HC_CPU_ONLINE		0x100	/* cpu */
#define HC_PRINTK		0x101	/* kbuf, len */
#define HC_SYSCALL		0x102	/* regs -> value stored in regs->ax */
#define HC_EXCEPTION		0x104	/* regs, trapnr, error_code, fatal [ext], cr2 [ext] -> 1 handled, 0 not */
#define HC_NOTIFY_DIE		0x105	/* val, regs, trapnr, index, die_args [ext] -> NOTIFY_* */
#define HC_TIMER_TICK		0x106	/* regs */
#define HC_FILE_READ		0x107	/* file->f_host, kbuf, count, pos or -1 [ext] -> bytes, -errno or -EWOULDSLEEP */
#define HC_FILE_WRITE		0x108	/* file->f_host, kbuf, count, pos or -1 [ext] -> bytes, -errno or -EWOULDSLEEP */
#define HC_FILE_OPEN		0x109	/* kpath, flags, mode, dfd [ext] -> fd or -errno */
#define HC_FORK			0x10a	/* struct kernel_clone_args * -> the child's task_struct (TASK_NEW) or -errno */
#define HC_EXECVE		0x10b	/* kpath, regs -> 0 or -errno */
#define HC_EXIT			0x10c	/* exit_code -> 0; the task is dead: do_task_dead() follows */
#define HC_KRETPROBE_TRAMPOLINE	0x10d	/* [ext] regs -> the real return address */
#define HC_CALL_RETURN		0x10e	/* [ext] value: kernel_call_return reached */
#define HC_PICK_NEXT_TASK	0x110	/* prev -> next task_struct (may be prev); next is on_cpu */
#define HC_SWITCH_TO		0x111	/* prev, next: the host's half of __switch_to (mm, FPU, FS/GS) */
#define HC_PUT_TASK_STACK	0x112	/* task: a dead task's kernel stack is free */
#define HC_TTWU			0x113	/* task, state -> 1 woken, 0 not sleeping in state */
#define HC_TTWU_PENDING		0x114	/* -> a sleeping task_struct to wake, or 0 */
#define HC_WAKE_UP_NEW_TASK	0x115	/* task: a new task becomes runnable */
#define HC_PREPARE_TO_WAIT	0x116	/* state -> 1 condition holds, 0 sleeping, -ERESTART* interrupted */
#define HC_FINISH_WAIT		0x117	/* the task runs again */
#define HC_SIGNAL		0x118	/* regs -> 0, or a wait status: the task dies of a signal */
#define HC_NOTIFY_RESUME	0x119	/* regs: return-to-user work (rseq) */
#define HC_VFORK_WAIT		0x11a	/* child -> 0 done, -EWOULDSLEEP until the child execs or exits */
#define HC_SYSCALL_TRACE_ENTER	0x11b	/* regs, resumed: tracehook_report_syscall_entry (orig_ax -1 after it: skip the call; 1: stopped, report again when woken) */
#define HC_SYSCALL_TRACE_EXIT	0x11c	/* regs: tracehook_report_syscall_exit */
#define HC_FDGET		0x11d	/* fd -> current's struct file * for fd | FDPUT_FPUT if a reference was taken, or 0 (EBADF) */
#define HC_FPUT			0x11e	/* file: drop the reference __fdget took */
#define HC_HANDLE_MM_FAULT	0x11f	/* address, flags, regs -> 0 (page mapped) or VM_FAULT_SIGSEGV */
#define HC_FIND_TASK		0x120	/* pid -> its live task_struct, or 0 */
#define HC_SEND_SIGNAL		0x121	/* sig, struct kernel_siginfo *, task, type -> 0 */
#define HC_EXIT_REPORT		0x123	/* exit_code -> the code to exit with (tracers may change it, or hold the task) */
#define HC_OOM_SELECT		0x122	/* struct oom_control *: select_bad_process fills chosen (0: none, -1: abort) and the victim's sizes */
#define HC_ZAP_OTHER_THREADS	0x126	/* exit_code -> the group's exit code; the other threads of current's process are killed */
#define HC_JPROBE_ENTRY		0x125	/* [ext] regs (the probed function's, from jprobe_entry_stub) -> the sp jprobe_return goes back to */
#define FDPUT_FPUT		1	/* __fdget's low bit: fdput must fput */

/* HC_EXCEPTION's 4th argument (r10) [ext] */
#define EXC_FIRST_CHANCE	0	/* user fault, or a kernel fault on a user address (demand paging) */
#define EXC_FATAL		1	/* kernel oops: no fixup; the CPU halts unless the host returns 1 */

/* ---- struct task_struct: host-allocated, these fields shared [ext] ---- */
#define TASK_PID		0	/* int */
#define TASK_TGID		4	/* int */
#define TASK_STATE		8	/* unsigned int __state */
#define TASK_ON_CPU		12	/* int: 1 from pick_next_task until finish_task_switch */
#define TASK_COMM		16	/* char[16] */
#define TASK_THREAD_SP		32	/* thread.sp: the saved kernel rsp while switched out */
#define TASK_STACK		40	/* the kernel stack's lowest address */
#define TASK_FLAGS		48	/* thread_info.flags (TIF_*) */
#define TASK_EXIT_CODE		56	/* int: the wait status a fatal signal leaves (get_signal) */
#define TASK_STRUCT_SIZE	256
#define THREAD_SIZE		16384	/* kernel stack per task; pt_regs at its top */
/* __state */
#define TASK_RUNNING		0x0000
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define __TASK_STOPPED		0x0004
#define __TASK_TRACED		0x0008
#define TASK_DEAD		0x0080
#define TASK_WAKEKILL		0x0100
#define TASK_NEW		0x0800
#define TASK_KILLABLE		0x0102	/* TASK_WAKEKILL | TASK_UNINTERRUPTIBLE */
#define TASK_NORMAL		0x0003	/* TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE */
/* thread_info.flags */
#define TIF_SYSCALL_TRACE	0
#define TIF_NOTIFY_RESUME	1
#define TIF_SIGPENDING		2
#define TIF_SINGLESTEP		3	/* a tracer steps the task: a stepped syscall reports its own trap */
#define _TIF_SYSCALL_TRACE	0x1
#define _TIF_NOTIFY_RESUME	0x2
#define _TIF_SIGPENDING		0x4
#define _TIF_SINGLESTEP		0x8
/* struct inactive_task_frame (what __switch_to_asm leaves on a switched-out stack) */
#define FRAME_R15		0
#define FRAME_R14		8
#define FRAME_R13		16
#define FRAME_R12		24
#define FRAME_BX		32
#define FRAME_BP		40
#define FRAME_RET_ADDR		48
#define INACTIVE_TASK_FRAME_SIZE 56
/* A host leaf that must wait returns this; the caller sleeps (wait_event_host) and calls it again. */
#define EWOULDSLEEP		1000

/* ---- struct file: the guest face of a host open file [ext] ---------- */
#define FILE_F_OP		0
#define FILE_F_FLAGS		8
#define FILE_F_KIND		12
#define FILE_F_HOST		16
#define FILE_STRUCT_SIZE	32
#define FILE_KIND_HOST		0	/* regular file, directory, device: read and written by the host */
#define FILE_KIND_PIPE		1	/* a pipe (either end): pipe_read / pipe_write */

/* ---- Page faults: handle_mm_fault's flags and result [ext] ------------ */
#define FAULT_FLAG_WRITE	0x01
#define FAULT_FLAG_USER		0x40
#define FAULT_FLAG_INSTRUCTION	0x100
#define VM_FAULT_OOM		0x0001
#define VM_FAULT_SIGSEGV	0x0040

/* ---- struct oom_control [ext: the fields select_bad_process and the report use] ---- */
#define OOM_TOTALPAGES		0
#define OOM_CHOSEN		8
#define OOM_CHOSEN_POINTS	16
#define OOM_TOTAL_VM		24	/* the victim's sizes, in kB, for the report */
#define OOM_ANON_RSS		32
#define OOM_FILE_RSS		40
#define OOM_PGTABLES		48
#define OOM_CONTROL_SIZE	56
#define OOM_ABORT		-1	/* chosen: a victim is still on its way out */

/* ---- Vectors ---------------------------------------------------------- */
#define X86_TRAP_DE		0
#define X86_TRAP_DB		1
#define X86_TRAP_NMI		2
#define X86_TRAP_BP		3
#define X86_TRAP_UD		6
#define X86_TRAP_DF		8
#define X86_TRAP_GP		13
#define X86_TRAP_PF		14
#define X86_TRAP_MF		16
#define TIMER_VECTOR		32
#define NR_VECTORS		256
#define FIRST_EXTERNAL_VECTOR	32
#define IDT_ENTRY_STRIDE	16	/* irq_entries_start + 16 * vector: the catch-all stubs */

/* ---- Die notifier chain ------------------------------------------------ */
#define DIE_OOPS		1
#define DIE_INT3		2
#define DIE_DEBUG		3
#define DIE_PANIC		4
#define DIE_NMI			5
#define DIE_DIE			6
#define DIE_KERNELDEBUG		7
#define DIE_TRAP		8
#define DIE_GPF			9
#define DIE_CALL		10
#define DIE_PAGE_FAULT		11
#define DIE_NMIUNKNOWN		12
#define NOTIFY_DONE		0x0000
#define NOTIFY_OK		0x0001
#define NOTIFY_STOP_MASK	0x8000
#define NOTIFY_BAD		0x8002
#define NOTIFY_STOP		0x8001
/* struct notifier_block (24 bytes) */
#define NB_NOTIFIER_CALL	0
#define NB_NEXT			8
#define NB_PRIORITY		16
#define NB_HOST_INDEX		20
#define NB_SIZE			24
#define NR_HOST_NOTIFIERS	16	/* host_notifier_blocks[] */
/* die_chain (struct atomic_notifier_head): the list head pointer */
#define NH_HEAD			0
/* struct die_args (32 bytes) */
#define DIE_ARGS_REGS		0
#define DIE_ARGS_STR		8
#define DIE_ARGS_ERR		16
#define DIE_ARGS_TRAPNR		24
#define DIE_ARGS_SIGNR		28
#define DIE_ARGS_SIZE		32

/* ---- Sections ---------------------------------------------------------- */
#define EXTABLE_ENTRY_SIZE	8	/* two s32: insn - &insn, fixup - &fixup */
#define KPROBE_BLACKLIST_ENTRY_SIZE 8	/* one u64 function address */

/* ---- Sizes ------------------------------------------------------------- */
#define NR_CPUS			16
#define PATH_MAX		4096
#define BOUNCE_SIZE		4096	/* vfs_read/vfs_write copy through this per-CPU buffer */

#endif /* _PROBEKIT_ABI_H */
