#!/usr/bin/env python3
"""gen_api_table.py — print the X-macro rows of hc_api.def for the exported names given on stdin.

Derives (base name, CUDA version, stream kind) of each exported symbol from the PFN_<base>_v<ver>[_ptds|_ptsz]
typedefs in cudaTypedefs.h: for a base, the default-stream versions sorted ascending name base, base_v2, base_v3, ...;
a per-thread typedef of version V names the per-thread twin of the newest default variant with version <= V.
Usage: python3 gen_api_table.py /usr/local/cuda/include/cudaTypedefs.h < names.txt
"""
import re, sys
text = open(sys.argv[1]).read()
pfn = re.findall(r'PFN_(cu\w+?)_v(\d+)(_ptds|_ptsz)?\)', text)
default, perthread = {}, {}
for base, ver, suf in pfn:
    (perthread if suf else default).setdefault(base, set()).add((int(ver), suf) if suf else int(ver))
export = {}
for base, vers in default.items():
    for i, v in enumerate(sorted(vers)):
        export[base if i == 0 else f'{base}_v{i + 1}'] = (base, v, 'PLAIN')
for base, vers in perthread.items():
    dv = sorted(default.get(base, []))
    for v, suf in vers:
        older = [i for i, d in enumerate(dv) if d <= v]
        i = older[-1] if older else 0
        name = (base if i == 0 else f'{base}_v{i + 1}') + suf
        export[name] = (base, v, suf[1:].upper())
for line in sys.stdin:
    n = line.strip()
    if not n:
        continue
    if n not in export:
        sys.exit(f'{n}: no PFN typedef')
    b, v, k = export[n]
    print(f'X({n}, {b}, {v}, {k})')
