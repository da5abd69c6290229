/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI shared by the BPF programs (bpf/bfbpf.bpf.c) and the control plane
 * (user/). Map keys and values are laid out with explicit widths and no
 * implicit padding so that both sides agree byte for byte.
 *
 * Every address is stored as 16 bytes: IPv4 as the IPv4-mapped IPv6 address
 * ::ffff:a.b.c.d, so that one set of maps serves both families and a mapped
 * or NAT64 destination is judged as the IPv4 address it carries.
 */
#ifndef BFBPF_H
#define BFBPF_H

#include <linux/types.h>

/* Bumped whenever a key, value or map definition below changes. */
#define BFBPF_ABI_VERSION 9

/* Verdicts of the cgroup hooks: the kernel reads 1 as "go on", 0 as EPERM/drop. */
#define BFBPF_VERDICT_DENY 0
#define BFBPF_VERDICT_ALLOW 1

/*
 * Sizes of the allow maps (allocated on use; a hash map's bucket array, 16
 * bytes a slot, is the fixed cost: 8 MiB for the exact map). The per-sandbox
 * maps are cgroup storage: sized by the cgroups attached, no limit here.
 */
#define BFBPF_MAX_EXACT_ENTRIES (1 << 19)
#define BFBPF_MAX_PREFIX_ENTRIES (1 << 18)

/* struct bfbpf_sandbox.flags */
#define BFBPF_SANDBOX_PUBLIC (1u << 0)	       /* network_mode public: allow everything */
#define BFBPF_SANDBOX_ALLOW_LOOPBACK (1u << 1) /* 127.0.0.0/8, ::1, 0.0.0.0 and :: */
#define BFBPF_SANDBOX_DNS_V6 (1u << 2)	       /* the responder also listens on [::1] */
#define BFBPF_SANDBOX_EVENTS (1u << 3)	       /* denials produce events */
#define BFBPF_SANDBOX_GUARD (1u << 4)	       /* a guard: defers to registered cgroups below */
#define BFBPF_SANDBOX_SNI (1u << 5)	       /* names bound to TLS: the sni_* maps judge */

/*
 * A guard judges a socket by the nearest registered cgroup on the path from
 * the socket's cgroup up to the guard: the deepest level it looks at. A
 * registration deeper than this does not count (the guard's default holds).
 */
#define BFBPF_GUARD_MAX_LEVEL 16
/* Cgroups registered at once (every attached sandbox and guard is). */
#define BFBPF_MAX_REGISTERED 65536

/* Every query to this port, to any address, goes to the sandbox's responder. */
#define BFBPF_DNS_PORT 53

/* Port value of an entry that allows every port. */
#define BFBPF_PORT_ANY 0

/*
 * One per attached sandbox: the cgroup storage of the attached cgroup, keyed
 * by its cgroup id (inode of the cgroup2 directory). The kernel makes it
 * zeroed when the programs are attached; rewriting it is the atomic flip of
 * an update: the programs read generation and flags from one value.
 */
struct bfbpf_sandbox {
	__u32 generation;  /* which allow entries apply; unique; 0: not written yet, deny all */
	__u32 flags;	   /* BFBPF_SANDBOX_* */
	__u64 digest;	   /* digest of the canonical policy, for verify */
	__u64 cgroup_id;   /* the attached cgroup, as events name it */
	__u16 dns_port;	   /* host order; the responder on 127.0.0.1 (and ::1); 0: none */
	__u16 guard_level; /* BFBPF_SANDBOX_GUARD: the level of the guard's own cgroup (root 0) */
	__u32 reserved32;
};

/*
 * Per socket (socket-local storage), written by a guard's cgroup/sock_create:
 * the ids of the socket's cgroup and its ancestors, by level, as they were
 * when it was made (the creating task's cgroup is the socket's then). The
 * address hooks cannot read a socket's cgroup otherwise; the current task's
 * may be another (a process moved after making the socket). ancestors[0] is
 * the root's id (never 0: the record exists); 0 past the socket's own level.
 */
struct bfbpf_guard_origin {
	__u64 ancestors[BFBPF_GUARD_MAX_LEVEL + 1];
};

/*
 * Per socket (socket-local storage): where a redirected DNS socket meant to
 * go, so that replies and getpeername() show that address, not the responder.
 */
struct bfbpf_dns_origin {
	__u32 addr[4];	      /* network order; IPv4 as ::ffff:a.b.c.d */
	__u16 port;	      /* network order (53) */
	__u16 responder_port; /* host order */
	__u32 family;	      /* AF_INET or AF_INET6: the family of the socket's own addresses */
};

