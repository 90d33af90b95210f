/* ptx_blob.S — embeds build/collectives/cast_kernels.ptx (nvcc output) in libash_coll.a.
 *
 * Defines ash_coll_cast_ptx[] (NUL-terminated PTX text, for cuModuleLoadData) and
 * ash_coll_cast_ptx_end, both hidden so the shim never exports them. ASH_COLL_PTX_FILE is set
 * by collectives/module.mk to the path of the PTX file. Read-only data; no code.
 */
#ifndef ASH_COLL_PTX_FILE
#error "ASH_COLL_PTX_FILE must name the PTX file to embed"
#endif
        .section .rodata.ash_coll_cast_ptx, "a", @progbits
        .balign 16
        .globl  ash_coll_cast_ptx
        .hidden ash_coll_cast_ptx
        .type   ash_coll_cast_ptx, @object
ash_coll_cast_ptx:
        .incbin ASH_COLL_PTX_FILE
        .byte   0
        .globl  ash_coll_cast_ptx_end
        .hidden ash_coll_cast_ptx_end
ash_coll_cast_ptx_end:
        .size   ash_coll_cast_ptx, ash_coll_cast_ptx_end - ash_coll_cast_ptx
        .section .note.GNU-stack, "", @progbits
