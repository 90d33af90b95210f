/* recover_app.c — a program that handles SIGSEGV itself, with its handler installed BEFORE its
 * first CUDA call (so before the shim's crash handler, which then calls it first): used by
 * tests/reliability/test_crash_recover.sh. Usage: recover_app fix|giveup. fix: writes to a
 * PROT_NONE page; the handler makes it writable and returns; exit 0 when the write landed.
 * giveup: writes through NULL; the handler sees a fault that is not its page, restores the
 * default action and raises the signal again (the usual way to give up): killed by SIGSEGV.
 * Links the driver stub; runs on hostcuda.
 */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *volatile page;
static long page_size;
static volatile sig_atomic_t fixed;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char *a = si->si_addr;
    if (page && a >= page && a < page + page_size &&
        mprotect(page, (size_t)page_size, PROT_READ | PROT_WRITE) == 0) {
        fixed++;
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((noinline)) static void recover_app_null_write(void)
{
    volatile int *volatile p = NULL;
    *p = 1;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "fix") && strcmp(argv[1], "giveup"))) {
        fprintf(stderr, "usage: recover_app fix|giveup\n");
        return 2;
    }
    page_size = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (p == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL) != 0) {
        perror("recover_app: setup");
        return 1;
    }
    page = p;
    CUdevice dev; /* cuDeviceGet is the shim's first hook here: it initialises on top of ours */
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
        fprintf(stderr, "recover_app: cuInit/cuDeviceGet failed\n");
        return 1;
    }
    if (!strcmp(argv[1], "giveup"))
        recover_app_null_write();
    *(volatile char *)page = 42;
    int ok = *(volatile char *)page == 42 && fixed == 1;
    printf("recover_app: the handler fixed %d fault(s); the page holds %d\n", (int)fixed, *(volatile char *)page);
    return ok ? 0 : 1;
}
