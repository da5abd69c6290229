/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A destination, normalised: IPv4, IPv4-mapped and NAT64 as ::ffff:a.b.c.d,
 * and what the kernel delivers to this host itself.
 */
#ifndef BFBPF_LIB_DESTINATION_H
#define BFBPF_LIB_DESTINATION_H

#include "lib/common.h"
/* A destination, normalised: IPv4 (and mapped/NAT64 IPv6) as ::ffff:a.b.c.d. */
struct destination {
	__u32 addr[4]; /* network byte order words */
	__u32 port;    /* host byte order */
	__u32 nat64;   /* spelled 64:ff9b::a.b.c.d: leaves as IPv6, never loopback */
};

static __always_inline void destination_from_ip4(struct destination *dst, __u32 ip4)
{
	dst->addr[0] = 0;
	dst->addr[1] = 0;
	dst->addr[2] = bpf_htonl(0x0000ffff);
	dst->addr[3] = ip4;
	dst->nat64 = 0;
}

static __always_inline void destination_from_ip6(struct destination *dst, const __u32 ip6[4])
{
	/*
	 * NAT64 well-known prefix 64:ff9b::/96 reaches the IPv4 it embeds, through
	 * a translator on the IPv6 route: judged as that IPv4 address, but never
	 * as this host (policy_verdict). IPv4-mapped ::ffff:a.b.c.d stays as it
	 * is: a dual-stack socket sends it as real IPv4.
	 */
	if (ip6[0] == bpf_htonl(NAT64_WORD0) && ip6[1] == 0 && ip6[2] == 0) {
		destination_from_ip4(dst, ip6[3]);
		dst->nat64 = 1;
		return;
	}
	dst->addr[0] = ip6[0];
	dst->addr[1] = ip6[1];
	dst->addr[2] = ip6[2];
	dst->addr[3] = ip6[3];
	dst->nat64 = 0;
}

static __always_inline int destination_is_ip4(const struct destination *dst)
{
	return dst->addr[0] == 0 && dst->addr[1] == 0 && dst->addr[2] == bpf_htonl(0x0000ffff);
}

/*
 * Destinations the kernel delivers to this host itself: 127.0.0.0/8, ::1,
 * and the unspecified addresses (a connect to 0.0.0.0 or :: reaches local
 * listeners), so that --no-loopback closes all of them.
 */
static __always_inline int destination_is_loopback(const struct destination *dst)
{
	if (destination_is_ip4(dst)) {
		__u8 first = bpf_ntohl(dst->addr[3]) >> 24;
		return first == 127 || dst->addr[3] == 0;
	}
	if (dst->addr[0] || dst->addr[1] || dst->addr[2])
		return 0;
	return dst->addr[3] == 0 || dst->addr[3] == bpf_htonl(1);
}

/* 127.0.0.1 (as ::ffff:127.0.0.1) or ::1: where the DNS responder listens. */
static __always_inline int destination_is_responder(const struct destination *dst)
{
	if (destination_is_ip4(dst))
		return dst->addr[3] == bpf_htonl(0x7f000001);
	return !dst->addr[0] && !dst->addr[1] && !dst->addr[2] && dst->addr[3] == bpf_htonl(1);
}

#endif /* BFBPF_LIB_DESTINATION_H */
