/* ash_image.h — private to the shim: the PTX of an image a program loads (cuModuleLoad*,
 * cuLibraryLoad*): PTX text, a fatbin (its highest-arch PTX entry, zstd / LZ4 opened at run time),
 * cudart's fatbin wrapper; an ELF cubin has none (SASS only). Callers: shim/explain/ (explain
 * mode), shim/sync/stepfacts.c (the step watch). Threading: no shared state but the decompressors,
 * looked up once (pthread_once).
 */
#ifndef ASH_IMAGE_H
#define ASH_IMAGE_H

#include <stddef.h>

/* The PTX of IMAGE (LEN may be 0: the formats carry their own sizes) as malloc'd NUL-terminated
 * text in *ptx, or NULL; what it is (or why there is none) in what. */
void ash_image_ptx(const void *image, size_t len, char **ptx, char *what, size_t whatlen);
/* The whole file PATH, malloc'd and NUL-terminated (its length in *len); NULL with errno set. */
char *ash_image_read_file(const char *path, size_t *len);

#endif /* ASH_IMAGE_H */
