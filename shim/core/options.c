/* options.c — the options table (see ash_options.h): typed, validated once, defaults < policy
 * file < environment.
 *
 * Invariant: secure_getenv is called here and nowhere else in accelshim (getenv never), once
 * per option, inside one pthread_once; set-uid/set-gid programs (AT_SECURE) get the defaults
 * only; values are copied into static buffers so a later setenv by the application cannot
 * change what the shim saw, and nothing is allocated (safe while preloading). The once only
 * records what is invalid; ash_opt_init reports it (outside the once: the fatal exit may run
 * code that reads options). Threading: values are written only inside the once (and by
 * ash_opt_set_policy during init).
 * Must not: read the environment other than by secure_getenv (here and nowhere else in accelshim); read the
 * environment more than once per option; allocate; fall back silently from a value the user set (it
 * is reported, exit 2).
 */
#include "ash_options.h"

#include "ash_fatal.h"
#include "ash_log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *name;
    ash_opt_type_t type;
    long lo, hi;
    const char *values; /* ENUM: "a|b|c" */
    const char *def;
    const char *policy_key;
    const char *doc;
} ash_opt_decl_t;

#define ASH__OPT_DECL(id, env, type, lo, hi, values, def, pkey, doc) \
    [id] = {env, type, lo, hi, values, def, pkey, doc},
static const ash_opt_decl_t ash_opt_decls[ASH_OPT_COUNT_] = {ASH_OPTION_LIST(ASH__OPT_DECL)};
#undef ASH__OPT_DECL

static char ash_opt_buf[ASH_OPT_COUNT_][ASH_OPT_VALUE_MAX];
static const char *ash_opt_val[ASH_OPT_COUNT_];
static ash_opt_source_t ash_opt_src[ASH_OPT_COUNT_];
static pthread_once_t ash_opt_once = PTHREAD_ONCE_INIT;
static int ash_opt_bad = -1;        /* the first invalid variable (table order), -1: none */
static char ash_opt_bad_value[256]; /* its value, cut for the message */
static char ash_opt_bad_why[256];   /* what is allowed */

ash_status_t ash_opt_parse_long(const char *text, long lo, long hi, long *out)
{
    if (text == NULL || out == NULL)
        return ASH_ERR_INVALID;
    if (*text == '\0' || !((*text >= '0' && *text <= '9') || *text == '-'))
        return ASH_ERR_CONFIG;
    char *end = NULL;
    int saved = errno;
    errno = 0;
    long v = strtol(text, &end, 10);
    int bad = errno != 0 || end == text || *end != '\0' || v < lo || v > hi;
    errno = saved;
    if (bad)
        return ASH_ERR_CONFIG;
    *out = v;
    return ASH_OK;
}

