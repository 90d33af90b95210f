/* test_hc_tex — CUDA arrays, texture and surface objects through the Driver API alone
 * (cuArray3DCreate, cuMemcpy3D / HtoA / AtoH, cuTexObjectCreate, cuSurfObjectCreate, cuLaunchKernel
 * on tex_kernels.ptx), for what the runtime test (tests/hostcudart/rt_tex.cu) does not reach.
 * Property: a layered 1D texture samples each layer with linear filtering and 9-bit weights as
 * the CUDA programming guide gives (layer index clamped); a signed 32-bit integer texture reads its
 * elements as they are (negative ones too) with clamp and border addressing; a 16-bit unsigned
 * texture reads v / 65535; a 1D byte surface reads 0 beyond its edge with .zero and stores at the
 * edge with .clamp; txq.array_size answers the layers. Usage: test_hc_tex PTXFILE [badsurf|widesurf]
 * (badsurf: a store to a handle that is no surface object, widesurf: a clamped 16-byte read of a
 * one-byte surface; each must fail the launch). Exit 0 pass. */
#include <math.h>
#include <string.h>

#include "test_hc_check.h"

static void launch(const char *k, unsigned n, void **args)
{
    CK(cuLaunchKernel(fn(k), (n + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
}

static float w9(float f)
{
    return nearbyintf(f * 256.0f) / 256.0f;
}

static void case_a1d(void)
{
    enum { W = 7, L = 3, N = 48 };
    float t[L][W], x[N], out[N];
    int layer[N];
    for (int l = 0; l < L; l++)
        for (int i = 0; i < W; i++)
            t[l][i] = l * 100.0f + i * i * 0.37f;
    CUDA_ARRAY3D_DESCRIPTOR d = {W, 0, L, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED};
    CUarray a;
    CK(cuArray3DCreate(&a, &d));
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = t, c.srcPitch = sizeof t[0], c.srcHeight = 1;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = a;
    c.WidthInBytes = sizeof t[0], c.Height = 1, c.Depth = L;
    CK(cuMemcpy3D(&c));
    CUDA_RESOURCE_DESC rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = CU_RESOURCE_TYPE_ARRAY, rd.res.array.hArray = a;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP, td.filterMode = CU_TR_FILTER_MODE_LINEAR;
    CUtexObject to;
    CK(cuTexObjectCreate(&to, &rd, &td, NULL));
    for (int i = 0; i < N; i++)
        x[i] = -1.0f + i * 0.19f, layer[i] = i % 5 - 1;   /* layers -1 .. 3: clamped to 0 .. 2 */
    CUdeviceptr dx = dalloc(sizeof x), dl = dalloc(sizeof layer), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    CK(cuMemcpyHtoD(dl, layer, sizeof layer));
    int n = N;
    void *args[] = {&to, &dx, &dl, &dout, &n};
    launch("tx_a1d", N, args);
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int i = 0; i < N; i++) {
        int l = layer[i] < 0 ? 0 : layer[i] >= L ? L - 1 : layer[i];
        float b = x[i] - 0.5f, a9 = w9(b - floorf(b));
        long i0 = (long)floorf(b), i1 = i0 + 1;
        i0 = i0 < 0 ? 0 : i0 >= W ? W - 1 : i0, i1 = i1 < 0 ? 0 : i1 >= W ? W - 1 : i1;
        float want = (1 - a9) * t[l][i0] + a9 * t[l][i1];
        if (fabsf(out[i] - want) > 1e-5f * fmaxf(1.0f, fabsf(want))) {
            if (fails++ < 20)
                fprintf(stderr, "FAIL tx_a1d x %g layer %d: got %.9g, want %.9g\n", x[i], layer[i], out[i], want);
        }
    }
    int layers = 0;
    CUdeviceptr dq = dalloc(4);
    void *qa[] = {&to, &dq};
    CK(cuLaunchKernel(fn("tx_layers"), 1, 1, 1, 1, 1, 1, 0, NULL, qa, NULL));
    CK(cuMemcpyDtoH(&layers, dq, 4));
    EXPECT_EQ("txq.array_size", layers, L);
    CK(cuTexObjectDestroy(to));
    CK(cuArrayDestroy(a));
    cuMemFree(dx), cuMemFree(dl), cuMemFree(dout), cuMemFree(dq);
}

static void case_int_unorm(void)
{
    enum { W = 4, H = 3, N = 6 };
    int t[H][W][4];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 4; c++)
                t[y][x][c] = (x - 2) * 1000003 + y * 7 - c * 0x10000000;
    CUarray a;
    CUDA_ARRAY3D_DESCRIPTOR d = {W, H, 0, CU_AD_FORMAT_SIGNED_INT32, 4, 0};
    CK(cuArray3DCreate(&a, &d));
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = t, c.srcPitch = sizeof t[0];
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = a, c.WidthInBytes = sizeof t[0], c.Height = H;
    CK(cuMemcpy2D(&c));
    CUDA_RESOURCE_DESC rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = CU_RESOURCE_TYPE_ARRAY, rd.res.array.hArray = a;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = CU_TR_ADDRESS_MODE_BORDER, td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    td.flags = CU_TRSF_READ_AS_INTEGER;
    CUtexObject to;
    CK(cuTexObjectCreate(&to, &rd, &td, NULL));
    float xy[N][2] = {{0.5f, 0.5f}, {3.9f, 2.2f}, {-0.1f, 1.0f}, {4.0f, 1.5f}, {1.7f, -3.0f}, {2.0f, 9.0f}};
    CUdeviceptr dxy = dalloc(sizeof xy), dout = dalloc(sizeof(int) * 4 * N);
    CK(cuMemcpyHtoD(dxy, xy, sizeof xy));
    int n = N, out[N][4];
    void *args[] = {&to, &dxy, &dout, &n};
    launch("tx_int2d", N, args);
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int i = 0; i < N; i++) {
        long x = (long)floorf(xy[i][0]), y = (long)floorf(xy[i][1]);
        y = y < 0 ? 0 : y >= H ? H - 1 : y;
        for (int ch = 0; ch < 4; ch++) {
            int want = x < 0 || x >= W ? 0 : t[y][x][ch];   /* border colour 0 */
            char what[80];
            snprintf(what, sizeof what, "tx_int2d (%g, %g) channel %d", xy[i][0], xy[i][1], ch);
            EXPECT_EQ(what, out[i][ch], want);
        }
    }
    CK(cuTexObjectDestroy(to));
    CK(cuArrayDestroy(a));
    /* 16-bit unsigned, two channels, normalized float */
    unsigned short u[H][W][2];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            u[y][x][0] = (unsigned short)(x * 21845), u[y][x][1] = (unsigned short)(65535 - y * 1000);
    CUDA_ARRAY3D_DESCRIPTOR d16 = {W, H, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2, 0};
    CK(cuArray3DCreate(&a, &d16));
    c.srcHost = u, c.srcPitch = sizeof u[0], c.dstArray = a, c.WidthInBytes = sizeof u[0];
    CK(cuMemcpy2D(&c));
    rd.res.array.hArray = a;
    td.flags = 0, td.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP;
    CK(cuTexObjectCreate(&to, &rd, &td, NULL));
    float o2[N][2];
    void *a2[] = {&to, &dxy, &dout, &n};
    launch("tx_unorm16", N, a2);
    CK(cuMemcpyDtoH(o2, dout, sizeof o2));
    for (int i = 0; i < N; i++) {
        long x = (long)floorf(xy[i][0]), y = (long)floorf(xy[i][1]);
        x = x < 0 ? 0 : x >= W ? W - 1 : x, y = y < 0 ? 0 : y >= H ? H - 1 : y;
        for (int ch = 0; ch < 2; ch++) {
            float want = (float)u[y][x][ch] / 65535.0f;
            if (o2[i][ch] != want && fails++ < 20)
                fprintf(stderr, "FAIL tx_unorm16 (%g, %g) channel %d: got %.9g, want %.9g\n", xy[i][0], xy[i][1], ch,
                        o2[i][ch], want);
        }
    }
    CK(cuTexObjectDestroy(to));
    CK(cuArrayDestroy(a));
    cuMemFree(dxy), cuMemFree(dout);
}

