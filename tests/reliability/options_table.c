/* options_table.c — prints the shim's options table (shim/core/ash_options.h) for
 * test_options_garbage.sh, one option per line, so that the test covers every option of the
 * table, a new one included, without a list of its own: NAME<TAB>TYPE<TAB>VALID<TAB>GARBAGE...
 * VALID: a value the table accepts (the default, else one derived from the type; "-" for STR
 * options without a default, whose valid value depends on what they name). GARBAGE: values the
 * table must refuse (for each, ash_opt_check is asked too: a value it accepted would be no test).
 * Exit 1 when a derived value is judged wrongly by the table itself.
 */
#include "ash_options.h"

#include <stdio.h>
#include <string.h>

/* the table's own rows, as ash_options.h declares them */
#define ROW(id, env, type, lo, hi, values, def, pkey, doc) {id, type, lo, hi, values, def},
static const struct {
    ash_opt_id_t id;
    ash_opt_type_t type;
    long lo, hi;
    const char *values, *def;
} rows[] = {ASH_OPTION_LIST(ROW)};
#undef ROW

static const char *type_name(ash_opt_type_t t)
{
    static const char *const n[] = {"str", "int", "bool", "enum", "list", "hostport"};
    return (unsigned)t < sizeof n / sizeof n[0] ? n[t] : "?";
}

int main(void)
{
    static char longv[ASH_OPT_VALUE_MAX + 100];
    memset(longv, 'x', sizeof longv - 1);
    int bad = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char valid[64], g[4][64], why[256];
        const char *garbage[5] = {longv, g[0], g[1], NULL, NULL};
        snprintf(valid, sizeof valid, "%s", rows[i].def ? rows[i].def : "-");
        snprintf(g[0], sizeof g[0], "%s", "1x");
        snprintf(g[1], sizeof g[1], "%s", "-1 ");
        switch (rows[i].type) {
        case ASH_OPT_T_STR:
            garbage[1] = garbage[2] = NULL; /* only too long: other text is a valid path */
            break;
        case ASH_OPT_T_INT:
            if (!rows[i].def)
                snprintf(valid, sizeof valid, "%ld", rows[i].lo);
            snprintf(g[2], sizeof g[2], "%ld", rows[i].hi + 1);
            snprintf(g[3], sizeof g[3], "%ld", rows[i].lo - 1);
            garbage[3] = g[2];
            garbage[4] = g[3];
            break;
        case ASH_OPT_T_BOOL:
            if (!rows[i].def)
                snprintf(valid, sizeof valid, "0");
            snprintf(g[0], sizeof g[0], "yes");
            snprintf(g[1], sizeof g[1], "2");
            break;
        case ASH_OPT_T_ENUM:
            if (!rows[i].def)
                snprintf(valid, sizeof valid, "%.*s", (int)strcspn(rows[i].values, "|"), rows[i].values);
            snprintf(g[0], sizeof g[0], "bogus");
            snprintf(g[1], sizeof g[1], "%.40s|", valid);
            break;
        case ASH_OPT_T_LIST:
            if (!rows[i].def)
                snprintf(valid, sizeof valid, "%ld", rows[i].lo);
            snprintf(g[0], sizeof g[0], "0,,1");
            snprintf(g[1], sizeof g[1], "%ld", rows[i].hi + 1);
            break;
        case ASH_OPT_T_HOSTPORT:
            snprintf(valid, sizeof valid, "127.0.0.1:29500");
            snprintf(g[0], sizeof g[0], "127.0.0.1");
            snprintf(g[1], sizeof g[1], "127.0.0.1:0");
            break;
        }
        if (strcmp(valid, "-") && ash_opt_check(rows[i].id, valid, why, sizeof why) != ASH_OK) {
            fprintf(stderr, "%s: derived valid value %s refused (%s)\n", ash_opt_name(rows[i].id),
                    valid, why);
            bad = 1;
        }
        printf("%s\t%s\t%s", ash_opt_name(rows[i].id), type_name(rows[i].type), valid);
        for (int k = 0; k < 5; k++) {
            if (!garbage[k])
                continue;
            if (ash_opt_check(rows[i].id, garbage[k], why, sizeof why) == ASH_OK) {
                fprintf(stderr, "%s: garbage %.40s accepted\n", ash_opt_name(rows[i].id), garbage[k]);
                bad = 1;
            }
            printf("\t%s", garbage[k]);
        }
        printf("\n");
    }
    return bad;
}
