/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The redirect of every port-53 query to the sandbox's own DNS responder,
 * and the peer address its replies show.
 */
#ifndef BFBPF_LIB_DNS_H
#define BFBPF_LIB_DNS_H

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/destination.h"
/* Should this connect or send go to the sandbox's DNS responder instead? */
static __always_inline int dns_redirected(const struct bfbpf_sandbox *sandbox, __u32 port)
{
	return sandbox->generation && sandbox->dns_port &&
	       !(sandbox->flags & BFBPF_SANDBOX_PUBLIC) && port == BFBPF_DNS_PORT;
}

/* Remembers the original destination for recvmsg and getpeername; NULL: deny. */
static __always_inline struct bfbpf_dns_origin *
dns_origin_record(struct bpf_sock_addr *ctx, const struct bfbpf_sandbox *sandbox, __u32 family)
{
	struct bfbpf_dns_origin *origin;
	struct bpf_sock *sk = ctx->sk;

	if (!sk)
		return NULL;
	origin = bpf_sk_storage_get(&dns_origins, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!origin)
		return NULL;
	origin->port = (__u16)ctx->user_port;
	origin->responder_port = sandbox->dns_port;
	origin->family = family;
	return origin;
}

/*
 * The peer a redirected socket sees (recvmsg source, getpeername) is put
 * back to the server it asked, so that resolvers accept the reply. Only the
 * responder's own address and port are rewritten. These hooks must say 1.
 */
static __always_inline void dns_unredirect4(struct bpf_sock_addr *ctx)
{
	struct bfbpf_dns_origin *origin;
	struct bpf_sock *sk = ctx->sk;

	if (!sk)
		return;
	origin = bpf_sk_storage_get(&dns_origins, sk, 0, 0);
	if (!origin || ctx->user_ip4 != bpf_htonl(0x7f000001) ||
	    ctx->user_port != bpf_htons(origin->responder_port))
		return;
	ctx->user_ip4 = origin->addr[3];
	ctx->user_port = origin->port;
}

static __always_inline void dns_unredirect6(struct bpf_sock_addr *ctx)
{
	struct bfbpf_dns_origin *origin;
	struct bpf_sock *sk = ctx->sk;
	__u32 w2, w3;

	if (!sk)
		return;
	origin = bpf_sk_storage_get(&dns_origins, sk, 0, 0);
	if (!origin || ctx->user_port != bpf_htons(origin->responder_port) || ctx->user_ip6[0] ||
	    ctx->user_ip6[1])
		return;
	w2 = ctx->user_ip6[2];
	w3 = ctx->user_ip6[3];
	if (!((w2 == 0 && w3 == bpf_htonl(1)) ||
	      (w2 == bpf_htonl(0x0000ffff) && w3 == bpf_htonl(0x7f000001))))
		return;
	ctx->user_ip6[0] = origin->addr[0];
	ctx->user_ip6[1] = origin->addr[1];
	ctx->user_ip6[2] = origin->addr[2];
	ctx->user_ip6[3] = origin->addr[3];
	ctx->user_port = origin->port;
}

#endif /* BFBPF_LIB_DNS_H */
