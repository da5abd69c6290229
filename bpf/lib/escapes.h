/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Ways a packet could go where the address hooks did not look, and what
 * bfbpf.bpf.c does about them (issue 19, items 6 to 8):
 *
 * - NAT64 (64:ff9b::/96) destinations whose IPv4 is not globally reachable:
 *   they leave as IPv6 on the default route, whatever IPv4 they spell.
 * - Source routes: an IPv4 LSRR/SSRR option or an IPv6 routing header sends
 *   the packet through hops that neither the address hooks (they judge the
 *   final destination) nor egress (it judges the first hop) ever see.
 * - Multicast joins: the kernel's IGMP and MLD reports, which no socket
 *   sends, carry the group (and source) addresses to every host on the link.
 *
 * Pure parsing here; the verdicts stay in bfbpf.bpf.c.
 */
#ifndef BFBPF_ESCAPES_H
#define BFBPF_ESCAPES_H

#include "lib/common.h"
#include "lib/destination.h"

#ifndef SOL_IP
#define SOL_IP 0
#endif
#ifndef SOL_IPV6
#define SOL_IPV6 41
#endif

/*
 * Is this IPv4 address (network order) globally reachable? RFC 6052 section
 * 3.1 forbids the well-known prefix for the others, and a NAT64 translator
 * must not translate them: a sandbox spelling one through 64:ff9b:: can only
 * mean to reach something the prefix was never for. The list is the IANA
 * special-purpose registry's "globally reachable: false" (RFC 6890 and its
 * updates), plus multicast and the deprecated 6to4 relay anycast.
 */
static __always_inline int ip4_is_global(__u32 ip4)
{
	__u32 a = bpf_ntohl(ip4);
	__u8 first = a >> 24;

	if (first == 0 ||   /* 0.0.0.0/8 "this network" */
	    first == 10 ||  /* 10.0.0.0/8 private */
	    first == 127 || /* 127.0.0.0/8 loopback */
	    first >= 224)   /* 224.0.0.0/4 multicast, 240.0.0.0/4 reserved, broadcast */
		return 0;
	if ((a & 0xffc00000) == 0x64400000 || /* 100.64.0.0/10 shared (carrier-grade NAT) */
	    (a & 0xffff0000) == 0xa9fe0000 || /* 169.254.0.0/16 link-local */
	    (a & 0xfff00000) == 0xac100000 || /* 172.16.0.0/12 private */
	    (a & 0xffffff00) == 0xc0000000 || /* 192.0.0.0/24 IETF protocol assignments */
	    (a & 0xffffff00) == 0xc0000200 || /* 192.0.2.0/24 documentation */
	    (a & 0xffffff00) == 0xc0586300 || /* 192.88.99.0/24 6to4 relay anycast (deprecated) */
	    (a & 0xffff0000) == 0xc0a80000 || /* 192.168.0.0/16 private */
	    (a & 0xfffe0000) == 0xc6120000 || /* 198.18.0.0/15 benchmarking (the tests' world) */
	    (a & 0xffffff00) == 0xc6336400 || /* 198.51.100.0/24 documentation */
	    (a & 0xffffff00) == 0xcb007100)   /* 203.0.113.0/24 documentation */
		return 0;
	return 1;
}

/* ------------------------------------------------------------ source routes */

#define IP4_OPTIONS_MAX 40 /* ihl is 4 bits: 60 bytes of header, 20 of them fixed */

/* The walk over an IPv4 header's options, one option per bpf_loop round. */
struct ip4_options_walk {
	__u8 options[IP4_OPTIONS_MAX];
	__u32 len; /* bytes of options */
	__u32 at;  /* the option this round reads */
	int routed;
};

/*
 * One option: 0 goes on, 1 stops. A callback of bpf_loop (kernel 5.17+): the
 * verifier checks it once, where an open-coded loop over 40 variable-length
 * options made it walk past a million instructions (every length a state).
 */
static long ip4_option_step(__u32 round, void *data)
{
	struct ip4_options_walk *walk = data;
	__u32 at = walk->at;
	__u8 type, size;

	/* The second test tells the verifier that at indexes the array. */
	if (at >= walk->len || at >= IP4_OPTIONS_MAX)
		return 1;
	type = walk->options[at];
	if (type == 0) /* end of options */
		return 1;
	if (type == 1) { /* no-operation */
		walk->at = at + 1;
		return 0;
	}
	/* LSRR (131), SSRR (137): matched by number, whatever the class and copy bits. */
	if ((type & 0x1f) == 3 || (type & 0x1f) == 9)
		goto routed;
	if (at + 1 >= walk->len || at + 1 >= IP4_OPTIONS_MAX)
		goto routed; /* no length byte: malformed */
	size = walk->options[at + 1];
	if (size < 2)
		goto routed;
	walk->at = at + size;
	return 0;
routed: /* or unreadable: fail closed */
	walk->routed = 1;
	return 1;
}

