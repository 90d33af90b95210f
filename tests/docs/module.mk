# tests/docs — the documentation's checkable claims:
#   test_claims.sh  the README's counts (hooks, cuBLAS hooks, malformed policies, equivalence
#                   cases) equal what the tree holds, and the docs speak of the product only
#                   (no process talk, no commit ids, no design outside the repository)
TESTS += tests/docs/test_claims.sh
