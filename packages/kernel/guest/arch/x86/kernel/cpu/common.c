// SPDX-License-Identifier: MIT
/*
 * Per-CPU descriptor tables and the syscall MSRs.
 */
#include <abi.h>
#include <linux/kernel.h>
#include <asm/percpu.h>
#include <asm/special_insns.h>

extern char entry_SYSCALL_64[];

struct desc_ptr {
	u16 size;
	u64 address;
} __packed;

/*
 * Segment descriptors as Linux writes them. In long mode only a few bits
 * still matter (L for 64-bit code, DPL, present), but the CPU checks the
 * selectors that syscall/sysret and iretq load against this layout:
 * STAR makes syscall use 0x10/0x18 and sysret 0x33/0x2b.
 */
#define GDT_KERNEL32_CS	0x00cf9b000000ffffUL
#define GDT_KERNEL_CS	0x00af9b000000ffffUL	/* L=1, DPL 0 */
#define GDT_KERNEL_DS	0x00cf93000000ffffUL
#define GDT_USER32_CS	0x00cffb000000ffffUL
#define GDT_USER_DS	0x00cff3000000ffffUL	/* DPL 3 */
#define GDT_USER_CS	0x00affb000000ffffUL	/* L=1, DPL 3 */

/* A 16-byte "available 64-bit TSS" descriptor for the TSS at base. */
static void set_tss_desc(u64 *gdt, unsigned long base)
{
	u64 limit = TSS_SIZE - 1;

	gdt[0] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89UL << 40) |
		 (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	gdt[1] = base >> 32;
}

void cpu_init(struct percpu *pcpu)
{
	u64 *gdt = pcpu->gdt;
	struct desc_ptr gdt_descr;
	struct tss_struct *tss = &pcpu->tss;

	gdt[0] = 0;
	gdt[KERNEL32_CS / 8] = GDT_KERNEL32_CS;
	gdt[KERNEL_CS / 8] = GDT_KERNEL_CS;
	gdt[KERNEL_DS / 8] = GDT_KERNEL_DS;
	gdt[USER32_CS / 8] = GDT_USER32_CS;
	gdt[USER_DS / 8] = GDT_USER_DS;
	gdt[USER_CS / 8] = GDT_USER_CS;
	gdt[7] = 0;
	set_tss_desc(&gdt[TSS_SEL / 8], (unsigned long)tss);

	gdt_descr.size = GDT_SIZE - 1;
	gdt_descr.address = (u64)gdt;
	__asm__ __volatile__("lgdt %0" : : "m" (gdt_descr));

	/* The TSS only supplies RSP0: the stack the CPU loads when an interrupt arrives in user mode. */
	memset(tss, 0, sizeof(*tss));
	tss->sp0 = pcpu->top_of_stack;
	tss->io_bitmap_base = sizeof(*tss);	/* no I/O bitmap */
	__asm__ __volatile__("ltr %w0" : : "r" (TSS_SEL));

	/* syscall: CS/SS from STAR, RIP from LSTAR, RFLAGS &= ~FMASK (interrupts off on entry). */
	wrmsrl(MSR_STAR, STAR_VALUE);
	wrmsrl(MSR_LSTAR, (unsigned long)entry_SYSCALL_64);
	wrmsrl(MSR_FMASK, SYSCALL_FMASK);
	wrmsrl(MSR_EFER, rdmsrl(MSR_EFER) | EFER_SCE);
}
