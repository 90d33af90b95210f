/* ash_policy_yaml.c — libyaml events -> a small node tree (private to policy/).
 *
 * Owns: syntax errors (libyaml's own problem and mark), rejecting what a policy never needs
 * (anchors, aliases, tags, a second document, nesting deeper than ASH_POLICY__MAX_DEPTH), and
 * the diagnostic formatter. Builds iteratively with an explicit stack, so hostile input cannot
 * exhaust the C stack. No global state; callers: ash_policy.c.
 * Must not: recurse on the input (an explicit stack); keep global state; accept anchors, aliases,
 * tags, a second document or nesting deeper than ASH_POLICY__MAX_DEPTH; know the schema
 * (ash_policy.c does).
 */
#include "ash_policy_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

ash_policy_result_t ash_policy__fail(ash_policy__diag_t *d, unsigned line, unsigned col,
                                     const char *fmt, ...)
{
    if (d->failed)
        return d->result;
    d->failed = true;
    d->result = ASH_POLICY_EPOLICY;
    if (!d->buf || d->cap == 0)
        return d->result;
    int n = line ? snprintf(d->buf, d->cap, "%s:%u:%u: ", d->name, line, col)
                 : snprintf(d->buf, d->cap, "%s: ", d->name);
    if (n >= 0 && (size_t)n < d->cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->buf + n, d->cap - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return d->result;
}

ash_policy_result_t ash_policy__oom(ash_policy__diag_t *d)
{
    if (!d->failed) {
        d->failed = true;
        d->result = ASH_POLICY_ENOMEM;
        if (d->buf && d->cap)
            snprintf(d->buf, d->cap, "%s: out of memory while reading the policy", d->name);
    }
    return d->result;
}

void ash_policy__node_free(ash_policy__node_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++)
        ash_policy__node_free(n->items[i]); /* depth is bounded by ASH_POLICY__MAX_DEPTH */
    free(n->items);
    free(n->str);
    free(n);
}

static ash_policy__node_t *node_new(ash_policy__node_type_t type, const yaml_mark_t *m)
{
    ash_policy__node_t *n = calloc(1, sizeof *n);
    if (n) {
        n->type = type;
        n->line = (unsigned)m->line + 1;
        n->col = (unsigned)m->column + 1;
    }
    return n;
}

static bool node_append(ash_policy__node_t *parent, ash_policy__node_t *child)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 8;
        ash_policy__node_t **items = realloc(parent->items, cap * sizeof *items);
        if (!items)
            return false;
        parent->items = items;
        parent->cap = cap;
    }
    parent->items[parent->n++] = child;
    return true;
}

/* libyaml's reader errors carry a byte offset, not a mark: derive line:col from the text. */
static void offset_to_mark(const char *text, size_t len, size_t off, unsigned *line, unsigned *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            ++*col; /* count characters, not UTF-8 continuation bytes */
        }
    }
}

/* Is the character at libyaml mark M (0-based line, column in characters) a tab? */
static bool at_mark_is_tab(const char *text, size_t len, const yaml_mark_t *m)
{
    size_t i = 0, line = 0, col = 0;
    while (i < len && line < m->line)
        line += text[i++] == '\n';
    while (i < len && col < m->column && text[i] != '\n') {
        i++;
        if (i >= len || ((unsigned char)text[i] & 0xC0) != 0x80)
            col++; /* a whole UTF-8 character consumed */
    }
    return i < len && line == m->line && text[i] == '\t';
}

static ash_policy_result_t syntax_error(const yaml_parser_t *p, const char *text, size_t len,
                                        ash_policy__diag_t *d)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    if (p->error == YAML_MEMORY_ERROR)
        return ash_policy__oom(d);
    if (p->error == YAML_READER_ERROR) {
        unsigned line, col;
        offset_to_mark(text, len, p->problem_offset, &line, &col);
        if (p->problem_value >= 0)
            return ash_policy__fail(d, line, col, "invalid input: %s (byte 0x%02x at offset %zu)",
                                    problem, (unsigned)p->problem_value & 0xFFu,
                                    p->problem_offset);
        return ash_policy__fail(d, line, col, "invalid input: %s (at offset %zu)", problem,
                                p->problem_offset);
    }
    unsigned line = (unsigned)p->problem_mark.line + 1, col = (unsigned)p->problem_mark.column + 1;
    const char *ctx = p->context ? p->context : "";
    const char *hint = "";
    if (strstr(ctx, "alias") || strstr(ctx, "anchor"))
        hint = "; a glob that starts with '*' (or '&', '!', '[', '{') must be quoted";
    else if (strstr(problem, "tab") || at_mark_is_tab(text, len, &p->problem_mark))
        hint = "; indent with spaces, not tabs";
    if (p->context)
        return ash_policy__fail(d, line, col, "YAML syntax error: %s (%s that started at %u:%u)%s",
                                problem, ctx, (unsigned)p->context_mark.line + 1,
                                (unsigned)p->context_mark.column + 1, hint);
    return ash_policy__fail(d, line, col, "YAML syntax error: %s%s", problem, hint);
}

