/* inspect_ptx.S — embeds build/shim/inspect_kernels.ptx (nvcc output) in libaccelshim.so.
 *
 * Defines ash_inspect_ptx[] (NUL-terminated PTX text for the real cuModuleLoadData), hidden so
 * the shim never exports it. ASH_INSPECT_PTX_FILE is set by libaccelshim.mk. Read-only data only.
 */
#ifndef ASH_INSPECT_PTX_FILE
#error "ASH_INSPECT_PTX_FILE must name the PTX file to embed"
#endif
        .section .rodata.ash_inspect_ptx, "a", @progbits
        .balign 16
        .globl  ash_inspect_ptx
        .hidden ash_inspect_ptx
        .type   ash_inspect_ptx, @object
ash_inspect_ptx:
        .incbin ASH_INSPECT_PTX_FILE
        .byte   0
ash_inspect_ptx_end:
        .size   ash_inspect_ptx, ash_inspect_ptx_end - ash_inspect_ptx
        .section .note.GNU-stack, "", @progbits
