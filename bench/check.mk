# bench/check.mk — what ACCELSHIM_CHECK_COLLECTIVES=1 (a fingerprint exchange before each
# collective) costs per collective: 2 ranks of the bundled trainer on hostcuda, with and without,
# bench/check_collectives.sh (printed side by side, never asserted).
BENCHES += bench/check_collectives.sh
