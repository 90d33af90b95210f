/* mlp_ptx.S — embeds build/tests/trainers/mlp_kernels.ptx (nvcc output) into the mlp trainer as
 * the NUL-terminated string `mlp_kernels_ptx`, which mlp.c hands to cuModuleLoadData. The build
 * passes -Wa,-I$(BUILD)/tests/trainers so that .incbin finds the PTX; the binary then runs the same
 * kernels on a real GPU and (through hostcuda's PTX scan) on the host. */
    .section .rodata
    .balign 16
    .globl mlp_kernels_ptx
    .hidden mlp_kernels_ptx
    .type mlp_kernels_ptx, @object
mlp_kernels_ptx:
    .incbin "mlp_kernels.ptx"
    .byte 0
    .size mlp_kernels_ptx, . - mlp_kernels_ptx
    .section .note.GNU-stack, "", @progbits
