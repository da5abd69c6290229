/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names bound to TLS (issue 20, docs/policy.md "Names bound to TLS"): the
 * egress judge of TCP flows to a name-derived address on a judged port.
 *
 * A flow's first bytes are judged from stream offset 0 (the SYN's sequence
 * number + 1). While they are not complete (the parser says MORE), every
 * data segment is dropped at egress: TCP keeps a segment it could not send
 * in its queue, later writes append to it, and the next (re)transmission
 * carries the first flight grown from offset 0, read here again with
 * bpf_skb_load_bytes. Nothing of a flow reaches the server before its verdict;
 * a refused flow never sends a byte of payload (the daemon destroys it so that
 * the client errors at once, docs/threat-model.md).
 *
 * The parser (hello.h, tls_sni.h, http_host.h) works in a per-CPU scratch
 * value, never on the stack. A run can be preempted or interrupted by another
 * on the same CPU: the scratch is claimed with a compare-and-swap of its
 * sequence (odd: in use), and a run that finds it in use holds its segment
 * back (dropped, resent by TCP) rather than share it.
 */
#ifndef BFBPF_LIB_SNI_H
#define BFBPF_LIB_SNI_H

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/destination.h"
#include "lib/tls_sni.h"
#include "lib/http_host.h"

#ifndef IPPROTO_TCP
#define IPPROTO_TCP 6
#endif

struct sni_scratch {
	__u32 sequence; /* odd: a run is using it */
	__u32 reserved;
	/* sni_name_verdict's lookups: what they ask and what they found. */
	struct bfbpf_sni_name_key key;
	__u32 addr[4];
	__u32 port;
	__u32 named;
	__u32 allowed;
	__u32 reserved2;
	struct bfbpf_hello hello;
};

/* verifier: bpf_loop's ctx is on the stack; the state it points to is in the map value. */
struct sni_loop_ctx {
	struct sni_scratch *scratch;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sni_scratch);
} sni_scratch SEC(".maps");

/* What the judge of one packet says. */
enum sni_outcome {
	SNI_PASS,   /* not judged, or allowed */
	SNI_HOLD,   /* dropped for now: the first bytes are not complete */
	SNI_REFUSE, /* refused now (the first time: an event) */
	SNI_DROP,   /* a refused flow's later packet: dropped, no new event */
};

/*
 * A hit of a lookup by the hash of suffix at: the entry must also name that
 * suffix, byte for byte (bfbpf_name_suffix_is); a hash is no proof against a
 * chosen name. A hit whose name differs is a miss.
 */
static __always_inline int sni_entry_names(struct sni_scratch *s, __u32 at, __u8 need,
					   const struct bfbpf_sni_name_value *value)
{
	if (!value || !(value->kinds & need))
		return 0;
	return bfbpf_name_suffix_is(&s->hello, at, value->name, value->name_len);
}

/*
 * One suffix of the name (a bpf_loop callback, verified once: an unrolled
 * loop of lookups made the verifier walk past its limit). Suffixes come
 * shortest first; round BFBPF_SNI_MAX_LABELS is the whole name, however many
 * labels it has. The whole name needs an entry of itself, a proper suffix an
 * entry of its subdomains; either entry must name that suffix exactly.
 */
static int sni_suffix_step(__u32 round, void *ctx)
{
	struct sni_scratch *s = ((struct sni_loop_ctx *)ctx)->scratch;
	const struct bfbpf_sni_name_value *value;
	__u32 count = s->hello.suffix_count, at;
	__u8 need;

	if (count == 0 || count > BFBPF_SUFFIX_MAX)
		return 1;
	at = round < BFBPF_SNI_MAX_LABELS ? round : count - 1;
	if (at >= count)
		return 0;
	need = at == count - 1 ? BFBPF_SNI_NAME_SELF : BFBPF_SNI_NAME_SUBDOMAINS;
	/*
	 * verifier: masked, and the mask kept: clang drops a mask it can prove
	 * useless (at < count <= 128), and 6.1's verifier, which lost that
	 * bound, then refuses the access. The empty asm hides the bound from clang.
	 */
	asm volatile("" : "+r"(at));
	s->key.name_rhash = s->hello.suffix_hash[at & (BFBPF_SUFFIX_MAX - 1)];
	s->key.port = s->port;
	__builtin_memcpy(s->key.addr, s->addr, sizeof(s->key.addr));
	value = bpf_map_lookup_elem(&sni_names, &s->key);
	if (sni_entry_names(s, at, need, value)) {
		s->allowed = 1;
		return 1;
	}
	s->key.port = 0; /* the entry's marker: an entry names it at all */
	__builtin_memset(s->key.addr, 0, sizeof(s->key.addr));
	value = bpf_map_lookup_elem(&sni_names, &s->key);
	if (sni_entry_names(s, at, need, value))
		s->named = 1;
	return 0;
}

