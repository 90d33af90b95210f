/* test_policy.c — cmocka unit tests for policy/ (build/tests/policy/test_policy).
 *
 * Properties proved: valid version-1 policies parse into exactly the expected struct (every
 * buffer form, every default, wire normalisation); kernel globs match the mangled, demangled
 * and demangled-base names, parameters before gradients; output globs match as documented;
 * print -> parse gives an equal policy and print is idempotent; the API reports errors as
 * "NAME:LINE:COL: message" and never overruns ERR; every prefix and thousands of random
 * mutations of valid policies parse or fail cleanly (no crash; run under valgrind for leaks).
 * Examples are read from the repository root, found from /proc/self/exe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ash_policy.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char design_yaml[] =
    "version: 1\n"
    "gradients:                      # averaged across ranks at their sync point\n"
    "  - at: \"global_norm_squared_kernel*\"   # before each launch\n"
    "    buffer: { arg: 1, count_arg: 2 }     # pointer = argument 1, count = argument 2\n"
    "    dtype: bf16\n"
    "    reduce: mean\n"
    "    wire: bf16\n"
    "parameters:\n"
    "  - at: \"matmul_a_b_kernel*\"\n"
    "    buffer: { arg: 1, region: allocation }\n"
    "    dtype: f32\n"
    "    broadcast: once\n"
    "outputs:\n"
    "  main_process_only: [\"*.ckpt\", \"out/*\"]\n"
    "debug:\n"
    "  check_collectives: false\n"
    "  timeout_s: 600\n";

static const char forms_yaml[] =
    "version: 1\n"
    "gradients:\n"
    "  - at: adamw_kernel2\n"
    "    buffer:\n"
    "      arg: 1\n"
    "      count_arg: 4\n"
    "    dtype: f32\n"
    "  - at: '*fixed*'\n"
    "    buffer: { arg: 0, count: 9223372036854775807 }\n"
    "    dtype: f16\n"
    "    reduce: sum\n"
    "  - at: \"[a-c]?_k\\\\*\"\n"
    "    buffer: { region: allocation, arg: 31 }\n"
    "    dtype: f32\n"
    "    wire: f16\n"
    "parameters:\n"
    "  - { at: \"fwd*\", buffer: { arg: 2, count_arg: 3 }, dtype: bf16 }\n"
    "outputs: { main_process_only: [\"*.ckpt\", \"out/*\", \"log/[0-9]*.txt\"] }\n"
    "debug: { check_collectives: true, timeout_s: 0, nan_check: true }\n";

static ash_policy_t *parse_ok(const char *text)
{
    char err[512];
    ash_policy_t *p = NULL;
    ash_policy_result_t r = ash_policy_parse(text, strlen(text), "t.yaml", &p, err, sizeof err);
    if (r != ASH_POLICY_OK)
        fail_msg("expected a valid policy, got %s: %s\n--- text ---\n%s", ash_policy_result_name(r),
                 err, text);
    return p;
}

/* "NAME:LINE:COL: ..." -> line, col; fails the test if the shape is wrong. */
static void parse_err(const char *err, const char *name, unsigned *line, unsigned *col)
{
    size_t n = strlen(name);
    char *end;
    if (strncmp(err, name, n) || err[n] != ':')
        fail_msg("error does not start with '%s:': %s", name, err);
    *line = (unsigned)strtoul(err + n + 1, &end, 10);
    if (*end != ':')
        fail_msg("no ':' after the line in: %s", err);
    *col = (unsigned)strtoul(end + 1, &end, 10);
    if (strncmp(end, ": ", 2) || *line == 0 || *col == 0 || !end[2])
        fail_msg("malformed position or empty message in: %s", err);
}

