/* test_file_create.c — properties of the shim's safety helpers (cmocka):
 * 1. ash_file_create makes a new file, and refuses (EEXIST, nothing touched) an existing file,
 *    a symlink to a file, a dangling symlink (the target is NOT created) and a directory.
 * 2. the options table reads the environment with secure_getenv: run normally it sees
 *    ACCELSHIM_POLICY; run set-uid (AT_SECURE: test_secure_env.sh makes a set-uid copy as root)
 *    it sees defaults only. Mode: `test_file_create --print-policy` prints what it saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ash_file.h"
#include "ash_options.h"

static char dir[256];

static void path_of(char *out, size_t len, const char *name) { snprintf(out, len, "%s/%s", dir, name); }

static void test_creates_new(void **state)
{
    (void)state;
    char p[300];
    path_of(p, sizeof p, "new.trace");
    int fd = ash_file_create(p, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abc", 3), 3);
    close(fd);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_size, 3);
}

static void test_refuses_existing(void **state)
{
    (void)state;
    char p[300];
    path_of(p, sizeof p, "old.trace");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("precious", f);
    fclose(f);
    assert_int_equal(ash_file_create(p, 0644), -EEXIST);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 8); /* not truncated */
}

static void test_refuses_symlinks(void **state)
{
    (void)state;
    char target[300], link1[300], link2[300], missing[300];
    path_of(target, sizeof target, "target");
    path_of(link1, sizeof link1, "link-to-file");
    path_of(link2, sizeof link2, "link-dangling");
    path_of(missing, sizeof missing, "not-there");
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("victim", f);
    fclose(f);
    assert_int_equal(symlink(target, link1), 0);
    assert_int_equal(symlink(missing, link2), 0);
    assert_int_equal(ash_file_create(link1, 0644), -EEXIST);
    assert_int_equal(ash_file_create(link2, 0644), -EEXIST);
    struct stat st;
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_size, 6);
    assert_int_equal(lstat(missing, &st), -1); /* the dangling link's target was not created */
    assert_int_equal(errno, ENOENT);
}

static void test_refuses_directory_and_bad_args(void **state)
{
    (void)state;
    assert_int_equal(ash_file_create(dir, 0644), -EEXIST);
    assert_int_equal(ash_file_create("", 0644), -EINVAL);
    assert_int_equal(ash_file_create(NULL, 0644), -EINVAL);
}

static void test_env_read_normally(void **state)
{
    (void)state;
    setenv("ACCELSHIM_POLICY", "/some/policy.yaml", 1);
    const char *v = ash_opt_str(ASH_OPT_POLICY);
    assert_non_null(v);
    assert_string_equal(v, "/some/policy.yaml");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--print-policy")) {
        const char *v = ash_opt_str(ASH_OPT_POLICY);
        printf("ACCELSHIM_POLICY seen by the shim: %s\n", v ? v : "(unset)");
        return 0;
    }
    snprintf(dir, sizeof dir, "/tmp/ash-file-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creates_new),
        cmocka_unit_test(test_refuses_existing),
        cmocka_unit_test(test_refuses_symlinks),
        cmocka_unit_test(test_refuses_directory_and_bad_args),
        cmocka_unit_test(test_env_read_normally),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