/* Reject the YAML features a policy never needs; each would make a file mean more than it says. */
static ash_policy_result_t check_props(const yaml_event_t *ev, const yaml_char_t *anchor,
                                       const yaml_char_t *tag, ash_policy__diag_t *d)
{
    unsigned line = (unsigned)ev->start_mark.line + 1, col = (unsigned)ev->start_mark.column + 1;
    if (anchor)
        return ash_policy__fail(d, line, col,
                                "anchors (&%s) are not supported in a policy: write the value out "
                                "in full",
                                (const char *)anchor);
    if (tag)
        return ash_policy__fail(d, line, col,
                                "tags (%s) are not supported in a policy: remove the tag (integers "
                                "are plain, strings may be quoted)",
                                (const char *)tag);
    return ASH_POLICY_OK;
}

typedef struct {
    ash_policy__node_t **root;
    ash_policy__node_t *stack[ASH_POLICY__MAX_DEPTH];
    size_t depth;
    unsigned documents;
    ash_policy__diag_t *d;
} builder_t;

/* Attach a new node under the open container (or as the root); push it if it is a container. */
static ash_policy_result_t attach(builder_t *b, ash_policy__node_t *n, const yaml_event_t *ev)
{
    if (!n)
        return ash_policy__oom(b->d);
    if (n->type != ASH_POLICY__SCALAR && b->depth == ASH_POLICY__MAX_DEPTH) {
        ash_policy__node_free(n);
        return ash_policy__fail(b->d, (unsigned)ev->start_mark.line + 1,
                                (unsigned)ev->start_mark.column + 1,
                                "nesting deeper than %d levels (a policy needs at most 4)",
                                ASH_POLICY__MAX_DEPTH);
    }
    if (b->depth == 0) {
        *b->root = n; /* one document, one root: a second document is refused earlier */
    } else if (!node_append(b->stack[b->depth - 1], n)) {
        ash_policy__node_free(n);
        return ash_policy__oom(b->d);
    }
    if (n->type != ASH_POLICY__SCALAR)
        b->stack[b->depth++] = n;
    return ASH_POLICY_OK;
}

static ash_policy_result_t on_event(builder_t *b, const yaml_event_t *ev)
{
    ash_policy_result_t r;
    ash_policy__node_t *n;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (b->documents++ > 0)
            return ash_policy__fail(b->d, (unsigned)ev->start_mark.line + 1,
                                    (unsigned)ev->start_mark.column + 1,
                                    "a second YAML document: a policy file holds exactly one");
        return ASH_POLICY_OK;
    case YAML_ALIAS_EVENT:
        return ash_policy__fail(b->d, (unsigned)ev->start_mark.line + 1,
                                (unsigned)ev->start_mark.column + 1,
                                "aliases (*%s) are not supported in a policy; a glob that starts "
                                "with '*' must be quoted: \"*%s\"",
                                (const char *)ev->data.alias.anchor,
                                (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        if ((r = check_props(ev, ev->data.scalar.anchor, ev->data.scalar.tag, b->d)))
            return r;
        n = node_new(ASH_POLICY__SCALAR, &ev->start_mark);
        if (n) {
            n->len = ev->data.scalar.length;
            n->str = malloc(n->len + 1);
            if (!n->str) {
                free(n);
                n = NULL;
            } else {
                memcpy(n->str, ev->data.scalar.value, n->len);
                n->str[n->len] = '\0';
                n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
            }
        }
        return attach(b, n, ev);
    case YAML_SEQUENCE_START_EVENT:
        r = check_props(ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag, b->d);
        if (r)
            return r;
        return attach(b, node_new(ASH_POLICY__SEQ, &ev->start_mark), ev);
    case YAML_MAPPING_START_EVENT:
        if ((r = check_props(ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag, b->d)))
            return r;
        return attach(b, node_new(ASH_POLICY__MAP, &ev->start_mark), ev);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        return ASH_POLICY_OK;
    default: /* stream start/end, document end */
        return ASH_POLICY_OK;
    }
}

ash_policy_result_t ash_policy__yaml_tree(const char *text, size_t len, ash_policy__diag_t *d,
                                          ash_policy__node_t **root)
{
    yaml_parser_t parser;
    builder_t b = {.root = root, .d = d};
    ash_policy_result_t r = ASH_POLICY_OK;

    *root = NULL;
    if (!yaml_parser_initialize(&parser))
        return ash_policy__oom(d);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            r = syntax_error(&parser, text, len, d);
            break;
        }
        bool end = ev.type == YAML_STREAM_END_EVENT;
        r = on_event(&b, &ev);
        yaml_event_delete(&ev);
        if (r != ASH_POLICY_OK || end)
            break;
    }
    yaml_parser_delete(&parser);
    if (r != ASH_POLICY_OK) {
        ash_policy__node_free(*root);
        *root = NULL;
    }
    return r;
}