static void test_design_example(void **state)
{
    (void)state;
    ash_policy_t *p = parse_ok(design_yaml);
    assert_int_equal(ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT), 1);
    assert_int_equal(ash_policy_rule_count(p, ASH_POLICY_RULE_PARAMETER), 1);
    const ash_policy_rule_t *g = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 0);
    assert_non_null(g);
    assert_string_equal(g->at, "global_norm_squared_kernel*");
    assert_int_equal(g->kind, ASH_POLICY_RULE_GRADIENT);
    assert_int_equal(g->buffer.kind, ASH_POLICY_BUFFER_COUNT_ARG);
    assert_int_equal(g->buffer.arg, 1);
    assert_int_equal(g->buffer.count_arg, 2);
    assert_int_equal(g->dtype, ASH_POLICY_DTYPE_BF16);
    assert_int_equal(g->reduce, ASH_POLICY_REDUCE_MEAN);
    assert_int_equal(g->wire, ASH_POLICY_WIRE_SAME); /* bf16 on a bf16 buffer is "same" */
    assert_int_equal(g->line, 3);
    assert_int_equal(g->col, 5);
    const ash_policy_rule_t *q = ash_policy_rule(p, ASH_POLICY_RULE_PARAMETER, 0);
    assert_string_equal(q->at, "matmul_a_b_kernel*");
    assert_int_equal(q->buffer.kind, ASH_POLICY_BUFFER_REGION);
    assert_int_equal(q->buffer.arg, 1);
    assert_int_equal(q->dtype, ASH_POLICY_DTYPE_F32);
    assert_int_equal(q->broadcast, ASH_POLICY_BROADCAST_ONCE);
    assert_int_equal(ash_policy_output_count(p), 2);
    assert_string_equal(ash_policy_output(p, 0), "*.ckpt");
    assert_string_equal(ash_policy_output(p, 1), "out/*");
    assert_null(ash_policy_output(p, 2));
    assert_null(ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 1));
    assert_false(ash_policy_check_collectives(p));
    assert_int_equal(ash_policy_timeout_s(p), 600);
    assert_string_equal(ash_policy_source(p), "t.yaml");
    ash_policy_free(p);
}

static void test_buffer_forms(void **state)
{
    (void)state;
    ash_policy_t *p = parse_ok(forms_yaml);
    assert_int_equal(ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT), 3);
    const ash_policy_rule_t *a = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 0);
    const ash_policy_rule_t *b = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 1);
    const ash_policy_rule_t *c = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 2);
    assert_string_equal(a->at, "adamw_kernel2");
    assert_int_equal(a->buffer.kind, ASH_POLICY_BUFFER_COUNT_ARG);
    assert_int_equal(a->buffer.arg, 1);
    assert_int_equal(a->buffer.count_arg, 4);
    assert_int_equal(a->buffer.count, 0);
    assert_string_equal(b->at, "*fixed*");
    assert_int_equal(b->index, 1);
    assert_int_equal(b->buffer.kind, ASH_POLICY_BUFFER_COUNT);
    assert_int_equal(b->buffer.arg, 0);
    assert_true(b->buffer.count == (uint64_t)INT64_MAX);
    assert_int_equal(b->dtype, ASH_POLICY_DTYPE_F16);
    assert_int_equal(b->reduce, ASH_POLICY_REDUCE_SUM);
    assert_string_equal(c->at, "[a-c]?_k\\*");
    assert_int_equal(c->buffer.kind, ASH_POLICY_BUFFER_REGION);
    assert_int_equal(c->buffer.arg, 31);
    assert_int_equal(c->wire, ASH_POLICY_WIRE_F16);
    const ash_policy_rule_t *q = ash_policy_rule(p, ASH_POLICY_RULE_PARAMETER, 0);
    assert_int_equal(q->kind, ASH_POLICY_RULE_PARAMETER);
    assert_int_equal(q->buffer.kind, ASH_POLICY_BUFFER_COUNT_ARG);
    assert_int_equal(q->buffer.count_arg, 3);
    assert_int_equal(q->dtype, ASH_POLICY_DTYPE_BF16);
    assert_int_equal(q->reduce, ASH_POLICY_REDUCE_MEAN);
    assert_int_equal(q->wire, ASH_POLICY_WIRE_SAME);
    assert_int_equal(q->broadcast, ASH_POLICY_BROADCAST_ONCE);
    assert_int_equal(ash_policy_output_count(p), 3);
    assert_true(ash_policy_check_collectives(p));
    assert_int_equal(ash_policy_timeout_s(p), 0);
    assert_true(ash_policy_nan_check(p));
    ash_policy_free(p);
}