/*
 * The verdict on s->hello.name for dst under generation: 0 (allowed) or a
 * reason. At most BFBPF_SNI_MAX_LABELS suffixes and the whole name.
 */
static __always_inline int sni_name_verdict(struct sni_scratch *s, __u32 generation,
					    const struct destination *dst)
{
	struct sni_loop_ctx ctx = {.scratch = s};

	bfbpf_name_suffixes(&s->hello);
	s->key.generation = generation;
	s->port = dst->port;
	__builtin_memcpy(s->addr, dst->addr, sizeof(s->addr));
	s->named = 0;
	s->allowed = 0;
	bpf_loop(BFBPF_SNI_MAX_LABELS + 1, sni_suffix_step, &ctx, 0);
	if (s->allowed)
		return 0;
	return s->named ? BFBPF_REASON_SNI_ADDRESS_MISMATCH : BFBPF_REASON_SNI_NOT_ALLOWED;
}

/* The TCP header's offset, seq and flags byte; -1: not readable as expected. */
static __always_inline int sni_tcp_header(struct __sk_buff *skb, __u32 *l4, __u32 *seq, __u8 *flags,
					  __u32 *payload)
{
	__u8 first, doff;
	__u32 off;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		if (bpf_skb_load_bytes(skb, 0, &first, 1))
			return -1;
		off = (first & 0x0f) * 4;
	} else {
		off = sizeof(struct ipv6hdr); /* extension headers: refused before (extra) */
	}
	if (bpf_skb_load_bytes(skb, off + 4, seq, 4) ||
	    bpf_skb_load_bytes(skb, off + 12, &doff, 1) ||
	    bpf_skb_load_bytes(skb, off + 13, flags, 1))
		return -1;
	*seq = bpf_ntohl(*seq);
	*l4 = off;
	off += (doff >> 4) * 4;
	if (off > skb->len)
		return -1;
	*payload = off;
	return 0;
}

#define SNI_TCP_SYN 0x02

/*
 * Judges the first bytes of a flow held in skb from payload_off on, whose
 * stream offset 0 they are: 0 allowed, a reason, or -1 (not complete: hold).
 */
static __always_inline int sni_first_bytes(struct __sk_buff *skb, __u32 payload_off,
					   struct bfbpf_sni_flow *flow, __u32 generation,
					   const struct destination *dst)
{
	struct sni_scratch *scratch;
	__u32 zero = 0, sequence, n;
	int status, verdict;

	scratch = bpf_map_lookup_elem(&sni_scratch, &zero);
	if (!scratch)
		return -1;
	sequence = *(volatile __u32 *)&scratch->sequence;
	if ((sequence & 1) ||
	    __sync_val_compare_and_swap(&scratch->sequence, sequence, sequence + 1) != sequence)
		return -1;	    /* another run on this CPU holds it: try again on the resend */
	n = skb->len - payload_off; /* at least 1: the caller saw payload */
	if (n > BFBPF_HELLO_MAX)
		n = BFBPF_HELLO_MAX;
	/*
	 * verifier: a length in [1, BFBPF_HELLO_MAX] by its arithmetic alone
	 * (6.1 learns no lower bound from "n != 0"); the same n for 1..4096.
	 */
	asm volatile("" : "+r"(n));
	n = ((n - 1) & (BFBPF_HELLO_MAX - 1)) + 1;
	if (bpf_skb_load_bytes(skb, payload_off, scratch->hello.buf, n)) {
		verdict = -1;
		goto release;
	}
	scratch->hello.len = n;
	if (flow->bound == BFBPF_SNI_BOUND_HTTP)
		status = bfbpf_http_host_parse(&scratch->hello);
	else
		status = bfbpf_hello_parse(&scratch->hello);
	if (status == BFBPF_HELLO_MORE) {
		verdict = -1;
	} else if (status != BFBPF_HELLO_SNI) {
		/* No name, or bytes that cannot be judged: fail closed. */
		verdict = flow->bound == BFBPF_SNI_BOUND_HTTP ? BFBPF_REASON_HOST_NOT_ALLOWED
							      : BFBPF_REASON_NO_SNI;
	} else {
		verdict = sni_name_verdict(scratch, generation, dst);
		if (verdict && flow->bound == BFBPF_SNI_BOUND_HTTP)
			verdict = BFBPF_REASON_HOST_NOT_ALLOWED;
		flow->name_len = scratch->hello.name_len;
		bfbpf_name_copy(flow->name, scratch->hello.name);
	}
release:
	*(volatile __u32 *)&scratch->sequence = sequence + 2;
	return verdict;
}

