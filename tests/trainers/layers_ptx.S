/* layers_ptx.S — embeds build/tests/trainers/layers_kernels.ptx (nvcc output) into the layers
 * trainer as the NUL-terminated string `layers_kernels_ptx`, which layers.c hands to
 * cuModuleLoadData. The build passes -Wa,-I$(BUILD)/tests/trainers so that .incbin finds the PTX; the binary then runs the same
 * kernels on a real GPU and (through hostcuda's PTX scan) on the host. */
    .section .rodata
    .balign 16
    .globl layers_kernels_ptx
    .hidden layers_kernels_ptx
    .type layers_kernels_ptx, @object
layers_kernels_ptx:
    .incbin "layers_kernels.ptx"
    .byte 0
    .size layers_kernels_ptx, . - layers_kernels_ptx
    .section .note.GNU-stack, "", @progbits