static void test_defaults(void **state)
{
    (void)state;
    ash_policy_t *p = parse_ok("version: 1\n");
    assert_int_equal(ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT), 0);
    assert_int_equal(ash_policy_rule_count(p, ASH_POLICY_RULE_PARAMETER), 0);
    assert_int_equal(ash_policy_output_count(p), 0);
    assert_false(ash_policy_check_collectives(p));
    assert_int_equal(ash_policy_timeout_s(p), ASH_POLICY_DEFAULT_TIMEOUT_S);
    assert_false(ash_policy_nan_check(p));
    assert_false(ash_policy_nan_check(NULL));
    ash_policy_free(p);

    /* empty values mean "not given" for sections and lists */
    p = parse_ok("version: 1\ngradients:\nparameters: ~\noutputs:\n  main_process_only:\n"
                 "debug: null\n");
    assert_int_equal(ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT), 0);
    assert_int_equal(ash_policy_output_count(p), 0);
    assert_int_equal(ash_policy_timeout_s(p), 600);
    ash_policy_free(p);

    /* rule defaults: reduce mean, wire same; broadcast once */
    p = parse_ok("version: 1\ngradients: [ { at: g, buffer: { arg: 0, count: 1 }, dtype: f32 } ]\n"
                 "parameters: [ { at: p, buffer: { arg: 0, count: 1 }, dtype: f32 } ]\n"
                 "debug: { timeout_s: 30 }\n");
    const ash_policy_rule_t *g = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 0);
    const ash_policy_rule_t *q = ash_policy_rule(p, ASH_POLICY_RULE_PARAMETER, 0);
    assert_int_equal(g->reduce, ASH_POLICY_REDUCE_MEAN);
    assert_int_equal(g->wire, ASH_POLICY_WIRE_SAME);
    assert_int_equal(q->broadcast, ASH_POLICY_BROADCAST_ONCE);
    assert_false(ash_policy_check_collectives(p));
    assert_int_equal(ash_policy_timeout_s(p), 30);
    ash_policy_free(p);
}

static void test_wire_normalisation(void **state)
{
    (void)state;
    static const struct {
        const char *dtype, *wire;
        ash_policy_wire_t want;
    } cases[] = {
        {"f32", "same", ASH_POLICY_WIRE_SAME}, {"f32", "f32", ASH_POLICY_WIRE_SAME},
        {"f32", "f16", ASH_POLICY_WIRE_F16},   {"f32", "bf16", ASH_POLICY_WIRE_BF16},
        {"f16", "f16", ASH_POLICY_WIRE_SAME},  {"bf16", "bf16", ASH_POLICY_WIRE_SAME},
        {"bf16", "same", ASH_POLICY_WIRE_SAME}, {"bf16", "f32", ASH_POLICY_WIRE_F32},
        {"f16", "f32", ASH_POLICY_WIRE_F32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "version: 1\ngradients:\n  - { at: k, buffer: { arg: 1, count: 4 }, dtype: %s, "
                 "wire: %s }\n",
                 cases[i].dtype, cases[i].wire);
        ash_policy_t *p = parse_ok(text);
        const ash_policy_rule_t *r = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 0);
        if (r->wire != cases[i].want)
            fail_msg("dtype %s wire %s: got wire %s, want %s", cases[i].dtype, cases[i].wire,
                     ash_policy_wire_name(r->wire), ash_policy_wire_name(cases[i].want));
        ash_policy_free(p);
    }
    assert_int_equal(ash_policy_dtype_size(ASH_POLICY_DTYPE_F32), 4);
    assert_int_equal(ash_policy_dtype_size(ASH_POLICY_DTYPE_BF16), 2);
    assert_string_equal(ash_policy_dtype_name(ASH_POLICY_DTYPE_BF16), "bf16");
    assert_string_equal(ash_policy_reduce_name(ASH_POLICY_REDUCE_SUM), "sum");
}

static char *print_to_string(const ash_policy_t *p);
static void check_roundtrip(const char *text);

