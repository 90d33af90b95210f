#!/usr/bin/env bash
# The MPI equivalence suite once more with hostcuda's stream jitter on (HOSTCUDA_JITTER=SEED:
# stream workers delay ops by seeded random amounts, legacy-stream ops longest and behind the
# non-blocking streams), so an ordering bug between the trainer's legacy stream and the shim's
# own streams shows as a failed comparison instead of passing by luck. Same property and controls
# as test_equivalence_mpi.sh; the seed is printed so a failure can be rerun.
export HOSTCUDA_JITTER=${HOSTCUDA_JITTER:-20261130}
echo "# HOSTCUDA_JITTER=$HOSTCUDA_JITTER"
exec bash "$(dirname "$0")/equiv_suite.sh" mpi
