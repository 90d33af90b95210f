/* save_app.c — a writer that saves the safe way: the data goes to a temporary file, which is then
 * moved over the final name. Usage: save_app MODE DIR NAME TEXT, MODE one of rename, renameat,
 * renameat2, link (link then unlink), linkat (linkat then unlink): writes TEXT to DIR/NAME.tmp
 * (fopen/fputs/fclose), then moves it to DIR/NAME. Modes late-delete and late-edit: DIR is the
 * policy file, deleted (or rewritten as an empty policy) before the first write, of TEXT to
 * NAME (the io library must have read the policy already, at load). Exit 0 when every call succeeded, 1 with the
 * failing call named (and strerror) otherwise. test_save_rename.sh runs it as rank 0 and rank 1
 * under libaccelshim-io.so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int bad(const char *what, const char *path)
{
    fprintf(stderr, "save_app: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: save_app rename|renameat|renameat2|link|linkat DIR NAME TEXT\n"
                        "       save_app late-delete|late-edit POLICY PATH TEXT\n");
        return 2;
    }
    const char *mode = argv[1], *dir = argv[2], *name = argv[3];
    if (!strncmp(mode, "late-", 5)) {
        FILE *p = mode[5] == 'e' ? fopen(dir, "w") : NULL;
        if (mode[5] == 'e' ? !p || fputs("version: 1\n", p) < 0 || fclose(p) != 0 : unlink(dir) != 0)
            return bad(mode, dir);
        FILE *f = fopen(name, "w");
        if (!f || fputs(argv[4], f) < 0 || fclose(f) != 0)
            return bad("write", name);
        return 0;
    }
    char tmp[4096], fin[4096], tmp_rel[4096];
    snprintf(tmp, sizeof tmp, "%s/%s.tmp", dir, name);
    snprintf(fin, sizeof fin, "%s/%s", dir, name);
    snprintf(tmp_rel, sizeof tmp_rel, "%s.tmp", name);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return bad("fopen", tmp);
    if (fputs(argv[4], f) < 0 || fclose(f) != 0)
        return bad("write", tmp);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0)
        return bad("open", dir);
    if (!strcmp(mode, "rename")) {
        if (rename(tmp, fin) != 0)
            return bad("rename", tmp);
    } else if (!strcmp(mode, "renameat")) {
        if (renameat(dfd, tmp_rel, dfd, name) != 0)
            return bad("renameat", tmp_rel);
    } else if (!strcmp(mode, "renameat2")) {
        if (renameat2(dfd, tmp_rel, dfd, name, 0) != 0)
            return bad("renameat2", tmp_rel);
    } else if (!strcmp(mode, "link") || !strcmp(mode, "linkat")) {
        unlink(fin); /* link does not replace */
        int r = mode[4] ? linkat(dfd, tmp_rel, dfd, name, 0) : link(tmp, fin);
        if (r != 0)
            return bad(mode, tmp);
        if (unlink(tmp) != 0)
            return bad("unlink", tmp);
    } else {
        fprintf(stderr, "save_app: unknown mode %s\n", mode);
        return 2;
    }
    close(dfd);
    return 0;
}