/* sync: required (default) | optional; survives the normalised form; part of equality */
static void test_sync_optional(void **state)
{
    (void)state;
    ash_policy_t *p = parse_ok("version: 1\n");
    assert_false(ash_policy_sync_optional(p));
    ash_policy_t *q = parse_ok("version: 1\nsync: optional\n");
    assert_true(ash_policy_sync_optional(q));
    assert_false(ash_policy_equal(p, q));
    ash_policy_free(q);
    q = parse_ok("version: 1\nsync: required\n");
    assert_false(ash_policy_sync_optional(q));
    assert_true(ash_policy_equal(p, q));
    assert_false(ash_policy_sync_optional(NULL));
    check_roundtrip("version: 1\nsync: optional\n");
    ash_policy_free(q);
    ash_policy_free(p);
}

static void test_precision(void **state)
{
    (void)state;
    ash_policy_t *p = parse_ok("version: 1\n");
    assert_int_equal(ash_policy_matmul(p), ASH_POLICY_MATMUL_DEFAULT);
    assert_int_equal(ash_policy_matmul_exclude_count(p), 0);
    assert_null(ash_policy_matmul_exclude(p, 0));
    char *s = print_to_string(p);
    if (!strstr(s, "precision:\n  matmul: default\n  matmul_exclude: []\n"))
        fail_msg("normalised form lacks the precision defaults:\n%s", s);
    free(s);
    ash_policy_free(p);

    static const char *const names[] = {"default", "tf32", "bf16", "f16"};
    for (int i = 0; i < 4; i++) {
        char text[128];
        snprintf(text, sizeof text, "version: 1\nprecision: { matmul: %s }\n", names[i]);
        p = parse_ok(text);
        assert_int_equal(ash_policy_matmul(p), i);
        assert_string_equal(ash_policy_matmul_name(ash_policy_matmul(p)), names[i]);
        ash_policy_matmul_t m = ASH_POLICY_MATMUL_DEFAULT;
        assert_true(ash_policy_matmul_parse(names[i], &m));
        assert_int_equal(m, i);
        ash_policy_free(p);
    }
    ash_policy_matmul_t m = ASH_POLICY_MATMUL_TF32;
    assert_false(ash_policy_matmul_parse("fp16", &m));
    assert_false(ash_policy_matmul_parse(NULL, &m));
    assert_int_equal(m, ASH_POLICY_MATMUL_TF32);
    assert_null(ash_policy_matmul_exclude(NULL, 0));
    assert_int_equal(ash_policy_matmul(NULL), ASH_POLICY_MATMUL_DEFAULT);

    const char *text = "version: 1\nprecision:\n  matmul: bf16\n"
                       "  matmul_exclude: [\"*loss*\", lm_head_forward]\n";
    p = parse_ok(text);
    assert_int_equal(ash_policy_matmul(p), ASH_POLICY_MATMUL_BF16);
    assert_int_equal(ash_policy_matmul_exclude_count(p), 2);
    assert_string_equal(ash_policy_matmul_exclude(p, 0), "*loss*");
    assert_string_equal(ash_policy_matmul_exclude(p, 1), "lm_head_forward");
    check_roundtrip(text);
    ash_policy_t *q = parse_ok("version: 1\nprecision: { matmul: bf16, matmul_exclude: [\"*loss*\"] }\n");
    assert_false(ash_policy_equal(p, q));
    ash_policy_free(q);
    q = parse_ok("version: 1\nprecision: { matmul: f16, matmul_exclude: [\"*loss*\", lm_head_forward] }\n");
    assert_false(ash_policy_equal(p, q));
    ash_policy_free(q);
    ash_policy_free(p);
    /* empty values mean "not given" */
    p = parse_ok("version: 1\nprecision:\n  matmul_exclude:\n");
    assert_int_equal(ash_policy_matmul(p), ASH_POLICY_MATMUL_DEFAULT);
    assert_int_equal(ash_policy_matmul_exclude_count(p), 0);
    ash_policy_free(p);
}

