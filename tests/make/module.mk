# tests/make — the build itself, as a user meets it (both need root for a private mount namespace,
# and skip (77) without it):
#   test_first_make.sh  the README's first `make demo` succeeds on a machine without Open MPI yet
#                       (install-deps installs it midway; a full build from a clean copy, minutes)
#   test_no_cuda.sh     `make clean` and `make help` work without the CUDA toolkit; `make all`
#                       then says clearly what is missing
TESTS += tests/make/test_no_cuda.sh tests/make/test_first_make.sh
