// SPDX-License-Identifier: MIT
/*
 * Notifier chains, and the die chain that kprobes hook.
 *
 * The host registers its die notifiers (kprobes, uprobes, ...) by writing
 * guest memory: it links entries of host_notifier_blocks[] into die_chain,
 * sorted by priority. Each such block calls host_notifier_call, which hands
 * the event to the host callback number nb->host_index.
 */
#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <asm/hypercall.h>

int host_notifier_call(struct notifier_block *nb, unsigned long val, void *data);

/* The list head the host links blocks into (die_chain.head, offset 0). */
struct atomic_notifier_head die_chain;

/* Blocks for the host to link in: notifier_call and host_index are preset, the host sets next/priority. */
#define HOST_NB(i) { .notifier_call = host_notifier_call, .next = NULL, .priority = 0, .host_index = (i) }
struct notifier_block host_notifier_blocks[NR_HOST_NOTIFIERS] = {
	HOST_NB(0), HOST_NB(1), HOST_NB(2), HOST_NB(3), HOST_NB(4), HOST_NB(5), HOST_NB(6), HOST_NB(7),
	HOST_NB(8), HOST_NB(9), HOST_NB(10), HOST_NB(11), HOST_NB(12), HOST_NB(13), HOST_NB(14), HOST_NB(15),
};
_Static_assert(NR_HOST_NOTIFIERS == 16, "HOST_NB initialisers");

/*
 * Call each notifier on the list until one returns a value with
 * NOTIFY_STOP_MASK set (e.g. NOTIFY_STOP: "this trap was mine"), or
 * nr_to_call of them have been called (-1: no limit).
 */
noinline int notifier_call_chain(struct notifier_block **nl, unsigned long val, void *v,
				 int nr_to_call, int *nr_calls)
{
	int ret = NOTIFY_DONE;
	struct notifier_block *nb, *next_nb;

	nb = READ_ONCE(*nl);
	while (nb && nr_to_call) {
		next_nb = READ_ONCE(nb->next);
		ret = nb->notifier_call(nb, val, v);	/* an indirect call */
		if (nr_calls)
			(*nr_calls)++;
		if (ret & NOTIFY_STOP_MASK)
			break;
		nb = next_nb;
		nr_to_call--;
	}
	return ret;
}
NOKPROBE_SYMBOL(notifier_call_chain);

noinline int atomic_notifier_call_chain(struct atomic_notifier_head *nh, unsigned long val, void *v)
{
	return notifier_call_chain(&nh->head, val, v, -1, NULL);
}
NOKPROBE_SYMBOL(atomic_notifier_call_chain);

/*
 * The notifier_call of every host block: a leaf that passes the event to
 * the host. rdi = val (DIE_*), rsi = regs, rdx = trapnr, r10 = host index,
 * r8 = the struct die_args (str, err, signr).
 */
noinline int host_notifier_call(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;

	return (int)hypercall5(HC_NOTIFY_DIE, val, args->regs, args->trapnr, nb->host_index, args);
}
NOKPROBE_SYMBOL(host_notifier_call);

/* Tell everyone on die_chain about a trap; NOTIFY_STOP means someone handled it. */
noinline int notify_die(unsigned long val, const char *str, struct pt_regs *regs, long err,
			int trap, int sig)
{
	struct die_args args = {
		.regs = regs,
		.str = str,
		.err = err,
		.trapnr = trap,
		.signr = sig,
	};

	return atomic_notifier_call_chain(&die_chain, val, &args);
}
NOKPROBE_SYMBOL(notify_die);
