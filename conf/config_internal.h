/*
 * config_internal.h - the key table behind config.c, visible to the unit
 * tests (which check that every key is documented in docs/rnfsd.conf.5 and
 * present in conf/rnfsd.conf.example). Not for use by other layers.
 */
#ifndef RNFSD_CONFIG_INTERNAL_H
#define RNFSD_CONFIG_INTERNAL_H

#include "conf/config.h"

enum config_section {
	CONFIG_SECTION_RNFSD,
	CONFIG_SECTION_TCP,
	CONFIG_SECTION_RDMA,
	CONFIG_SECTION_NFSV4,
	CONFIG_SECTION_CEPH,
	CONFIG_SECTION_STATS,
	CONFIG_SECTION_PNFS,
	CONFIG_SECTION_TLS,
	CONFIG_SECTION_COUNT,
};

enum config_type {
	CONFIG_TYPE_UINT,     /* unsigned, decimal, range [min, max] */
	CONFIG_TYPE_SIZE,     /* size_t, decimal with optional k/K/m/M, range [min, max] */
	CONFIG_TYPE_BOOL,     /* yes/no, true/false, on/off, 1/0 */
	CONFIG_TYPE_TRISTATE, /* a bool or auto */
	CONFIG_TYPE_DELEG,    /* a bool or read (enum config_deleg) */
	CONFIG_TYPE_PATH,     /* absolute path, strlen < max */
	CONFIG_TYPE_LISTEN,   /* comma-separated ADDR[:PORT]; min is the default port */
	CONFIG_TYPE_NAME,     /* a word of letters, digits and . _ -, strlen < max */
	CONFIG_TYPE_DS,       /* comma-separated ADDR[:PORT][/tcp|/rdma] (struct config_ds) */
};

struct config_key {
	enum config_section section;
	const char *name;
	enum config_type type;
	size_t offset;       /* the field in struct rnfsd_config */
	size_t count_offset; /* CONFIG_TYPE_LISTEN, _DS: the unsigned count field */
	unsigned long long min, max;
};

extern const struct config_key config_keys[];
extern const unsigned config_nkeys;
extern const char *const config_section_names[CONFIG_SECTION_COUNT];

#endif
