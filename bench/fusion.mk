# bench/fusion.mk — fused vs per-launch reduction (`fuse: true`, shim/sync/fuse.c) on the bundled
# trainer, 2 ranks on hostcuda: bench/fusion.sh (printed side by side, never asserted).
BENCHES += bench/fusion.sh