/* Key of the exact-address hash map. port is in host byte order. */
struct bfbpf_exact_key {
	__u32 generation;
	__u32 port;
	__u8 addr[16];
};

/*
 * Key of the prefix LPM trie. prefixlen counts the bits of generation and port
 * (always fully matched, 64 bits) plus the address prefix.
 */
struct bfbpf_prefix_key {
	__u32 prefixlen;
	__u32 generation;
	__u32 port; /* host byte order; always matched in full, so order is moot */
	__u8 addr[16];
};

#define BFBPF_PREFIX_FIXED_BITS 64

/* Value of both allow maps; its presence is the allowance. */
struct bfbpf_allow_value {
	__u8 present;
};

/*
 * Names bound to TLS (issue 20, docs/policy.md "Names bound to TLS"). An
 * address is name-derived on a port when the policy allows it there only
 * because a name entry resolved to it (no literal or CIDR entry covers it).
 * The flag saying so lives in its own map, sni_bound, keyed like the exact
 * allow map: (generation, port, address) -> the protocol judged on that port.
 * A TCP flow to such a destination is judged by its first bytes (egress).
 */
#define BFBPF_SNI_BOUND_TLS 1  /* a tls_ports port: the ClientHello's server_name */
#define BFBPF_SNI_BOUND_HTTP 2 /* an http_ports port: the request's Host header */

struct bfbpf_sni_bound_key {
	__u32 generation;
	__u32 port; /* host order */
	__u8 addr[16];
};

/*
 * The names an SNI (or Host) may carry to a name-derived address: keyed by the
 * reversed FNV-1a of the entry's name (bfbpf_name_rhash, bpf/lib/hello.h) and
 * the address it resolved to, on a judged port. One more key per name, with
 * port 0 and a zero address, says that an entry names it at all (so that a
 * refusal tells sni_address_mismatch from sni_not_allowed). The hash only
 * finds the entry: FNV is no defence against a chosen name, so the value holds
 * the name itself and the kernel admits a flow only when the name it read (or
 * the suffix of it whose hash it looked up) equals it byte for byte.
 */
struct bfbpf_sni_name_key {
	__u32 generation;
	__u32 port; /* host order; 0 with a zero address: the entry's marker */
	__u64 name_rhash;
	__u8 addr[16];
};

/* struct bfbpf_sni_name_value.kinds */
#define BFBPF_SNI_NAME_SELF (1u << 0) /* the name itself (a bare entry, a lane name, learned) */
#define BFBPF_SNI_NAME_SUBDOMAINS (1u << 1) /* its strict subdomains (bare entry, wildcard) */

struct bfbpf_sni_name_value {
	__u8 kinds; /* BFBPF_SNI_NAME_* */
	__u8 reserved[3];
	__u32 name_len; /* bytes of name, 1..253 */
	/*
	 * The name whose hash is the key, as the kernel reads names: lower case, no
	 * trailing dot (a wildcard's: the suffix, "wild.test" of "*.wild.test"),
	 * NUL-filled to the end (the kernel copies it as 32 words).
	 */
	char name[256] __attribute__((aligned(8)));
};

/*
 * Suffixes of an SNI looked up, shortest first ("test", "allowed.test", ...):
 * an entry of more labels than this never matches as a parent domain (fail
 * closed: refused, never allowed by it). The whole name is always looked up.
 */
#define BFBPF_SNI_MAX_LABELS 16

/* Per TCP socket (socket-local storage): the judge's state of a judged flow. */
enum bfbpf_sni_state {
	BFBPF_SNI_UNDECIDED, /* first bytes not complete yet: held back (dropped, resent) */
	BFBPF_SNI_ALLOWED,
	BFBPF_SNI_REFUSED,
	BFBPF_SNI_UNJUDGED, /* not name-derived under generation: no judge */
};

struct bfbpf_sni_flow {
	__u32 state;	  /* enum bfbpf_sni_state */
	__u32 generation; /* the sandbox's, when judged (a relock judges again) */
	__u32 isn;	  /* the SYN's sequence number; stream offset 0 is isn + 1 */
	__u8 seen_syn;	  /* isn is known */
	__u8 reason;	  /* REFUSED: enum bfbpf_reason */
	__u8 bound;	  /* BFBPF_SNI_BOUND_* */
	__u8 reserved;
	__u64 since_ns; /* first held-back segment (the daemon's sweep) */
	__u32 name_len; /* ALLOWED: the name it was allowed for */
	__u32 reserved2;
	char name[256] __attribute__((aligned(8)));
};

