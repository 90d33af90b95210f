#!/usr/bin/env python3
"""compare_rules.py EXPLANATION POLICY — do the "rule:" lines of an `accelerate-run explain`
output name the same kernels and buffers as a hand-written policy?

Every suggested gradients rule must match one of the policy's gradients rules: the same `at`
(the kernel name, globs at its ends aside: "*adamw_kernel2*" and "adamw_kernel2*" name one kernel),
the same `arg`, the same dtype, and the same count (`count_arg` when the policy gives one; where
the policy says `region: allocation`, a suggested `count_arg` is accepted only if the explanation
says that argument equals the allocation's element count). Every suggested parameters rule must
match one of the policy's parameters rules (at, arg, region) when the policy has any; a policy
without parameters rules (every rank seeds alike) leaves the always-suggested broadcast as an
extra, printed as such. There must be at least one suggested gradients rule.
Prints one line per rule compared (both sides on a mismatch); exit 0 when all match, 1 if not.
"""
import re
import sys

import yaml

RULE = re.compile(r'^rule: (gradients|parameters) at: "([^"]+)" buffer: \{ arg: (\d+), '
                  r'(?:count_arg: (\d+|cannot-tell)|region: (allocation)) \} dtype: (\S+)')


def main():
    text = open(sys.argv[1]).read()
    pol = yaml.safe_load(open(sys.argv[2])) or {}
    ok = True
    got = [RULE.match(l) for l in text.splitlines() if l.startswith('rule: ')]
    if any(m is None for m in got):
        print('unparsed rule line(s) in', sys.argv[1])
        return 1
    grads = [m for m in got if m.group(1) == 'gradients']
    if not grads:
        print('no gradients rule suggested')
        ok = False
    for m in got:
        kind, at, arg, count, region, dtype = m.groups()
        rules = pol.get(kind) or []
        if kind == 'parameters' and not rules:
            print(f'extra: parameters at {at} arg {arg} (broadcast: once, always suggested); '
                  f'{sys.argv[2]} has no parameters rule')
            continue
        found = None
        for r in rules:
            b = r.get('buffer', {})
            if r.get('at', '').strip('*') != at.strip('*') or b.get('arg') != int(arg):
                continue
            if r.get('dtype', 'f32') != dtype:
                continue
            if 'count_arg' in b:
                if count != str(b['count_arg']):
                    continue
            elif b.get('region') == 'allocation':
                if count is not None and not re.search(
                        rf'arg{count} = \d+\s+= the element count of the allocation of .*arg{arg}\'s', text):
                    continue
            found = r
            break
        if found:
            print(f'match: {kind} at {at} arg {arg} {"count_arg " + count if count else "region allocation"} '
                  f'dtype {dtype} == {sys.argv[2]}: {found}')
        else:
            ok = False
            print(f'MISMATCH: suggested {kind} at {at} arg {arg} '
                  f'{"count_arg " + count if count else "region allocation"} dtype {dtype}; '
                  f'{sys.argv[2]} has: {rules}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