/*
 * Does an IPv4 packet whose header is ihl words long carry a source route?
 * Anything that cannot be read or parsed counts as one: fail closed.
 */
static __always_inline int ip4_source_routed(struct __sk_buff *skb, __u32 ihl)
{
	struct ip4_options_walk walk = {};

	if (ihl <= 5)
		return 0;
	walk.len = ihl * 4 - sizeof(struct iphdr);
	/* Bounds the helper's length for the verifier (ihl <= 15 already does). */
	if (walk.len > IP4_OPTIONS_MAX)
		return 1;
	if (bpf_skb_load_bytes(skb, sizeof(struct iphdr), walk.options, walk.len))
		return 1;
	/* Each option takes a byte at least: 40 rounds cover any header. */
	if (bpf_loop(IP4_OPTIONS_MAX, ip4_option_step, &walk, 0) < 0)
		return 1;
	return walk.routed;
}

/* IPv6 extension headers walked before giving up (failing closed). */
#define IP6_EXTENSIONS_MAX 8

/*
 * Does an IPv6 packet carry a routing header (any type: type 0 is
 * deprecated, type 2 is Mobile IPv6, type 4 is SRv6) among the extension
 * headers that may precede it? A local socket's routing header comes after
 * hop-by-hop and destination options only (RFC 8200 order; the kernel
 * writes it so): the walk stops at anything else.
 */
static __always_inline int ip6_source_routed(struct __sk_buff *skb, __u8 nexthdr)
{
	__u32 offset = sizeof(struct ipv6hdr);

	for (int i = 0; i < IP6_EXTENSIONS_MAX; i++) {
		__u8 extension[2]; /* next header, length in 8-byte units beyond the first 8 */

		if (nexthdr == IPPROTO_ROUTING)
			return 1;
		if (nexthdr != IPPROTO_HOPOPTS && nexthdr != IPPROTO_DSTOPTS)
			return 0;
		if (bpf_skb_load_bytes(skb, offset, extension, sizeof(extension)))
			return 1;
		nexthdr = extension[0];
		offset += (extension[1] + 1) * 8;
	}
	return 1;
}

/* May this IP header be followed by options or extension headers worth a look? */
static __always_inline int ip4_has_options(__u32 ihl)
{
	return ihl != 5;
}

static __always_inline int ip6_has_extensions(__u8 nexthdr)
{
	return nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_DSTOPTS;
}

/* The packet's options or extension headers name a source route. */
static __always_inline int packet_source_routed(struct __sk_buff *skb)
{
	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		__u8 first; /* version and ihl */

		if (bpf_skb_load_bytes(skb, 0, &first, sizeof(first)))
			return 1;
		return ip4_source_routed(skb, first & 0x0f);
	}
	if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		__u8 nexthdr;

		if (bpf_skb_load_bytes(skb, offsetof(struct ipv6hdr, nexthdr), &nexthdr,
				       sizeof(nexthdr)))
			return 1;
		return ip6_source_routed(skb, nexthdr);
	}
	return 1;
}

/* ---------------------------------------------------------- socket options */

/* What a setsockopt call asks of the policy. */
enum sockopt_ask {
	SOCKOPT_FREE,	      /* an option the filter leaves alone */
	SOCKOPT_REFUSED,      /* refused in restrictive modes whatever the policy */
	SOCKOPT_GROUP,	      /* joins a multicast group: the group must be allowed */
	SOCKOPT_GROUP_SOURCE, /* adds a source to a group's filter: both must be allowed */
};

/*
 * Larger option values reach the program cut to a page, and the kernel then
 * reads the caller's memory again, after the program: such a value of a
 * judged option is refused, for the program never saw what the kernel uses.
 */
#define SOCKOPT_SEEN_MAX 4096

/*
 * An address of the option value as a destination: IPv4 mapped as the allow
 * maps store it, IPv6 as written (a group is never NAT64). -1: out of bounds.
 */
static __always_inline int sockopt_ip4(void *optval, void *end, __u32 offset,
				       struct destination *out)
{
	__u32 *addr = optval + offset;

	if ((void *)(addr + 1) > end)
		return -1;
	destination_from_ip4(out, *addr);
	return 0;
}

static __always_inline int sockopt_ip6(void *optval, void *end, __u32 offset,
				       struct destination *out)
{
	__u32 *addr = optval + offset;

	if ((void *)(addr + 4) > end)
		return -1;
	out->addr[0] = addr[0];
	out->addr[1] = addr[1];
	out->addr[2] = addr[2];
	out->addr[3] = addr[3];
	out->nat64 = 0;
	return 0;
}

/* A struct sockaddr_storage of the option value (group_req, group_source_req). */
static __always_inline int sockopt_sockaddr(void *optval, void *end, __u32 offset,
					    struct destination *out)
{
	__u16 *family = optval + offset;