/* The index of text in "a|b|c" (case-insensitive), or -1. */
static int ash_opt_enum_index(const char *values, const char *text)
{
    size_t tl = strlen(text);
    int i = 0;
    for (const char *p = values; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == tl && strncasecmp(p, text, n) == 0)
            return i;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

/* "a, b or c" from "a|b|c" */
static void ash_opt_enum_words(const char *values, char *out, size_t cap)
{
    size_t o = 0;
    const char *last = strrchr(values, '|');
    for (const char *p = values; *p && o + 8 < cap; p++) {
        if (*p != '|') {
            out[o++] = *p;
            continue;
        }
        const char *sep = p == last ? " or " : ", ";
        size_t n = strlen(sep);
        memcpy(out + o, sep, n);
        o += n;
    }
    out[o] = '\0';
}

/* Items of a comma list of integers in [lo, hi]: count, or -1 when malformed / too many. */
static int ash_opt_parse_list(const char *text, long lo, long hi, long *out, int cap)
{
    int n = 0;
    for (const char *p = text;;) {
        char item[24];
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        long v;
        if (len == 0 || len >= sizeof item || n == cap)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        if (ash_opt_parse_long(item, lo, hi, &v) != ASH_OK)
            return -1;
        out[n++] = v;
        if (comma == NULL)
            return n;
        p = comma + 1;
    }
}

ash_status_t ash_opt_check(ash_opt_id_t id, const char *text, char *why, size_t cap)
{
    if ((unsigned)id >= ASH_OPT_COUNT_ || text == NULL)
        return ASH_ERR_INVALID;
    const ash_opt_decl_t *d = &ash_opt_decls[id];
    long v, items[ASH_OPT_LIST_MAX];
    char words[256];
    if (strlen(text) >= ASH_OPT_VALUE_MAX) {
        snprintf(why, cap, "at most %d bytes", ASH_OPT_VALUE_MAX - 1);
        return ASH_ERR_CONFIG;
    }
    switch (d->type) {
    case ASH_OPT_T_STR:
        return ASH_OK;
    case ASH_OPT_T_INT:
        if (ash_opt_parse_long(text, d->lo, d->hi, &v) == ASH_OK)
            return ASH_OK;
        snprintf(why, cap, "an integer in %ld..%ld", d->lo, d->hi);
        return ASH_ERR_CONFIG;
    case ASH_OPT_T_BOOL:
        if (!strcmp(text, "0") || !strcmp(text, "1"))
            return ASH_OK;
        snprintf(why, cap, "0 or 1");
        return ASH_ERR_CONFIG;
    case ASH_OPT_T_ENUM:
        if (ash_opt_enum_index(d->values, text) >= 0)
            return ASH_OK;
        ash_opt_enum_words(d->values, words, sizeof words);
        snprintf(why, cap, "%s", words);
        return ASH_ERR_CONFIG;
    case ASH_OPT_T_LIST:
        if (ash_opt_parse_list(text, d->lo, d->hi, items, ASH_OPT_LIST_MAX) > 0)
            return ASH_OK;
        snprintf(why, cap, "a comma list of at most %d integers in %ld..%ld", ASH_OPT_LIST_MAX,
                 d->lo, d->hi);
        return ASH_ERR_CONFIG;
    case ASH_OPT_T_HOSTPORT: {
        const char *colon = strrchr(text, ':');
        if (colon && colon != text && ash_opt_parse_long(colon + 1, 1, 65535, &v) == ASH_OK)
            return ASH_OK;
        snprintf(why, cap, "HOST:PORT with PORT in 1..65535");
        return ASH_ERR_CONFIG;
    }
    }
    return ASH_ERR_INVALID;
}

/* Store a checked value; enums take the table's spelling. */
static void ash_opt_store(int i, const char *text, ash_opt_source_t src)
{
    const ash_opt_decl_t *d = &ash_opt_decls[i];
    size_t n = strlen(text);
    memcpy(ash_opt_buf[i], text, n + 1);
    if (d->type == ASH_OPT_T_ENUM) {
        int k = ash_opt_enum_index(d->values, text);
        const char *p = d->values;
        for (; k > 0; k--)
            p = strchr(p, '|') + 1;
        const char *bar = strchr(p, '|');
        n = bar ? (size_t)(bar - p) : strlen(p);
        memcpy(ash_opt_buf[i], p, n);
        ash_opt_buf[i][n] = '\0';
    }
    ash_opt_val[i] = ash_opt_buf[i];
    ash_opt_src[i] = src;
}

static void ash_opt_read_env(void)
{
    char why[256];
    for (int i = 0; i < ASH_OPT_COUNT_; i++) {
        ash_opt_val[i] = ash_opt_decls[i].def;
        ash_opt_src[i] = ASH_OPT_SRC_DEFAULT;
        const char *e = secure_getenv(ash_opt_decls[i].name); /* NULL when AT_SECURE */
        if (e == NULL)
            continue;
        ash_opt_type_t t = ash_opt_decls[i].type;
        if (e[0] == '\0' && (strncmp(ash_opt_decls[i].name, "ACCELSHIM_", 10) != 0 ||
                              (t != ASH_OPT_T_INT && t != ASH_OPT_T_BOOL && t != ASH_OPT_T_LIST)))
            continue; /* an empty text or choice, or another tool's variable: not set */
        if (e[0] == '\0') { /* a number or switch of ours set to nothing (VAR=$UNSET): refused */
            (void)ash_opt_check((ash_opt_id_t)i, "?", why, sizeof why);
            size_t w = strlen(why);
            snprintf(why + w, sizeof why - w, " (set but empty: unset it for the default)");
        }
        if (e[0] == '\0' || ash_opt_check((ash_opt_id_t)i, e, why, sizeof why) != ASH_OK) {
            if (ash_opt_bad < 0) { /* reported by ash_opt_init: logging here could recurse */
                ash_opt_bad = i;
                memcpy(ash_opt_bad_why, why, sizeof why);
                snprintf(ash_opt_bad_value, sizeof ash_opt_bad_value, "%.200s%s", e,
                         strlen(e) > 200 ? "..." : "");
            }
            continue; /* reads as unset until then */
        }
        ash_opt_store(i, e, ASH_OPT_SRC_ENV);
    }
    /* the log level is the one option the logger needs; apply it before anything logs */
    ash_log_set_level((ash_log_level_t)ash_opt_enum_index(ash_opt_decls[ASH_OPT_LOG].values,
                                                          ash_opt_val[ASH_OPT_LOG]));
}

void ash_opt_init(void)
{
    static _Atomic int reported;
    pthread_once(&ash_opt_once, ash_opt_read_env);
    if (atomic_exchange(&reported, 1))
        return;
    if (ash_opt_bad >= 0)
        ash_fatal(ASH_EXIT_CONFIG, "%s=%s: expected %s", ash_opt_decls[ash_opt_bad].name,
                  ash_opt_bad_value, ash_opt_bad_why);
    for (int i = 0; i < ASH_OPT_COUNT_; i++)
        if (ash_opt_src[i] == ASH_OPT_SRC_ENV)
            ash_info("options", "%s=%s (%s)", ash_opt_decls[i].name, ash_opt_val[i], ash_opt_decls[i].doc);
}

const char *ash_opt_str(ash_opt_id_t id)
{
    if ((unsigned)id >= ASH_OPT_COUNT_)
        return NULL;
    pthread_once(&ash_opt_once, ash_opt_read_env);
    return ash_opt_val[id];
}

ash_status_t ash_opt_int(ash_opt_id_t id, long *out)
{
    const char *s = ash_opt_str(id);
    if (s == NULL || out == NULL)
        return ASH_ERR_NOT_SET;
    const ash_opt_decl_t *d = &ash_opt_decls[id];
    return ash_opt_parse_long(s, d->lo, d->hi, out) == ASH_OK ? ASH_OK : ASH_ERR_NOT_SET;
}

int ash_opt_enum(ash_opt_id_t id)
{
    const char *s = ash_opt_str(id);
    return s == NULL || ash_opt_decls[id].type != ASH_OPT_T_ENUM
               ? -1 : ash_opt_enum_index(ash_opt_decls[id].values, s);
}

int ash_opt_list(ash_opt_id_t id, long *out, int cap)
{
    const char *s = ash_opt_str(id);
    if (s == NULL || ash_opt_decls[id].type != ASH_OPT_T_LIST)
        return 0;
    int n = ash_opt_parse_list(s, ash_opt_decls[id].lo, ash_opt_decls[id].hi, out, cap);
    return n < 0 ? 0 : n;
}

ash_status_t ash_opt_set_policy(ash_opt_id_t id, const char *value)
{
    char why[256];
    if ((unsigned)id >= ASH_OPT_COUNT_ || value == NULL || ash_opt_decls[id].policy_key == NULL)
        return ASH_ERR_INVALID;
    pthread_once(&ash_opt_once, ash_opt_read_env);
    if (ash_opt_src[id] == ASH_OPT_SRC_ENV)
        return ASH_OK; /* the environment wins */
    if (ash_opt_check(id, value, why, sizeof why) != ASH_OK)
        return ASH_ERR_CONFIG;
    ash_opt_store(id, value, ASH_OPT_SRC_POLICY);
    return ASH_OK;
}

const char *ash_opt_name(ash_opt_id_t id) { return (unsigned)id < ASH_OPT_COUNT_ ? ash_opt_decls[id].name : "?"; }
const char *ash_opt_doc(ash_opt_id_t id) { return (unsigned)id < ASH_OPT_COUNT_ ? ash_opt_decls[id].doc : "?"; }
ash_opt_source_t ash_opt_source(ash_opt_id_t id)
{
    if ((unsigned)id >= ASH_OPT_COUNT_)
        return ASH_OPT_SRC_DEFAULT;
    pthread_once(&ash_opt_once, ash_opt_read_env);
    return ash_opt_src[id];
}
