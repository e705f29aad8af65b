// SPDX-License-Identifier: MIT
/*
 * start_kernel: what each vCPU runs once, after startup_64 (head_64.S).
 */
#include <abi.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>
#include <asm/special_insns.h>

void cpu_init(struct percpu *pcpu);	/* arch/x86/kernel/cpu/common.c */
void idt_setup(void);			/* arch/x86/kernel/idt.c */
void load_idt(void);

const char linux_banner[] = "Linux version 0.0.0-probekit (guest kernel image, gcc -O2)\n";

/* Tell the host this CPU is ready for tasks. */
noinline void cpu_online(unsigned long cpu)
{
	hypercall1(HC_CPU_ONLINE, cpu);
}

/*
 * The idle loop (do_idle): halt until an interrupt arrives, then schedule
 * if the host asked for it. sti only takes effect after the next
 * instruction, so no interrupt can slip in between sti and hlt and leave the
 * CPU halted with work pending.
 */
__cpuidle noinline void __noreturn cpu_idle(void)
{
	for (;;) {
		while (!this_cpu_read(need_resched) && !this_cpu_read(ttwu_pending))
			__asm__ __volatile__("sti; hlt; cli" : : : "memory");
		schedule_idle();
	}
}

asmlinkage void __noreturn start_kernel(unsigned long cpu, struct percpu *pcpu, unsigned long boot_sp)
{
	pcpu->self = (unsigned long)pcpu;
	pcpu->cpu_number = cpu;
	if (!pcpu->top_of_stack)			/* the host did not give us a kernel stack: */
		pcpu->top_of_stack = boot_sp & ~15UL;	/* use the boot stack */

	/* GS base = the per-CPU area while in the kernel; user GS is 0 until the host says otherwise. */
	wrmsrl(MSR_GS_BASE, (unsigned long)pcpu);
	wrmsrl(MSR_KERNEL_GS_BASE, 0);

	cpu_init(pcpu);		/* GDT, TSS, syscall MSRs */
	idt_setup();		/* every CPU writes the same shared IDT: harmless */
	load_idt();

	if (cpu >= NR_CPUS) {
		printk("CPU %lu: beyond NR_CPUS (%d), halting\n", cpu, NR_CPUS);
		halt_forever();
	}
	if (cpu == 0)
		printk("%s", linux_banner);

	cpu_online(cpu);
	cpu_idle();
}
