/* options.c — the options table (see ash_options.h): defaults < policy file < environment.
 *
 * Invariant: secure_getenv is called here and nowhere else in accelshim (getenv never), once
 * per option, inside one pthread_once; set-uid/set-gid programs (AT_SECURE) get the defaults
 * only; values are copied into static buffers so a later setenv by the application cannot
 * change what the shim saw, and nothing is allocated (safe while preloading).
 * Threading: values are written only inside the once (and by ash_opt_set_policy during init).
 */
#include "ash_options.h"

#include "ash_log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ASH_OPT_VALUE_MAX 4096

typedef struct {
    const char *name;
    const char *def;
    int policy_may_set;
    const char *doc;
} ash_opt_decl_t;

#define ASH__OPT_DECL(id, env, def, pol, doc) [id] = {env, def, pol, doc},
static const ash_opt_decl_t ash_opt_decls[ASH_OPT_COUNT_] = {ASH_OPTION_LIST(ASH__OPT_DECL)};
#undef ASH__OPT_DECL

static char ash_opt_buf[ASH_OPT_COUNT_][ASH_OPT_VALUE_MAX];
static const char *ash_opt_val[ASH_OPT_COUNT_];
static ash_opt_source_t ash_opt_src[ASH_OPT_COUNT_];
static pthread_once_t ash_opt_once = PTHREAD_ONCE_INIT;
static unsigned char ash_opt_too_long[ASH_OPT_COUNT_];

static void ash_opt_read_env(void)
{
    for (int i = 0; i < ASH_OPT_COUNT_; i++) {
        ash_opt_val[i] = ash_opt_decls[i].def;
        ash_opt_src[i] = ASH_OPT_SRC_DEFAULT;
        const char *e = secure_getenv(ash_opt_decls[i].name); /* NULL when AT_SECURE */
        if (e == NULL || e[0] == '\0')
            continue; /* empty = not set */
        size_t n = strlen(e);
        if (n >= ASH_OPT_VALUE_MAX) {
            ash_opt_too_long[i] = 1; /* reported after the once: logging here could recurse */
            continue;
        }
        memcpy(ash_opt_buf[i], e, n + 1);
        ash_opt_val[i] = ash_opt_buf[i];
        ash_opt_src[i] = ASH_OPT_SRC_ENV;
    }
    /* the log level is the one option the logger needs; apply it before anything logs */
    ash_log_level_t lvl;
    if (ash_log_parse_level(ash_opt_val[ASH_OPT_LOG], &lvl) == ASH_OK)
        ash_log_set_level(lvl);
}

void ash_opt_init(void)
{
    static _Atomic int reported;
    pthread_once(&ash_opt_once, ash_opt_read_env);
    if (atomic_exchange(&reported, 1))
        return;
    ash_log_level_t lvl;
    if (ash_log_parse_level(ash_opt_val[ASH_OPT_LOG], &lvl) != ASH_OK)
        ash_warn("options", "ACCELSHIM_LOG=%s is not one of error|warn|info|debug; using warn",
                 ash_opt_val[ASH_OPT_LOG]);
    for (int i = 0; i < ASH_OPT_COUNT_; i++) {
        if (ash_opt_too_long[i])
            ash_warn("options", "%s is longer than %d bytes; ignored", ash_opt_decls[i].name,
                     ASH_OPT_VALUE_MAX - 1);
        else if (ash_opt_src[i] == ASH_OPT_SRC_ENV)
            ash_info("options", "%s=%s (%s)", ash_opt_decls[i].name, ash_opt_val[i], ash_opt_decls[i].doc);
    }
}

const char *ash_opt_str(ash_opt_id_t id)
{
    if ((unsigned)id >= ASH_OPT_COUNT_)
        return NULL;
    pthread_once(&ash_opt_once, ash_opt_read_env);
    return ash_opt_val[id];
}

ash_status_t ash_opt_parse_long(const char *text, long lo, long hi, long *out)
{
    if (text == NULL || out == NULL)
        return ASH_ERR_INVALID;
    if (*text == '\0' || !((*text >= '0' && *text <= '9') || *text == '-'))
        return ASH_ERR_CONFIG;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return ASH_ERR_CONFIG;
    *out = v;
    return ASH_OK;
}

ash_status_t ash_opt_int(ash_opt_id_t id, long lo, long hi, long *out)
{
    const char *s = ash_opt_str(id);
    if (s == NULL)
        return ASH_ERR_NOT_SET;
    int saved = errno;
    ash_status_t st = ash_opt_parse_long(s, lo, hi, out);
    errno = saved;
    return st;
}

ash_status_t ash_opt_set_policy(ash_opt_id_t id, const char *value)
{
    if ((unsigned)id >= ASH_OPT_COUNT_ || value == NULL)
        return ASH_ERR_INVALID;
    if (!ash_opt_decls[id].policy_may_set)
        return ASH_ERR_INVALID;
    pthread_once(&ash_opt_once, ash_opt_read_env);
    if (ash_opt_src[id] == ASH_OPT_SRC_ENV)
        return ASH_OK; /* the environment wins */
    size_t n = strlen(value);
    if (n >= ASH_OPT_VALUE_MAX)
        return ASH_ERR_CONFIG;
    memcpy(ash_opt_buf[id], value, n + 1);
    ash_opt_val[id] = ash_opt_buf[id];
    ash_opt_src[id] = ASH_OPT_SRC_POLICY;
    if (id == ASH_OPT_LOG) {
        ash_log_level_t lvl;
        if (ash_log_parse_level(value, &lvl) == ASH_OK)
            ash_log_set_level(lvl);
    }
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