/* Why a flow was refused (struct bfbpf_event.reason); 0: a plain address denial. */
enum bfbpf_reason {
	BFBPF_REASON_NONE,
	BFBPF_REASON_SNI_NOT_ALLOWED, /* no entry names the SNI */
	BFBPF_REASON_NO_SNI,	      /* no server_name, or a ClientHello that cannot be judged */
	BFBPF_REASON_SNI_ADDRESS_MISMATCH, /* an entry names it, but never resolved here */
	BFBPF_REASON_HOST_NOT_ALLOWED,	   /* HTTP: Host missing, not allowed, or unparseable */
	BFBPF_REASON_QUIC_REFUSED,	   /* UDP to a name-derived address on a TLS port */
	BFBPF_REASON_COUNT,
};

/* The hooks, as counted and reported in events. */
enum bfbpf_hook {
	BFBPF_HOOK_CONNECT4,
	BFBPF_HOOK_CONNECT6,
	BFBPF_HOOK_SENDMSG4,
	BFBPF_HOOK_SENDMSG6,
	BFBPF_HOOK_SOCK_CREATE,
	BFBPF_HOOK_EGRESS,
	BFBPF_HOOK_SOCKET_LSM,
	BFBPF_HOOK_SETSOCKOPT, /* the options it judges: multicast joins, source routes */
	BFBPF_HOOK_COUNT,
};

/* Events allowed per sandbox per CPU per second (and the burst), beyond which they are counted
 * only. */
#define BFBPF_EVENTS_PER_SECOND 100

/*
 * This CPU's memo of the last destination the allow maps allowed a sandbox,
 * and under which generation: the next packets of a flow skip the lookups
 * (up to four, two of them in the LPM trie). It is true for as long as that
 * generation is the sandbox's, because the entries of a generation never
 * change once written (an update writes a new generation). Another run on
 * the same CPU may preempt or interrupt a run between its reads and writes:
 * a writer claims the memo by making sequence odd (compare-and-swap), and a
 * reader trusts it only when sequence is even and unchanged across its reads.
 */
struct bfbpf_verdict_memo {
	__u32 sequence;
	__u32 generation; /* 0: empty (no policy has generation 0) */
	__u32 addr[4];	  /* as struct destination: network order, IPv4 mapped */
	__u32 port;	  /* host order */
	__u32 reserved;
};

/*
 * Per sandbox, per CPU, in cgroup storage (keyed by the attached cgroup id):
 * made by the kernel when the programs are attached, gone when they are
 * detached; the daemon only reads it.
 */
struct bfbpf_stats {
	__u64 allowed[BFBPF_HOOK_COUNT];
	__u64 denied[BFBPF_HOOK_COUNT];
	__u64 events_sent;
	__u64 events_limited;		       /* over the rate: counted, not sent */
	__u64 events_lost;		       /* the ring buffer was full */
	__u64 sni_refused[BFBPF_REASON_COUNT]; /* flows refused, by reason ([0] unused) */
	__u64 sni_allowed;		       /* judged flows allowed */
	__u64 tokens;			       /* the rate limiter's bucket (this CPU's share) */
	__u64 tokens_at_ns;
	struct bfbpf_verdict_memo memo; /* the programs' own, not a counter */
};

/* One denial, through the ring buffer. */
struct bfbpf_event {
	__u64 time_ns;	 /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 cgroup_id; /* the attached cgroup (the sandbox) */
	__u32 pid;	 /* thread; 0 for packets (egress runs outside the sender's context) */
	__u32 tgid;
	char comm[16];
	__u8 addr[16]; /* destination, IPv4 as ::ffff:a.b.c.d; zero for socket creation;
			  setsockopt: the multicast group (or source), zero for a source route */
	__u16 port;    /* host order */
	__u8 hook;     /* enum bfbpf_hook */
	__u8 protocol; /* IPPROTO_* of the socket or packet */
	__u32 family;  /* socket creation: the family asked for; setsockopt: the level */
	__u32 type;    /* socket creation: the type asked for; setsockopt: the option name */
	__u32 flags;   /* BFBPF_EVENT_* */
	__u8 reason;   /* enum bfbpf_reason; 0: an address (or socket) denial */
	__u8 reserved8;
	__u16 sport;	/* judged flows: the socket's source port (host order) */
	__u32 name_len; /* reason set: bytes of name (0: none) */
	__u8 saddr[16]; /* judged flows: the socket's source address */
	char name[256]; /* reason set: the SNI or Host judged; 352 bytes in all, no padding */
};

/*
 * struct bfbpf_event.flags: refused by a guard (cgroup_id is the guard's)
 * because the socket's cgroup, or the process's at socket creation, has no
 * registration between it and the guard.
 */
#define BFBPF_EVENT_UNREGISTERED (1u << 0)

#endif /* BFBPF_H */