	if ((void *)(family + 1) > end)
		return -1;
	if (*family == AF_INET)
		return sockopt_ip4(optval, end, offset + offsetof(struct sockaddr_in, sin_addr),
				   out);
	if (*family == AF_INET6)
		return sockopt_ip6(optval, end, offset + offsetof(struct sockaddr_in6, sin6_addr),
				   out);
	return -1;
}

/* The protocol-independent joins (RFC 3678), at either level. */
static __always_inline int sockopt_mcast(struct bpf_sockopt *ctx, struct destination *group,
					 struct destination *source)
{
	void *optval = ctx->optval, *end = ctx->optval_end;

	switch (ctx->optname) {
	case MCAST_JOIN_GROUP:
		if (ctx->optlen < (int)sizeof(struct group_req) ||
		    sockopt_sockaddr(optval, end, offsetof(struct group_req, gr_group), group))
			return SOCKOPT_REFUSED;
		return SOCKOPT_GROUP;
	case MCAST_JOIN_SOURCE_GROUP:
	case MCAST_BLOCK_SOURCE:
		if (ctx->optlen < (int)sizeof(struct group_source_req) ||
		    sockopt_sockaddr(optval, end, offsetof(struct group_source_req, gsr_group),
				     group) ||
		    sockopt_sockaddr(optval, end, offsetof(struct group_source_req, gsr_source),
				     source))
			return SOCKOPT_REFUSED;
		return SOCKOPT_GROUP_SOURCE;
	case MCAST_MSFILTER: /* a whole source list: not judged entry by entry */
		return SOCKOPT_REFUSED;
	}
	return SOCKOPT_FREE;
}

/*
 * What the option asks, by its level (not the socket's family: SOL_IP
 * options work on AF_INET6 sockets too). A judged option whose value cannot
 * be read is refused; the kernel would refuse it as well (EINVAL).
 *
 * Leaving a group, or dropping or unblocking a source, is free: the kernel
 * accepts them only for what a judged option added. IPV6_2292RTHDR is free
 * too: on setsockopt it only asks to receive routing headers (RFC 2292
 * sticky headers are set through IPV6_2292PKTOPTIONS, refused here).
 */
static __always_inline int sockopt_decode(struct bpf_sockopt *ctx, struct destination *group,
					  struct destination *source)
{
	void *optval = ctx->optval, *end = ctx->optval_end;

	if (ctx->level == SOL_IP) {
		switch (ctx->optname) {
		case IP_OPTIONS: /* an empty value clears them */
			return ctx->optlen > 0 ? SOCKOPT_REFUSED : SOCKOPT_FREE;
		case IP_ADD_MEMBERSHIP: /* struct ip_mreq or ip_mreqn: the group first */
			if (ctx->optlen < (int)sizeof(struct ip_mreq) ||
			    sockopt_ip4(optval, end, offsetof(struct ip_mreq, imr_multiaddr),
					group))
				return SOCKOPT_REFUSED;
			return SOCKOPT_GROUP;
		case IP_ADD_SOURCE_MEMBERSHIP:
		case IP_BLOCK_SOURCE:
			if (ctx->optlen < (int)sizeof(struct ip_mreq_source) ||
			    sockopt_ip4(optval, end, offsetof(struct ip_mreq_source, imr_multiaddr),
					group) ||
			    sockopt_ip4(optval, end,
					offsetof(struct ip_mreq_source, imr_sourceaddr), source))
				return SOCKOPT_REFUSED;
			return SOCKOPT_GROUP_SOURCE;
		case IP_MSFILTER:
			return SOCKOPT_REFUSED;
		}
		return sockopt_mcast(ctx, group, source);
	}
	if (ctx->level == SOL_IPV6) {
		switch (ctx->optname) {
		case IPV6_RTHDR:	  /* an empty value removes the sticky header */
		case IPV6_2292PKTOPTIONS: /* sticky headers as ancillary data */
			return ctx->optlen > 0 ? SOCKOPT_REFUSED : SOCKOPT_FREE;
		case IPV6_JOIN_ANYCAST: /* joins the address's solicited-node group (MLD);
					   needs CAP_NET_ADMIN, refused all the same */
			return SOCKOPT_REFUSED;
		case IPV6_ADD_MEMBERSHIP: /* also spelled IPV6_JOIN_GROUP */
			if (ctx->optlen < (int)sizeof(struct ipv6_mreq) ||
			    sockopt_ip6(optval, end, offsetof(struct ipv6_mreq, ipv6mr_multiaddr),
					group))
				return SOCKOPT_REFUSED;
			return SOCKOPT_GROUP;
		}
		return sockopt_mcast(ctx, group, source);
	}
	return SOCKOPT_FREE;
}

#endif /* BFBPF_ESCAPES_H */