/*
 * An allowed flow after a relock (a new generation): its name is judged again
 * against the new generation's maps; 0 or a reason, -1 (scratch busy: hold).
 */
static __always_inline int sni_rejudge(struct bfbpf_sni_flow *flow, __u32 generation,
				       const struct destination *dst)
{
	struct sni_scratch *scratch;
	__u32 zero = 0, sequence;
	int verdict;

	scratch = bpf_map_lookup_elem(&sni_scratch, &zero);
	if (!scratch)
		return -1;
	sequence = *(volatile __u32 *)&scratch->sequence;
	if ((sequence & 1) ||
	    __sync_val_compare_and_swap(&scratch->sequence, sequence, sequence + 1) != sequence)
		return -1;
	scratch->hello.name_len = flow->name_len;
	bfbpf_name_copy(scratch->hello.name, flow->name);
	verdict = sni_name_verdict(scratch, generation, dst);
	if (verdict && flow->bound == BFBPF_SNI_BOUND_HTTP)
		verdict = BFBPF_REASON_HOST_NOT_ALLOWED;
	*(volatile __u32 *)&scratch->sequence = sequence + 2;
	return verdict;
}

static __always_inline int sni_refuse(struct bfbpf_sni_flow *flow, struct bfbpf_stats *stats,
				      int reason)
{
	flow->state = BFBPF_SNI_REFUSED;
	flow->reason = (__u8)reason;
	if (reason > 0 && reason < BFBPF_REASON_COUNT)
		stats->sni_refused[reason]++;
	return SNI_REFUSE;
}

/* A TCP packet to a name-derived destination: its flow's state decides. */
static __always_inline int sni_judge_tcp(struct __sk_buff *skb, struct bfbpf_sni_flow *flow,
					 __u32 generation, const struct destination *dst,
					 struct bfbpf_stats *stats)
{
	__u32 l4, seq, payload;
	__u8 flags;
	int verdict;

	if (sni_tcp_header(skb, &l4, &seq, &flags, &payload))
		return sni_refuse(flow, stats, BFBPF_REASON_NO_SNI);
	if (flags & SNI_TCP_SYN) {
		flow->isn = seq;
		flow->seen_syn = 1;
		seq++; /* a SYN's data (TCP Fast Open) starts at offset 0 */
	}
	if (payload >= skb->len)
		return SNI_PASS; /* no data: a SYN, an ACK, a FIN carry nothing to judge */
	if (!flow->seen_syn)
		return sni_refuse(flow, stats, BFBPF_REASON_NO_SNI); /* opened before the rule */
	if (seq != flow->isn + 1) {
		/* Past offset 0 while undecided: held until offset 0 is judged. */
		if (!flow->since_ns)
			flow->since_ns = bpf_ktime_get_ns();
		return SNI_HOLD;
	}
	verdict = sni_first_bytes(skb, payload, flow, generation, dst);
	if (verdict < 0) {
		if (!flow->since_ns)
			flow->since_ns = bpf_ktime_get_ns();
		return SNI_HOLD;
	}
	if (verdict)
		return sni_refuse(flow, stats, verdict);
	flow->state = BFBPF_SNI_ALLOWED;
	stats->sni_allowed++;
	return SNI_PASS;
}

/*
 * A refused flow's RST (the daemon destroys it) and FIN carry no payload:
 * they go, so that the server closes its end too.
 */
static __always_inline int sni_carries_nothing(struct __sk_buff *skb)
{
	__u32 l4, seq, payload;
	__u8 flags;

	return !sni_tcp_header(skb, &l4, &seq, &flags, &payload) && payload >= skb->len;
}

/*
 * The judge of an egress packet the address policy allowed (restrictive
 * modes, BFBPF_SANDBOX_SNI): SNI_PASS for everything not to a name-derived
 * destination on a judged port. Sets *reason for an event; flow_out the
 * flow's state (for the event's name), if any.
 */
