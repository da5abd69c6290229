/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which sockets a sandbox may create.
 */
#ifndef BFBPF_LIB_SOCKET_H
#define BFBPF_LIB_SOCKET_H

#include "lib/common.h"
/*
 * Socket creation: in restrictive modes only stream and datagram sockets of
 * the address families whose every send passes the address hooks above
 * (plus AF_UNIX and AF_NETLINK, which never leave the host). Raw and ping
 * sockets would bypass the connect/sendmsg hooks.
 */
static __always_inline int socket_verdict(const struct bfbpf_sandbox *sandbox, __u32 family,
					  __u32 type, __u32 protocol)
{
	if (!sandbox->generation)
		return BFBPF_VERDICT_DENY; /* attached, policy not yet written: fail closed */
	if (sandbox->flags & BFBPF_SANDBOX_PUBLIC)
		return BFBPF_VERDICT_ALLOW;
	if (family == AF_UNIX || family == AF_NETLINK)
		return BFBPF_VERDICT_ALLOW;
	if (family != AF_INET && family != AF_INET6)
		return BFBPF_VERDICT_DENY; /* AF_PACKET, AF_VSOCK, AF_XDP, ... */
	if (type == SOCK_STREAM &&
	    (protocol == 0 || protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP))
		return BFBPF_VERDICT_ALLOW;
	if (type == SOCK_DGRAM &&
	    (protocol == 0 || protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE))
		return BFBPF_VERDICT_ALLOW;
	return BFBPF_VERDICT_DENY; /* SOCK_RAW, ping (ICMP/ICMPv6 datagram), SCTP, ... */
}

#endif /* BFBPF_LIB_SOCKET_H */