static void test_match_kernel_names(void **state)
{
    (void)state;
    ash_policy_t *p = parse_ok(
        "version: 1\n"
        "gradients:\n"
        "  - { at: \"adamw_kernel2\", buffer: { arg: 1, count_arg: 4 }, dtype: f32 }\n"
        "  - { at: \"*global_norm_squared_kernel*\", buffer: { arg: 1, count_arg: 2 }, dtype: bf16 }\n"
        "  - { at: \"_Z17matmul*\", buffer: { arg: 1, count: 8 }, dtype: f32 }\n"
        "parameters:\n"
        "  - { at: \"matmul_a_b_kernel\", buffer: { arg: 1, region: allocation }, dtype: f32 }\n");
    const ash_policy_rule_t *out[4] = {0};

    /* plain C name (extern "C"): mangled == demangled */
    assert_int_equal(ash_policy_match(p, "adamw_kernel2", NULL, out, 4), 1);
    assert_ptr_equal(out[0], ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, 0));
    /* C++ name: the glob without '*' matches the demangled base only */
    assert_int_equal(ash_policy_match(p, "_Z13adamw_kernel2PfS_S_S_lffffff", NULL, out, 4), 0);
    assert_int_equal(ash_policy_match(p, "_Z13adamw_kernel2PfS_S_S_lffffff",
                                      "adamw_kernel2(float*, float*, float*, float*, long, float, "
                                      "float, float, float, float, float, float)",
                                      out, 4),
                     1);
    /* a template: "void name<T>(...)" -> base "name<T>", matched by '*' globs on both forms */
    const char *tm = "_Z26global_norm_squared_kernelI13__nv_bfloat16EvPfPKT_mm";
    const char *td = "void global_norm_squared_kernel<__nv_bfloat16>(float*, __nv_bfloat16 "
                     "const*, unsigned long, long)";
    assert_int_equal(ash_policy_match(p, tm, NULL, out, 4), 1);
    assert_int_equal(ash_policy_match(p, NULL, td, out, 4), 1);
    assert_string_equal(out[0]->at, "*global_norm_squared_kernel*");
    assert_int_equal(ash_policy_match(p, "global_norm_squared_aggregate_kernel", NULL, out, 4), 0);
    /* parameters come first, then gradients; total is returned even past CAP */
    assert_int_equal(ash_policy_match(p, "_Z17matmul_a_b_kernelPfS_S_iii",
                                      "matmul_a_b_kernel(float*, float*, float*, int, int, int)",
                                      out, 4),
                     2);
    assert_int_equal(out[0]->kind, ASH_POLICY_RULE_PARAMETER);
    assert_int_equal(out[1]->kind, ASH_POLICY_RULE_GRADIENT);
    out[0] = NULL;
    assert_int_equal(ash_policy_match(p, "_Z17matmul_a_b_kernelPfS_S_iii",
                                      "matmul_a_b_kernel(float*, float*, float*, int, int, int)",
                                      NULL, 0),
                     2);
    assert_int_equal(ash_policy_match(p, "_Z17matmul_a_b_kernelPfS_S_iii",
                                      "matmul_a_b_kernel(float*, float*, float*, int, int, int)",
                                      out, 1),
                     2);
    assert_int_equal(out[0]->kind, ASH_POLICY_RULE_PARAMETER);
    assert_int_equal(ash_policy_match(p, NULL, NULL, out, 4), 0);
    assert_int_equal(ash_policy_match(NULL, "adamw_kernel2", NULL, out, 4), 0);
    /* odd demangled shapes do not crash or match wrongly */
    assert_int_equal(ash_policy_match(p, "x", "(", out, 4), 0);
    assert_int_equal(ash_policy_match(p, "x", ")", out, 4), 0);
    assert_int_equal(ash_policy_match(p, "x", "void ()", out, 4), 0);
    ash_policy_free(p);
}

static void test_output_globs(void **state)
{
    (void)state;
    assert_true(ash_policy_glob_match("*.ckpt", "model.ckpt"));
    assert_true(ash_policy_glob_match("*.ckpt", "out/model.ckpt")); /* '*' matches '/' */
    assert_false(ash_policy_glob_match("*.ckpt", "model.ckpt.tmp"));
    assert_true(ash_policy_glob_match("log/[0-9]*.txt", "log/7-a.txt"));
    assert_false(ash_policy_glob_match("log/[0-9]*.txt", "log/a.txt"));
    assert_false(ash_policy_glob_match(NULL, "x"));
    assert_false(ash_policy_glob_match("x", NULL));

    ash_policy_t *p = parse_ok(forms_yaml); // globs: *.ckpt, out/ *, log/[0-9]*.txt
    assert_true(ash_policy_output_main_only(p, "a.ckpt"));
    assert_true(ash_policy_output_main_only(p, "/abs/dir/a.ckpt"));
    assert_true(ash_policy_output_main_only(p, "out/x.bin"));
    assert_true(ash_policy_output_main_only(p, "./out/x.bin"));
    assert_true(ash_policy_output_main_only(p, ".//out/x.bin"));
    assert_false(ash_policy_output_main_only(p, "/abs/out/x.bin")); /* glob with '/': whole path */
    assert_false(ash_policy_output_main_only(p, "data/train.bin"));
    assert_true(ash_policy_output_main_only(p, "log/1.txt"));
    assert_false(ash_policy_output_main_only(p, NULL));
    ash_policy_free(p);
}

