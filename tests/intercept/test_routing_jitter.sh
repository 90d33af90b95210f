#!/usr/bin/env bash
# The routing tests (identity and by-name) and the 8-thread door test once more with hostcuda's
# stream jitter on (HOSTCUDA_JITTER=SEED), so calls through the routed pointers that copy, launch
# and synchronise are checked under shuffled stream timing too. Same properties and controls.
set -u
export HOSTCUDA_JITTER=${HOSTCUDA_JITTER:-20261130}
echo "# HOSTCUDA_JITTER=$HOSTCUDA_JITTER"
d=$(dirname "$0")
bash "$d/test_routing.sh" || exit $?
bash "$d/test_route_name.sh" || exit $?
echo "PASS: routing tests under jitter"
