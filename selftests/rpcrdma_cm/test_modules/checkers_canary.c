// SPDX-License-Identifier: GPL-2.0
/*
 * Planted bugs for dmesg_clean.sh, which loads this module last in a guest
 * session, after it has judged the session's log: the kernel's checkers
 * must report each of them, and the suite's own judges must count each
 * report as a failure. A kernel whose KASAN or kmemleak is off or blind
 * passes a clean log without looking; this is what tells the two apart.
 * Never load it anywhere else.
 *
 * plant=overread  reads one octet past a 5-octet kmalloc() object, as a
 *                 decoder reading an 8-octet message from a copy of
 *                 5 octets of private data would (iw_cm hands the server
 *                 a kmemdup() of exactly what the peer sent) (KASAN:
 *                 slab-out-of-bounds)
 * plant=leak      allocates leaks= objects of CANARY_LEAK_SIZE octets and
 *                 drops the only pointer to each (kmemleak: unreferenced
 *                 object). More than one: a stale copy of a pointer can
 *                 stay on a stack kmemleak scans and keep that object
 *                 from being reported.
 *
 * Loading succeeds either way; the report is what the caller reads.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

/*
 * The leaked objects' size (kmemleak reports its cache's, 192) and their
 * contents, 0xf6 throughout: what dmesg_clean.sh finds in the report.
 */
#define CANARY_LEAK_SIZE 173

static char *plant = "";
module_param(plant, charp, 0444);
MODULE_PARM_DESC(plant, "the bug to plant: overread or leak");

static unsigned int leaks = 32;
module_param(leaks, uint, 0444);
MODULE_PARM_DESC(leaks, "objects plant=leak leaks (default 32)");

/* Keeps the compiler from seeing that the read is out of bounds. */
static unsigned long canary_index = 5;
module_param(canary_index, ulong, 0444);
MODULE_PARM_DESC(canary_index, "octet read by plant=overread (default 5, one past)");

static int __init checkers_canary_init(void)
{
	unsigned int i;
	u8 *p;

	if (!strcmp(plant, "overread")) {
		p = kmalloc(5, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		memset(p, 0x18, 5);
		pr_info("planted over-read: octet %lu of 5 is %#x\n",
			canary_index, READ_ONCE(p[canary_index]));
		kfree(p);
	} else if (!strcmp(plant, "leak")) {
		for (i = 0; i < leaks; i++) {
			/* Each pointer overwrites the one before. */
			p = kmalloc(CANARY_LEAK_SIZE, GFP_KERNEL);
			if (!p)
				return -ENOMEM;
			memset(p, 0xf6, CANARY_LEAK_SIZE);
			/* The pattern is what dmesg_clean.sh finds. */
			barrier_data(p);
		}
		pr_info("planted %u leaks of %d octets\n", leaks, CANARY_LEAK_SIZE);
	} else {
		pr_err("plant=%s: say overread or leak\n", plant);
		return -EINVAL;
	}
	return 0;
}

static void __exit checkers_canary_exit(void)
{
}

module_init(checkers_canary_init);
module_exit(checkers_canary_exit);

MODULE_DESCRIPTION("Planted bugs that KASAN and kmemleak must report (dmesg_clean.sh)");
MODULE_LICENSE("GPL");