/* UDP to a name-derived address on a TLS port: QUIC, whose Initial's SNI is encrypted. */
static __always_inline int sni_judge_udp(const struct bfbpf_sandbox *sandbox,
					 const struct destination *dst, struct bfbpf_stats *stats,
					 int *reason)
{
	struct bfbpf_sni_bound_key key = {.generation = sandbox->generation, .port = dst->port};
	__u8 *bound;

	if (!dst->port)
		return SNI_PASS;
	__builtin_memcpy(key.addr, dst->addr, sizeof(key.addr));
	bound = bpf_map_lookup_elem(&sni_bound, &key);
	if (!bound || *bound != BFBPF_SNI_BOUND_TLS)
		return SNI_PASS;
	/* Clients fall back to TCP, where the ClientHello is judged. */
	stats->sni_refused[BFBPF_REASON_QUIC_REFUSED]++;
	*reason = BFBPF_REASON_QUIC_REFUSED;
	return SNI_REFUSE;
}

static __always_inline int sni_judge(struct __sk_buff *skb, const struct bfbpf_sandbox *sandbox,
				     const struct destination *dst, __u8 protocol,
				     struct bfbpf_stats *stats, int *reason,
				     struct bfbpf_sni_flow **flow_out)
{
	struct bfbpf_sni_bound_key key = {.generation = sandbox->generation, .port = dst->port};
	struct bfbpf_sni_flow *flow;
	struct bpf_sock *sk;
	__u8 *bound;
	int outcome;

	/*
	 * Verifier: UDP is judged apart, before any socket is looked at. With one
	 * body and two tests of the protocol, 6.1 (which loses a spilled 8-bit
	 * scalar's value) walked a path where the second test said TCP and the
	 * first had not, and refused the program for a socket never set.
	 */
	if (protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE)
		return sni_judge_udp(sandbox, dst, stats, reason);
	if (protocol != IPPROTO_TCP)
		return SNI_PASS;
	sk = skb->sk;
	sk = sk ? bpf_sk_fullsock(sk) : NULL;
	if (!sk)
		return SNI_PASS; /* timewait and request sockets carry no data */
	flow = bpf_sk_storage_get(&sni_flows, sk, 0, 0);
	if (flow && flow->generation == sandbox->generation &&
	    (flow->state == BFBPF_SNI_ALLOWED || flow->state == BFBPF_SNI_UNJUDGED))
		return SNI_PASS; /* the common case, one lookup a packet */
	if (flow && flow->state == BFBPF_SNI_REFUSED) {
		if (sni_carries_nothing(skb))
			return SNI_PASS;
		*flow_out = flow;
		return SNI_DROP;
	}
	if (!dst->port)
		return SNI_PASS;
	__builtin_memcpy(key.addr, dst->addr, sizeof(key.addr));
	bound = bpf_map_lookup_elem(&sni_bound, &key);
	if (!flow) {
		/* Made for unjudged flows too: their next packets skip the bound lookup. */
		flow = bpf_sk_storage_get(&sni_flows, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!flow) {
			/* No room for the state: a judged flow is refused, others pass. */
			*reason = BFBPF_REASON_NO_SNI;
			return bound ? SNI_REFUSE : SNI_PASS;
		}
	}
	*flow_out = flow;
	if (!bound) {
		flow->state = BFBPF_SNI_UNJUDGED;
		flow->generation = sandbox->generation;
		return SNI_PASS;
	}
	flow->bound = *bound;
	if (flow->state == BFBPF_SNI_ALLOWED) {
		/* A relock: the name it was allowed for, against the new generation. */
		outcome = sni_rejudge(flow, sandbox->generation, dst);
		if (outcome < 0)
			return SNI_HOLD;
		flow->generation = sandbox->generation;
		if (!outcome)
			return SNI_PASS;
		*reason = outcome;
		return sni_refuse(flow, stats, outcome);
	}
	if (flow->state == BFBPF_SNI_UNJUDGED && flow->generation != sandbox->generation) {
		/* Became name-derived under a relock, with bytes already sent: refused. */
		*reason = BFBPF_REASON_NO_SNI;
		return sni_refuse(flow, stats, BFBPF_REASON_NO_SNI);
	}
	flow->state = BFBPF_SNI_UNDECIDED;
	flow->generation = sandbox->generation;
	outcome = sni_judge_tcp(skb, flow, sandbox->generation, dst, stats);
	*reason = flow->reason;
	return outcome;
}

#endif /* BFBPF_LIB_SNI_H */
