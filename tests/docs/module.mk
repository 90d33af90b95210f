# tests/docs — the documentation's checkable claims:
#   test_claims.sh  the README's counts (hooks, cuBLAS hooks, malformed policies, equivalence
#                   cases) equal what the tree holds, and the docs speak of the product only
#                   (no process talk, no commit ids, no design outside the repository)
#   test_layout.sh  the library's folders and their call direction (#include lines), with a
#                   planted violation as control; every product .c opens with its comment and its
#                   " * Must not:" line; the README's folder rows equal scripts/gen-layout.sh
TESTS += tests/docs/test_claims.sh tests/docs/test_layout.sh
