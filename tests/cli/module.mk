# tests/cli — bats tests of the launcher (scripts/accelerate-run): option forms (--dry-run),
# real runs on mpirun and the launcher's own engine (output prefixing, templating, failure
# handling), subcommands, `make install`, and a two-"machine" run in network namespaces.
CLI_TESTS := $(sort $(wildcard tests/cli/*.bats))
TESTS += $(CLI_TESTS)