static void case_surf1d(void)
{
    enum { W = 10, N = 5 };
    unsigned char s[W], back[W], out[N];
    for (int i = 0; i < W; i++)
        s[i] = (unsigned char)(i * 20 + 3);
    CUDA_ARRAY3D_DESCRIPTOR d = {W, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_SURFACE_LDST};
    CUarray a;
    CK(cuArray3DCreate(&a, &d));
    CK(cuMemcpyHtoA(a, 0, s, sizeof s));
    CUDA_RESOURCE_DESC rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = CU_RESOURCE_TYPE_ARRAY, rd.res.array.hArray = a;
    CUsurfObject so;
    CK(cuSurfObjectCreate(&so, &rd));
    int x[N] = {0, 4, -2, 9, 15};   /* -2 and 15: beyond the edges (read 0, stored at 0 and 9) */
    CUdeviceptr dx = dalloc(sizeof x), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    for (int i = 0; i < N; i++) {   /* one launch each: the clamped stores land in order */
        CUdeviceptr dxi = dx + (CUdeviceptr)(i * sizeof(int)), douti = dout + (CUdeviceptr)i;
        int one = 1;
        void *ai[] = {&so, &dxi, &douti, &one};
        CK(cuLaunchKernel(fn("tx_surf1d"), 1, 1, 1, 1, 1, 1, 0, NULL, ai, NULL));
    }
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    CK(cuMemcpyAtoH(back, a, 0, sizeof back));
    unsigned char want_back[W];
    memcpy(want_back, s, sizeof s);
    unsigned char want_out[N];
    for (int i = 0; i < N; i++) {   /* the same sequence on the host */
        int in = x[i] >= 0 && x[i] < W, cx = x[i] < 0 ? 0 : x[i] >= W ? W - 1 : x[i];
        want_out[i] = in ? want_back[x[i]] : 0;
        want_back[cx] = (unsigned char)(want_out[i] + 1);
    }
    for (int i = 0; i < N; i++) {
        char what[64];
        snprintf(what, sizeof what, "suld.b.1d.b8.zero at %d", x[i]);
        EXPECT_EQ(what, out[i], want_out[i]);
    }
    for (int i = 0; i < W; i++) {
        char what[64];
        snprintf(what, sizeof what, "surface byte %d after sust.b.1d.b8.clamp", i);
        EXPECT_EQ(what, back[i], want_back[i]);
    }
    CK(cuSurfObjectDestroy(so));
    CK(cuArrayDestroy(a));
    cuMemFree(dx), cuMemFree(dout);
}