static char *print_to_string(const ash_policy_t *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(ash_policy_print(p, f), 0);
    fclose(f);
    return buf;
}

/* print -> parse gives an equal policy, and printing that gives the same text */
static void check_roundtrip(const char *text)
{
    ash_policy_t *p = parse_ok(text);
    char *s1 = print_to_string(p);
    ash_policy_t *q = parse_ok(s1);
    char *s2 = print_to_string(q);
    if (!ash_policy_equal(p, q))
        fail_msg("round trip changed the policy\n--- first print ---\n%s--- reparsed print ---\n%s",
                 s1, s2);
    if (strcmp(s1, s2))
        fail_msg("print is not idempotent\n--- first ---\n%s--- second ---\n%s", s1, s2);
    free(s1);
    free(s2);
    ash_policy_free(p);
    ash_policy_free(q);
}

static void test_print_roundtrip(void **state)
{
    (void)state;
    check_roundtrip(design_yaml);
    check_roundtrip(forms_yaml);
    check_roundtrip("version: 1\n");
    /* strings that need escaping survive: quotes, backslashes, control chars, UTF-8, NEL */
    check_roundtrip("version: 1\ngradients:\n  - at: \"a\\\"b\\\\c\\td\\x01é\\N\\u2028\\uFEFF\"\n"
                    "    buffer: { arg: 3, count: 12345678901 }\n    dtype: f16\n"
                    "outputs: { main_process_only: [\"it's \\\"q\\\".ckpt\", 'x: #y'] }\n");

    /* the normalised form spells out every default */
    ash_policy_t *p = parse_ok("version: 1\ngradients: [ { at: g, buffer: { arg: 0, count_arg: 1 },"
                               " dtype: f32 } ]\n");
    char *s = print_to_string(p);
    static const char *const want[] = {"version: 1\n", "reduce: mean\n", "wire: same\n",
                                       "parameters: []\n", "main_process_only: []\n",
                                       "check_collectives: false\n", "timeout_s: 600\n", "nan_check: false\n",
                                       "buffer: { arg: 0, count_arg: 1 }\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(s, want[i]))
            fail_msg("normalised form lacks \"%s\":\n%s", want[i], s);
    free(s);

    /* equality notices a difference */
    ash_policy_t *q = parse_ok("version: 1\ngradients: [ { at: g, buffer: { arg: 0, count_arg: 2 },"
                               " dtype: f32 } ]\n");
    assert_false(ash_policy_equal(p, q));
    assert_true(ash_policy_equal(p, p));
    ash_policy_free(p);
    ash_policy_free(q);
}

/* repository root = /proc/self/exe minus "build/tests/policy/test_policy" */
static void repo_path(char *out, size_t cap, const char *rel)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(exe, '/');
        assert_non_null(slash);
        *slash = '\0';
    }
    snprintf(out, cap, "%s/%s", exe, rel);
}

