/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The destination of a packet at cgroup egress.
 */
#ifndef BFBPF_LIB_PACKET_H
#define BFBPF_LIB_PACKET_H

#include "lib/common.h"
#include "lib/destination.h"
static __always_inline int carries_ports(__u8 protocol)
{
	return protocol == IPPROTO_TCP || protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE;
}

/* Reads the destination port of a TCP or UDP header at offset; 0 for others. */
static __always_inline __u32 skb_destination_port(struct __sk_buff *skb, __u32 offset,
						  __u8 protocol)
{
	__u16 port;

	if (!carries_ports(protocol))
		return 0;
	/* The destination port is the second 16-bit word of both headers. */
	if (bpf_skb_load_bytes(skb, offset + 2, &port, sizeof(port)))
		return 0;
	return bpf_ntohs(port);
}

/*
 * The destination of a packet, copied out with bpf_skb_load_bytes; -1: not
 * IP or truncated. *extra: IPv4 options or IPv6 extension headers follow.
 */
static __always_inline int packet_destination_copied(struct __sk_buff *skb, struct destination *dst,
						     __u8 *protocol, int *extra)
{
	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)))
			return -1;
		destination_from_ip4(dst, ip.daddr);
		*protocol = ip.protocol;
		*extra = ip4_has_options(ip.ihl);
		/* A non-first fragment has no transport header: port stays 0. */
		if (!(ip.frag_off & bpf_htons(0x1fff)))
			dst->port = skb_destination_port(skb, ip.ihl * 4, ip.protocol);
		return 0;
	}
	if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)))
			return -1;
		destination_from_ip6(dst, ip6.daddr.in6_u.u6_addr32);
		*protocol = ip6.nexthdr;
		*extra = ip6_has_extensions(ip6.nexthdr);
		/* Extension headers are not walked: such packets match any-port entries only. */
		dst->port = skb_destination_port(skb, sizeof(ip6), ip6.nexthdr);
		return 0;
	}
	return -1;
}

/*
 * The destination of a packet, read in place. At cgroup egress the data
 * pointer is at the network header, and a local socket's headers are in the
 * linear part: a bounds check replaces two bpf_skb_load_bytes calls, which
 * were a third of the program's cost per packet. Anything not in place
 * (or not as expected) takes the copying way above, which judges alike.
 */
static __always_inline int packet_destination(struct __sk_buff *skb, struct destination *dst,
					      __u8 *protocol, int *extra)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u16 *ports;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data;

		if ((void *)(ip + 1) > data_end)
			return packet_destination_copied(skb, dst, protocol, extra);
		destination_from_ip4(dst, ip->daddr);
		*protocol = ip->protocol;
		*extra = ip4_has_options(ip->ihl);
		if ((ip->frag_off & bpf_htons(0x1fff)) || !carries_ports(ip->protocol))
			return 0;
		/* ihl is 4 bits: the verifier knows the offset is at most 60. */
		ports = data + ip->ihl * 4;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data;

		if ((void *)(ip6 + 1) > data_end)
			return packet_destination_copied(skb, dst, protocol, extra);
		destination_from_ip6(dst, ip6->daddr.in6_u.u6_addr32);
		*protocol = ip6->nexthdr;
		*extra = ip6_has_extensions(ip6->nexthdr);
		if (!carries_ports(ip6->nexthdr))
			return 0;
		ports = (void *)(ip6 + 1);
	} else {
		return -1;
	}
	if ((void *)(ports + 2) > data_end)
		return packet_destination_copied(skb, dst, protocol, extra);
	dst->port = bpf_ntohs(ports[1]);
	return 0;
}

#endif /* BFBPF_LIB_PACKET_H */
