# tests/faults — the fault matrix: tests/faults/matrix.tsv holds one line per fault (how it is
# injected, how the run must end: exit status, time bound, rank named, what is kept), on both
# backends and both engines that run here; test_fault_matrix.sh runs it, one TAP case per line
# (docs/reliability.md, "The fault matrix"). About 3-4 minutes on 2 cores.
TESTS += tests/faults/test_fault_matrix.sh
