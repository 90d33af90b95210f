/* accelshim_policy_main.c — build/bin/accelshim-policy: check a policy file before a run.
 *
 *   accelshim-policy check FILE            validate; print the normalised form on stdout
 *   accelshim-policy match FILE NAME [DEMANGLED]   list the rules that fire for a kernel name
 * Exit: 0 valid (match: at least one rule), 2 invalid policy ("FILE:LINE:COL: message" on
 * stderr) or unreadable file, 3 match found no rule, 1 usage error. Single-threaded.
 * Must not: touch CUDA; accept a policy the library would refuse (it uses the public API of
 * ash_policy.h and nothing else).
 */
#include "ash_policy.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_VALID = 0, EXIT_USAGE = 1, EXIT_INVALID = 2, EXIT_NO_MATCH = 3 };

static void usage(FILE *f)
{
    fputs("usage: accelshim-policy check FILE\n"
          "       accelshim-policy match FILE KERNEL_NAME [DEMANGLED_NAME]\n"
          "       accelshim-policy --help\n"
          "\n"
          "check  validate an accelshim policy (YAML, version 1) and print its normalised\n"
          "       form, with every default spelled out.\n"
          "match  print the rules whose 'at' glob matches a kernel name (mangled and/or\n"
          "       demangled), in the order the shim applies them; a mangled name alone is\n"
          "       demangled as the shim does it, and the glob tried on the mangled, the\n"
          "       demangled and the bare name.\n"
          "\n"
          "exit status: 0 valid (match: some rule matches), 1 usage error,\n"
          "             2 invalid or unreadable policy (FILE:LINE:COL: message on stderr),\n"
          "             3 match: no rule matches\n",
          f);
}

static ash_policy_t *load(const char *path)
{
    char err[1024];
    ash_policy_t *p = NULL;
    if (ash_policy_load(path, &p, err, sizeof err) != ASH_POLICY_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    return p;
}

static int cmd_check(const char *path)
{
    ash_policy_t *p = load(path);
    if (!p)
        return EXIT_INVALID;
    int rc = ash_policy_print(p, stdout) == 0 ? EXIT_VALID : EXIT_USAGE;
    if (rc != EXIT_VALID)
        fprintf(stderr, "accelshim-policy: cannot write to stdout\n");
    ash_policy_free(p);
    return rc;
}

static int cmd_match(const char *path, const char *mangled, const char *demangled)
{
    const ash_policy_rule_t *rules[64];
    ash_policy_t *p = load(path);
    if (!p)
        return EXIT_INVALID;
    char *own = demangled ? NULL : ash_policy_demangle(mangled, dlsym, NULL); /* as the shim does */
    if (own)
        demangled = own;
    size_t n = ash_policy_match(p, mangled, demangled, rules, 64);
    for (size_t i = 0; i < n && i < 64; i++) {
        const ash_policy_rule_t *r = rules[i];
        printf("%s[%u] at \"%s\" (%s:%u:%u)\n",
               r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters", r->index, r->at,
               path, r->line, r->col);
    }
    if (n == 0 && demangled)
        printf("no rule matches %s (demangled: %s)\n", mangled, demangled);
    else if (n == 0)
        printf("no rule matches\n");
    free(own);
    ash_policy_free(p);
    return n ? EXIT_VALID : EXIT_NO_MATCH;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return EXIT_VALID;
    }
    if (argc == 3 && !strcmp(argv[1], "check"))
        return cmd_check(argv[2]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "match"))
        return cmd_match(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    if (argc >= 2 && strcmp(argv[1], "check") && strcmp(argv[1], "match"))
        fprintf(stderr, "accelshim-policy: unknown command '%s'\n", argv[1]);
    else
        fprintf(stderr, "accelshim-policy: wrong number of arguments\n");
    usage(stderr);
    return EXIT_USAGE;
}