static void test_examples_load_and_roundtrip(void **state)
{
    (void)state;
    static const char *const ex[] = {"examples/mlp.yaml", "examples/mlp-adam.yaml", "examples/mlp-clip.yaml", "examples/llmc-fp32.yaml",
                                     "examples/llmc-bf16.yaml", "examples/mnist-1layer.yaml"};
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        char path[PATH_MAX + 64], err[512];
        ash_policy_t *p = NULL;
        repo_path(path, sizeof path, ex[i]);
        if (access(path, R_OK) != 0)
            skip(); /* run from an installed tree without examples: not a pass */
        if (ash_policy_load(path, &p, err, sizeof err) != ASH_POLICY_OK)
            fail_msg("%s", err);
        char *s = print_to_string(p);
        check_roundtrip(s);
        free(s);
        ash_policy_free(p);
    }
    char path[PATH_MAX + 64];
    const ash_policy_rule_t *out[4];
    ash_policy_t *p = NULL;
    repo_path(path, sizeof path, "examples/mnist-1layer.yaml");
    assert_int_equal(ash_policy_load(path, &p, NULL, 0), ASH_POLICY_OK);
    assert_int_equal(ash_policy_match(p, "_Z21update_weights_kernelPfS_if", NULL, out, 4), 1);
    assert_int_equal(ash_policy_match(p, "_Z17matmul_a_b_kernelPfS_S_iii", NULL, out, 4), 1);
    assert_int_equal(ash_policy_match(p, "_Z18matmul_a_bt_kernelPfS_S_iii", NULL, out, 4), 0);
    assert_int_equal(ash_policy_match(p, "_Z15bias_add_kernelPfS_ii", NULL, out, 4), 1);
    ash_policy_free(p);
}

static void test_api_errors(void **state)
{
    (void)state;
    char err[512], tiny[8];
    ash_policy_t *p = (ash_policy_t *)0x1;
    const char *bad = "version: 1\ngradients: [ { at: g } ]\n";

    assert_int_equal(ash_policy_parse(bad, strlen(bad), "x.yaml", &p, err, sizeof err),
                     ASH_POLICY_EPOLICY);
    assert_null(p);
    unsigned line, col;
    parse_err(err, "x.yaml", &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 14);
    assert_non_null(strstr(err, "gradients[0] is missing 'buffer'"));

    /* truncated, still NUL-terminated; NULL/0 error buffers are fine */
    memset(tiny, 'Z', sizeof tiny);
    assert_int_equal(ash_policy_parse(bad, strlen(bad), "x.yaml", &p, tiny, sizeof tiny),
                     ASH_POLICY_EPOLICY);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    assert_int_equal(ash_policy_parse(bad, strlen(bad), "x.yaml", &p, NULL, 0), ASH_POLICY_EPOLICY);
    assert_int_equal(ash_policy_parse(bad, strlen(bad), NULL, &p, err, sizeof err),
                     ASH_POLICY_EPOLICY);
    assert_non_null(strstr(err, "<policy>:2:14: "));
    assert_int_equal(ash_policy_parse(bad, strlen(bad), "x", NULL, err, sizeof err),
                     ASH_POLICY_EINVAL);
    assert_int_equal(ash_policy_parse(NULL, 5, "x", &p, err, sizeof err), ASH_POLICY_EINVAL);
    assert_int_equal(ash_policy_parse(NULL, 0, "x", &p, err, sizeof err), ASH_POLICY_EPOLICY);
    assert_string_equal(err, "x:1:1: empty policy: expected a mapping that starts with 'version: 1'");

    /* text need not be NUL-terminated: only LEN bytes are read */
    const char two[] = "version: 1\nversion: 2";
    assert_int_equal(ash_policy_parse(two, 11, "n", &p, err, sizeof err), ASH_POLICY_OK);
    ash_policy_free(p);

    /* version is checked before anything else: a newer file is told it is newer */
    const char *v3 = "future: {}\nversion: 3\nmore: [1]\n";
    assert_int_equal(ash_policy_parse(v3, strlen(v3), "v", &p, err, sizeof err),
                     ASH_POLICY_EPOLICY);
    assert_string_equal(err, "v:2:10: unsupported version 3 (this accelshim reads version 1)");

    /* files */
    assert_int_equal(ash_policy_load("/nonexistent/p.yaml", &p, err, sizeof err), ASH_POLICY_EIO);
    assert_null(p);
    assert_string_equal(err, "/nonexistent/p.yaml: cannot read policy: No such file or directory");
    assert_int_equal(ash_policy_load("/", &p, err, sizeof err), ASH_POLICY_EIO);
    assert_non_null(strstr(err, "/: cannot read policy: Is a directory"));
    /* a device (or FIFO) is never read: it could block or never end */
    assert_int_equal(ash_policy_load("/dev/null", &p, err, sizeof err), ASH_POLICY_EIO);
    assert_null(p);
    assert_non_null(strstr(err, "/dev/null: cannot read policy: not a regular file"));
    assert_int_equal(ash_policy_load(NULL, &p, err, sizeof err), ASH_POLICY_EINVAL);
    assert_string_equal(ash_policy_result_name(ASH_POLICY_EIO), "policy file cannot be read");
    ash_policy_free(NULL);
}