int main(int argc, char **argv)
{
    start(argc, "test_hc_tex PTXFILE [badsurf]");
    CK(cuModuleLoad(&mod, argv[1]));
    if (argc > 2 && !strcmp(argv[2], "badsurf")) {
        CUsurfObject s = 0x7777;
        void *args[] = {&s};
        CK(cuLaunchKernel(fn("tx_badsurf"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
        CUresult r = cuCtxSynchronize();
        const char *en = "?";
        cuGetErrorName(r, &en);
        printf("badsurf: %s\n", en);
        return r == CUDA_SUCCESS ? 0 : 1;
    }
    if (argc > 2 && !strcmp(argv[2], "widesurf")) {
        CUDA_ARRAY3D_DESCRIPTOR d = {1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_SURFACE_LDST};
        CUarray a;
        CK(cuArray3DCreate(&a, &d));
        CUDA_RESOURCE_DESC rd;
        memset(&rd, 0, sizeof rd);
        rd.resType = CU_RESOURCE_TYPE_ARRAY, rd.res.array.hArray = a;
        CUsurfObject s;
        CK(cuSurfObjectCreate(&s, &rd));
        CUdeviceptr out = dalloc(16);
        void *args[] = {&s, &out};
        CK(cuLaunchKernel(fn("tx_widesurf"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
        CUresult r = cuCtxSynchronize();
        const char *en = "?";
        cuGetErrorName(r, &en);
        printf("widesurf: %s\n", en);
        return r == CUDA_SUCCESS ? 0 : 1;
    }
    case_a1d();
    case_int_unorm();
    case_surf1d();
    printf("%s: %d failed\n", fails ? "FAIL" : "PASS", fails);
    return fails ? 1 : 0;
}
