// SPDX-License-Identifier: MIT
/*
 * The interrupt descriptor table: one, shared by all CPUs.
 */
#include <abi.h>
#include <linux/kernel.h>

#ifndef X86_TRAP_XF
#define X86_TRAP_XF		19	/* SIMD floating-point exception */
#endif

/* A 64-bit interrupt gate. */
struct gate_struct {
	u16 offset_low;
	u16 segment;
	u16 bits;		/* ist:3, zero:5, type:4, zero:1, dpl:2, p:1 */
	u16 offset_middle;
	u32 offset_high;
	u32 reserved;
} __packed;

#define GATE_INTERRUPT	0xe	/* clears IF on entry: handlers run with interrupts off */

/* The stubs in entry_64.S. */
extern char asm_exc_divide_error[], asm_exc_debug[], asm_exc_nmi[], asm_exc_int3[],
	asm_exc_invalid_op[], asm_exc_general_protection[], asm_exc_page_fault[],
	asm_exc_coprocessor_error[], asm_exc_simd_coprocessor_error[],
	asm_sysvec_apic_timer_interrupt[], irq_entries_start[];

struct gate_struct idt_table[NR_VECTORS] __aligned(PAGE_SIZE);

struct idt_data {
	unsigned int vector;
	unsigned int dpl;
	const void *addr;
};

static const struct idt_data def_idts[] = {
	{ X86_TRAP_DE,	0, asm_exc_divide_error },
	{ X86_TRAP_DB,	0, asm_exc_debug },	/* no IST: #DB uses the current stack */
	{ X86_TRAP_NMI,	0, asm_exc_nmi },
	{ X86_TRAP_BP,	3, asm_exc_int3 },	/* DPL 3: user code may execute int3 */
	{ X86_TRAP_UD,	0, asm_exc_invalid_op },
	{ X86_TRAP_GP,	0, asm_exc_general_protection },
	{ X86_TRAP_PF,	0, asm_exc_page_fault },
	{ X86_TRAP_MF,	0, asm_exc_coprocessor_error },
	{ X86_TRAP_XF,	0, asm_exc_simd_coprocessor_error },
	{ TIMER_VECTOR,	0, asm_sysvec_apic_timer_interrupt },
};

static void set_gate(unsigned int vector, const void *addr, unsigned int dpl)
{
	unsigned long a = (unsigned long)addr;
	struct gate_struct *g = &idt_table[vector];

	g->offset_low = a & 0xffff;
	g->segment = KERNEL_CS;
	g->bits = (GATE_INTERRUPT << 8) | (dpl << 13) | (1 << 15);
	g->offset_middle = (a >> 16) & 0xffff;
	g->offset_high = a >> 32;
	g->reserved = 0;
}

/*
 * Every CPU runs this on the one shared table. Each gate is written once,
 * with its final value, so a CPU that already runs with this IDT never sees
 * a gate change under it: the other CPUs only rewrite identical bytes.
 */
void idt_setup(void)
{
	unsigned int v, i;

	for (v = 0; v < NR_VECTORS; v++) {
		/* Vectors without a handler of their own go to their catch-all stub. */
		const void *addr = irq_entries_start + v * IDT_ENTRY_STRIDE;
		unsigned int dpl = 0;

		for (i = 0; i < ARRAY_SIZE(def_idts); i++) {
			if (def_idts[i].vector == v) {
				addr = def_idts[i].addr;
				dpl = def_idts[i].dpl;
			}
		}
		set_gate(v, addr, dpl);
	}
}

void load_idt(void)
{
	struct {
		u16 size;
		u64 address;
	} __packed idt_descr = { sizeof(idt_table) - 1, (u64)idt_table };

	__asm__ __volatile__("lidt %0" : : "m" (idt_descr));
}