/* Parse TEXT[0..LEN); it must succeed or fail with a well-formed positioned message. */
static void parse_any(const char *text, size_t len)
{
    char err[512];
    ash_policy_t *p = NULL;
    ash_policy_result_t r = ash_policy_parse(text, len, "fz", &p, err, sizeof err);
    if (r == ASH_POLICY_OK) {
        assert_non_null(p);
        char *s = print_to_string(p); /* anything accepted must print and re-parse equal */
        ash_policy_t *q = parse_ok(s);
        if (!ash_policy_equal(p, q))
            fail_msg("accepted input does not round-trip:\n%s", s);
        ash_policy_free(q);
        free(s);
        ash_policy_free(p);
        return;
    }
    if (r != ASH_POLICY_EPOLICY)
        fail_msg("unexpected result %s for a %zu-byte input", ash_policy_result_name(r), len);
    assert_null(p);
    unsigned line, col, lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    parse_err(err, "fz", &line, &col);
    if (line > lines + 1)
        fail_msg("error line %u beyond the input's %u lines: %s", line, lines, err);
}

static void test_fuzz_prefixes(void **state)
{
    (void)state;
    const char *texts[] = {design_yaml, forms_yaml, "version: 1\ndebug:\n\ttimeout_s: 5\n",
                           "version: 1\ngradients:\n  - at: *a\xc3\xa9*\n\t\xff"};
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        size_t n = strlen(texts[t]);
        for (size_t len = 0; len <= n; len++) {
            char *copy = malloc(len ? len : 1); /* exact size: valgrind sees any overread */
            memcpy(copy, texts[t], len);
            parse_any(copy, len);
            free(copy);
        }
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_fuzz_mutations(void **state)
{
    (void)state;
    static const char special[] = "[]{}*&!:?-#'\"\\\n\t ,|>%@`0123456789~\0\xff\xc3";
    const char *texts[] = {design_yaml, forms_yaml};
    char buf[2048];
    int accepted = 0, rejected = 0;
    for (int iter = 0; iter < 4000; iter++) {
        const char *src = texts[iter & 1];
        size_t len = strlen(src);
        memcpy(buf, src, len);
        int edits = 1 + (int)(next_rand() % 4);
        for (int e = 0; e < edits && len > 0; e++) {
            size_t at = next_rand() % len;
            switch (next_rand() % 4) {
            case 0: /* replace with an interesting byte */
                buf[at] = special[next_rand() % (sizeof special - 1)];
                break;
            case 1: /* replace with any byte */
                buf[at] = (char)(next_rand() & 0xFF);
                break;
            case 2: /* delete a byte */
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                break;
            default: /* duplicate a short run */
                if (len + 8 < sizeof buf) {
                    size_t run = 1 + next_rand() % 8;
                    if (at + run > len)
                        run = len - at;
                    memmove(buf + at + run, buf + at, len - at);
                    len += run;
                }
            }
        }
        char *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        char err[512];
        ash_policy_t *p = NULL;
        if (ash_policy_parse(copy, len, "fz", &p, err, sizeof err) == ASH_POLICY_OK)
            accepted++;
        else
            rejected++;
        ash_policy_free(p);
        parse_any(copy, len);
        free(copy);
    }
    print_message("# mutations: %d accepted, %d rejected\n", accepted, rejected);
    assert_true(accepted > 0 && rejected > 0); /* the mutator reaches both outcomes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_design_example),
        cmocka_unit_test(test_buffer_forms),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_wire_normalisation),
        cmocka_unit_test(test_precision),
        cmocka_unit_test(test_match_kernel_names),
        cmocka_unit_test(test_output_globs),
        cmocka_unit_test(test_print_roundtrip),
        cmocka_unit_test(test_examples_load_and_roundtrip),
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_sync_optional),
        cmocka_unit_test(test_fuzz_prefixes),
        cmocka_unit_test(test_fuzz_mutations),
    };
    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
