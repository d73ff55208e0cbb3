/* Loopback delivery: who sent the packet whose receive wakes a task.
 * Included by gotraced.bpf.c after irq_flags() (on_wakeup's, which reads
 * these slots through loopback_flags()).
 *
 * A packet a task sends to 127.0.0.1 is queued by loopback_xmit() ->
 * (__)netif_rx() on the sender's CPU, inside its send syscall with
 * softirqs disabled; the local_bh_enable() that ends __dev_queue_xmit()
 * then runs the NET_RX softirq right there, in the sender's context (Linux
 * 5.10 and 6.1 alike), and the receiver's wakeup comes from that softirq.
 * Three facts from the kernel tell it apart from a softirq that merely
 * interrupted a task:
 *  - net:netif_rx in task context (no hardirq, NMI or softirq being
 *    served): the skb and its sender, in this CPU's slots;
 *  - net:netif_receive_skb (the packet's receive begins, for every
 *    packet, loopback or device): this CPU's packet now = its sender
 *    (found and forgotten in the slots) and whether it came in on a
 *    loopback device; cleared at the NET_RX softirq's exit;
 *  - at sched_waking in a softirq, the packet's sender == current: the
 *    softirq runs in the sender's own context, for its own packet.
 * Every task's sends are recorded, traced or not (an untraced sender is
 * named, where the session may see it: GT_WAKEUP_SENDER).  These programs
 * run for every packet of the machine, the bystanders' too, while any
 * session records: each is one per-CPU lookup and plain loads and stores
 * (no probe-read but the preempt count's, no other helper; docs/design.md
 * "Cost" has their figures).  A skb that never reaches netif_receive_skb
 * (dropped) is overwritten 16 sends later; a reused address can only
 * match while that same task is current in the softirq of a packet of
 * its own. */
#ifndef GOTRACED_LOOPBACK_BPF_H
#define GOTRACED_LOOPBACK_BPF_H

#define GT_RX_SLOTS 16 /* a power of two */

/* Per CPU: the last GT_RX_SLOTS packets tasks sent on it, and the packet
 * being received now.  Per CPU, not a shared hash: a loopback packet is
 * queued to the backlog of the CPU that sends it (without RPS), and only
 * there can the softirq run in its sender's context; no lock, no shared
 * cache line, no helper but one lookup. */
struct gt_rx {
	__u64 skb[GT_RX_SLOTS];  /* sent packets' addresses (0 = free) */
	__u32 tid[GT_RX_SLOTS];  /* ... and their senders */
	__u32 next;              /* the slot the next one takes */
	__u32 sent;              /* slots in use: the scan is skipped at 0 */
	__u32 sender;            /* the packet being received: its sender's
				  * tid, 0 = unknown */
	__u32 loopback;          /* ... it arrived on a loopback device */
	__u64 rq;                /* this CPU's runqueue (this_rq()'s), kept
				  * here: netif_rx's one lookup finds both */
};

GT_PERCPU_SLOT(rx_state, struct gt_rx);

static __always_inline struct gt_rx *my_rx(void)
{
	return percpu_slot(&rx_state);
}

#define GT_IFF_LOOPBACK 0x8     /* include/uapi/linux/if.h */
#define GT_NET_RX_SOFTIRQ 3     /* include/linux/interrupt.h */

/* Whether this CPU serves an interrupt (hardirq, NMI, softirq) now:
 * irq_flags() != 0, without its hrtimer read. */
static __always_inline bool rx_in_irq(struct gt_rx *rx)
{
	__u64 rq = 0;

	if (preempt_count_from_rq) {
		rq = rx->rq;
		if (!rq)
			rx->rq = rq = gt_this_rq();
	}
	return gt_preempt_count(rq) & (GT_NMI_MASK | GT_HARDIRQ_MASK | GT_SOFTIRQ_OFFSET);
}

SEC("tp_btf/netif_rx")
int BPF_PROG(gt_netif_rx, struct sk_buff *skb)
{
	struct gt_rx *rx = my_rx();
	__u32 i;

	if (!rx || rx_in_irq(rx))
		return 0; /* not a task's own send */
	i = rx->next++ & (GT_RX_SLOTS - 1);
	if (!rx->skb[i])
		rx->sent++;
	rx->skb[i] = (__u64)skb;
	rx->tid[i] = gt_task_pid(current_task());
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(gt_netif_receive_skb, struct sk_buff *skb)
{
	struct gt_rx *rx = my_rx();
	struct net_device *dev;

	if (!rx)
		return 0;
	rx->sender = 0;
	/* plain loads from the BTF pointer: a probe-read helper call each
	 * cost more than the rest of the program */
	dev = skb->dev;
	rx->loopback = dev && (dev->flags & GT_IFF_LOOPBACK);
	if (!rx->loopback || !rx->sent)
		return 0;
#pragma unroll
	for (int i = 0; i < GT_RX_SLOTS; i++) {
		if (rx->skb[i] == (__u64)skb) {
			rx->sender = rx->tid[i];
			rx->skb[i] = 0;
			rx->sent--;
		}
	}
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(gt_softirq_exit, unsigned int vec)
{
	struct gt_rx *rx;

	if (vec != GT_NET_RX_SOFTIRQ)
		return 0;
	rx = my_rx();
	if (rx) {
		rx->sender = 0;
		rx->loopback = 0;
	}
	return 0;
}

/* flags of a wakeup from a softirq, if it is the receive of a loopback
 * packet: GT_WAKEUP_LOOPBACK, and without GT_WAKEUP_SOFTIRQ when the
 * packet's sender is current (the wakeup is then its own). */
static __always_inline __u32 loopback_flags(struct task_struct *cur, __u32 flags)
{
	struct gt_rx *rx;

	if ((flags & GT_WAKEUP_IN_IRQ) != GT_WAKEUP_SOFTIRQ)
		return flags;
	rx = my_rx();
	if (!rx || !rx->loopback)
		return flags;
	flags |= GT_WAKEUP_LOOPBACK;
	if (rx->sender && rx->sender == gt_task_pid(cur))
		flags &= ~GT_WAKEUP_SOFTIRQ;
	return flags;
}

#endif
