/* fuzz_policy.c — libFuzzer target for ash_policy_parse (hostile policy files).
 *
 * Property: for ANY input bytes, ash_policy_parse returns either a policy or one NUL-terminated
 * error line, without memory errors (ASan), undefined behaviour (UBSan) or leaks; an accepted
 * policy survives its accessors and matchers, and print -> parse gives an equal policy (the
 * round trip the CLI relies on). Build: clang -fsanitize=fuzzer,address,undefined (make fuzz).
 * Seeds: the YAML files of examples/ and tests/policy/bad/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ash_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ash_policy_t *p = NULL, *q = NULL;
    char err[512];

    memset(err, 'x', sizeof err);
    if (ash_policy_parse((const char *)data, size, "fuzz.yaml", &p, err, sizeof err) !=
        ASH_POLICY_OK) {
        if (p || !memchr(err, 0, sizeof err))
            abort(); /* failure must leave no policy and a terminated message */
        return 0;
    }
    if (!p)
        abort();
    const ash_policy_rule_t *found[8];
    (void)ash_policy_match(p, "_Z10sgd_updatePfS_ifS_", "sgd_update(float*, float*, int)", found, 8);
    (void)ash_policy_match(p, "adamw_kernel2", NULL, found, 8);
    (void)ash_policy_output_main_only(p, "./out/model_00001.bin");
    (void)ash_policy_output_main_only(p, "main.log");
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < ash_policy_rule_count(p, (ash_policy_rule_kind_t)k); i++)
            if (!ash_policy_rule(p, (ash_policy_rule_kind_t)k, i))
                abort();
    for (size_t i = 0; i < ash_policy_output_count(p); i++)
        if (!ash_policy_output(p, i))
            abort();
    (void)ash_policy_check_collectives(p);
    (void)ash_policy_timeout_s(p);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        int rc = ash_policy_print(p, f);
        fclose(f);
        if (rc == 0) {
            if (ash_policy_parse(text, len, "printed.yaml", &q, err, sizeof err) != ASH_POLICY_OK) {
                fprintf(stderr, "round trip: printed policy does not parse: %s\n%s\n", err, text);
                abort();
            }
            if (!ash_policy_equal(p, q)) {
                fprintf(stderr, "round trip: printed policy differs:\n%s\n", text);
                abort();
            }
        }
        free(text);
    }
    ash_policy_free(q);
    ash_policy_free(p);
    return 0;
}
