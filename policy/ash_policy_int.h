/* ash_policy_int.h — PRIVATE to policy/: the YAML node tree, the diagnostic buffer, the glob
 * checker and the policy struct behind the opaque ash_policy_t.
 *
 * ash_policy_yaml.c turns libyaml events into a small tree (rejecting anchors, aliases, tags,
 * a second document); ash_policy.c validates that tree into struct ash_policy;
 * ash_policy_match.c prints, compares and matches. No state is shared between calls.
 */
#ifndef ASH_POLICY_INT_H
#define ASH_POLICY_INT_H

#include "ash_policy.h"

#include <yaml.h>

#define ASH_POLICY__MAX_DEPTH 32 /* deeper nesting is an error (no valid policy needs > 4) */

typedef enum { ASH_POLICY__SCALAR, ASH_POLICY__SEQ, ASH_POLICY__MAP } ash_policy__node_type_t;

typedef struct ash_policy__node {
    ash_policy__node_type_t type;
    unsigned line, col;               /* 1-based start of the node */
    char *str;                        /* SCALAR: value, NUL-terminated (may hold inner NULs) */
    size_t len;                       /* SCALAR: bytes in str */
    bool plain;                       /* SCALAR: unquoted (plain style) */
    struct ash_policy__node **items;  /* SEQ: elements; MAP: key, value, key, value ... */
    size_t n, cap;
} ash_policy__node_t;

/* The first error of one parse; later ash_policy__fail calls are ignored. */
typedef struct {
    const char *name;
    char *buf;
    size_t cap;
    bool failed;
    ash_policy_result_t result;
} ash_policy__diag_t;

struct ash_policy {
    char *source;
    ash_policy_rule_t *rules[2]; /* [ASH_POLICY_RULE_GRADIENT], [ASH_POLICY_RULE_PARAMETER] */
    size_t nrules[2];
    char **outputs;
    size_t noutputs;
    bool check_collectives;
    unsigned timeout_s;
    char *trace;                 /* debug.trace, or NULL */
    bool nan_check;
    bool sync_optional;          /* sync: optional */
    ash_policy_matmul_t matmul;
    char **matmul_exclude;
    size_t nmatmul_exclude;
};

/* Record "NAME:LINE:COL: message" (LINE == 0: "NAME: message") as the error, if none yet.
 * Returns ASH_POLICY_EPOLICY so callers can `return ash_policy__fail(...)`. */
ash_policy_result_t ash_policy__fail(ash_policy__diag_t *d, unsigned line, unsigned col,
                                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
ash_policy_result_t ash_policy__oom(ash_policy__diag_t *d);

/* Parse TEXT into a tree; *ROOT is NULL for a stream without a document. */
ash_policy_result_t ash_policy__yaml_tree(const char *text, size_t len, ash_policy__diag_t *d,
                                          ash_policy__node_t **root);
void ash_policy__node_free(ash_policy__node_t *n);

/* Check a glob: NULL if fnmatch(3) will read it as intended, else a reason, with *AT the byte
 * offset of the offending character. */
const char *ash_policy__glob_problem(const char *glob, size_t *at);

#endif /* ASH_POLICY_INT_H */
