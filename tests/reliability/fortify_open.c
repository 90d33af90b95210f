/* fortify_open.c — a writer built the way distributions build programs (-O2
 * -D_FORTIFY_SOURCE=2): a two-argument open whose flags come from the command line compiles to
 * glibc's __open_2 / __open64_2 / __openat_2 / __openat64_2, not to open(). Usage:
 * fortify_open DIR FLAGS: opens DIR/{open,open64,openat,openat64}.ckpt with FLAGS (a number; an
 * existing file is needed unless the caller means the abort) and writes one line to each.
 * test_checkpoint.sh checks that libaccelshim-io.so sees these opens too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(int fd, const char *what)
{
    if (fd < 0) {
        perror(what);
        return 1;
    }
    int bad = write(fd, "written\n", 8) != 8;
    close(fd);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fortify_open DIR FLAGS\n");
        return 2;
    }
    int flags = atoi(argv[2]), bad = 0;
    char p[4096];
    int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
    snprintf(p, sizeof p, "%s/open.ckpt", argv[1]);
    bad |= put(open(p, flags), "open");
    snprintf(p, sizeof p, "%s/open64.ckpt", argv[1]);
    bad |= put(open64(p, flags), "open64");
    bad |= put(openat(dir, "openat.ckpt", flags), "openat");
    bad |= put(openat64(dir, "openat64.ckpt", flags), "openat64");
    return bad;
}
