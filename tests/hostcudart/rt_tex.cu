// rt_tex.cu — CUDA arrays, texture and surface objects through the runtime and the Driver API,
// sampled by kernels (tex, tld4, txq, suld, sust, suq in the PTX) on hostcudart + hostcuda.
// Property: every sample equals a host reference written from the CUDA programming guide's
// "Texture Fetching" formulas (point: texel floor(x); linear: x - 0.5, weights in 9-bit fixed
// point with 8 fractional bits; the address modes; unorm/snorm reads), for each address mode,
// filter and normalized-coordinate setting; surface writes read back; 3D and layered textures;
// bad descriptors are refused with the documented errors.
// Negative control: a reference with exact (unrounded) weights must differ from what the kernels
// return for linear filtering (the comparison sees the 9-bit rounding).
// RT_TEX_CASE=ldarray|badhandle|trap: the faulting programs (one each: a fault is sticky), which
// must fail their launch; test_hcrt_tex.sh checks the error and hostcuda's line.
#include <cuda.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_expect.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"   // cudaMemcpyToArray / FromArray: still used

#define CK(call) EXPECT_RT(#call, cudaSuccess, call)
#define CKD(call) EXPECT_EQ(#call, CUDA_SUCCESS, call)

__global__ void k_sample2d(cudaTextureObject_t t, const float2 *xy, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<float>(t, xy[i].x, xy[i].y);
}
__global__ void k_sample2d4(cudaTextureObject_t t, const float2 *xy, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<float4>(t, xy[i].x, xy[i].y);
}
__global__ void k_sample2du4(cudaTextureObject_t t, const float2 *xy, uchar4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<uchar4>(t, xy[i].x, xy[i].y);
}
__global__ void k_gather(cudaTextureObject_t t, const float2 *xy, float4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2Dgather<float4>(t, xy[i].x, xy[i].y, 0);
}
__global__ void k_sample3d(cudaTextureObject_t t, const float4 *p, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex3D<float>(t, p[i].x, p[i].y, p[i].z);
}
__global__ void k_layered(cudaTextureObject_t t, const float4 *p, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DLayered<float>(t, p[i].x, p[i].y, (int)p[i].z);
}
__global__ void k_fetch1d(cudaTextureObject_t t, float *out, int n, int off)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(t, i + off);
}
__global__ void k_surf_write(cudaSurfaceObject_t s, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h)
        surf2Dwrite(100.0f * y + x, s, x * (int)sizeof(float), y);
}
// reads (x, y) with clamp and with zero beyond the edge
__global__ void k_surf_read(cudaSurfaceObject_t s, const int2 *xy, float *clamped, float *zeroed, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        clamped[i] = surf2Dread<float>(s, xy[i].x * 4, xy[i].y, cudaBoundaryModeClamp);
        zeroed[i] = surf2Dread<float>(s, xy[i].x * 4, xy[i].y, cudaBoundaryModeZero);
    }
}
__global__ void k_surf_trap(cudaSurfaceObject_t s, int x)
{
    float v = surf2Dread<float>(s, x * 4, 0);   // cudaBoundaryModeTrap
    if (v == 12345.0f)
        asm volatile("trap;");
}
__global__ void k_query(cudaTextureObject_t t, cudaSurfaceObject_t s, int *out)
{
    int a, b, c;
    asm("txq.width.b32 %0, [%1];" : "=r"(a) : "l"(t));
    asm("txq.height.b32 %0, [%1];" : "=r"(b) : "l"(t));
    asm("suq.width.b32 %0, [%1];" : "=r"(c) : "l"(s));
    out[0] = a, out[1] = b, out[2] = c;
}
__global__ void k_lod_grad(cudaTextureObject_t t, const float2 *xy, float *lod, float *grad, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {   // no mipmaps: both read level 0
        lod[i] = tex2DLod<float>(t, xy[i].x, xy[i].y, 1.5f);
        grad[i] = tex2DGrad<float>(t, xy[i].x, xy[i].y, make_float2(0.5f, 0), make_float2(0, 0.5f));
    }
}
__global__ void k_surf3d(cudaSurfaceObject_t s, int w, int h, int d)
{
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    if (x < w && y < h && z < d) {
        float4 v = surf3Dread<float4>(s, x * 16, y, z);
        surf3Dwrite(make_float4(v.x * 2, v.y + 1, (float)x, (float)(y * 10 + z)), s, x * 16, y, z);
    }
}
__global__ void k_ldptr(const float *p, float *out)
{
    out[0] = p[0];
}

// ------------------------------------------------------------------ the host reference
struct ref_tex {
    const float *t;   // w x h x d texels, one channel
    int w, h, d;
    int mode[3];      // cudaTextureAddressMode
    int linear, normalized;
    float border;
};

static long ref_index(long i, int n, int mode, int normalized)
{
    if (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror))
        mode = cudaAddressModeClamp;   // the guide: wrap and mirror need normalized coordinates
    if (mode == cudaAddressModeWrap)
        return ((i % n) + n) % n;
    if (mode == cudaAddressModeMirror) {
        long m = ((i % (2 * n)) + 2 * n) % (2 * n);
        return m >= n ? 2 * n - 1 - m : m;
    }
    if (mode == cudaAddressModeBorder)
        return i < 0 || i >= n ? -1 : i;
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

static float ref_texel(const ref_tex *r, long i, long j, long k)
{
    long a = ref_index(i, r->w, r->mode[0], r->normalized);
    long b = r->h > 1 || r->d > 1 ? ref_index(j, r->h, r->mode[1], r->normalized) : 0;
    long c = r->d > 1 ? ref_index(k, r->d, r->mode[2], r->normalized) : 0;
    if (a < 0 || b < 0 || c < 0)
        return r->border;
    return r->t[(c * r->h + b) * r->w + a];
}

// exact9: 1 = weights in 9-bit fixed point (the hardware's), 0 = exact (the negative control)
static float ref_sample(const ref_tex *r, float x, float y, float z, int dims, int exact9)
{
    float c[3] = {x, y, z};
    int n[3] = {r->w, r->h, r->d};
    for (int d = 0; d < dims; d++)
        if (r->normalized) {
            if (r->mode[d] == cudaAddressModeWrap)
                c[d] -= floorf(c[d]);
            c[d] *= (float)n[d];
        }
    if (!r->linear)
        return ref_texel(r, (long)floorf(c[0]), (long)floorf(c[1]), (long)floorf(c[2]));
    long i[3] = {0, 0, 0};
    float a[3] = {0, 0, 0};
    for (int d = 0; d < dims; d++) {
        float b = c[d] - 0.5f;
        i[d] = (long)floorf(b);
        a[d] = b - floorf(b);
        if (exact9)
            a[d] = nearbyintf(a[d] * 256.0f) / 256.0f;
    }
    if (dims == 2)
        return (1 - a[0]) * (1 - a[1]) * ref_texel(r, i[0], i[1], 0) + a[0] * (1 - a[1]) * ref_texel(r, i[0] + 1, i[1], 0) +
               (1 - a[0]) * a[1] * ref_texel(r, i[0], i[1] + 1, 0) + a[0] * a[1] * ref_texel(r, i[0] + 1, i[1] + 1, 0);
    float s = 0;
    for (int dk = 0; dk < 2; dk++)
        for (int dj = 0; dj < 2; dj++)
            for (int di = 0; di < 2; di++)
                s += (di ? a[0] : 1 - a[0]) * (dj ? a[1] : 1 - a[1]) * (dk ? a[2] : 1 - a[2]) *
                     ref_texel(r, i[0] + di, i[1] + dj, i[2] + dk);
    return s;
}

static int near(float a, float b)
{
    return fabsf(a - b) <= 1e-5f * fmaxf(1.0f, fabsf(b));
}

// ------------------------------------------------------------------ cases
enum { W = 8, H = 6 };
static float texels[W * H];
static const char *mode_name[] = {"wrap", "clamp", "mirror", "border"};

static float2 *coords2d(int *n)
{
    static const float xs[] = {-1.3f, -0.2f, 0.0f, 0.37f, 1.5f, 2.61f, 3.999f, 7.2f, 7.75f, 8.4f, 11.9f};
    static const float ys[] = {-0.7f, 0.5f, 1.24f, 3.3f, 5.9f, 6.6f, 9.1f};
    int nx = sizeof xs / sizeof xs[0], ny = sizeof ys / sizeof ys[0];
    float2 *p;
    cudaMallocManaged(&p, sizeof(float2) * nx * ny * 2);
    int k = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            p[k++] = make_float2(xs[i], ys[j]);
    for (int j = 0; j < ny; j++)   // the same as normalized coordinates
        for (int i = 0; i < nx; i++)
            p[k++] = make_float2(xs[i] / W, ys[j] / H);
    *n = k;
    return p;
}

static void case_2d(cudaArray_t arr, int *linear_diff_exact)
{
    int n;
    float2 *xy = coords2d(&n);
    float *out;
    cudaMallocManaged(&out, sizeof(float) * n);
    for (int mode = 0; mode < 4; mode++)
        for (int lin = 0; lin < 2; lin++)
            for (int norm = 0; norm < 2; norm++) {
                char name[96];
                snprintf(name, sizeof name, "2d %s %s %s", mode_name[mode], lin ? "linear" : "point",
                         norm ? "normalized" : "unnormalized");
                rt_cur = name;
                cudaResourceDesc rd = {};
                rd.resType = cudaResourceTypeArray;
                rd.res.array.array = arr;
                cudaTextureDesc td = {};
                td.addressMode[0] = td.addressMode[1] = (cudaTextureAddressMode)mode;
                td.filterMode = lin ? cudaFilterModeLinear : cudaFilterModePoint;
                td.readMode = cudaReadModeElementType;
                td.normalizedCoords = norm;
                td.borderColor[0] = -7.5f;
                cudaTextureObject_t t = 0;
                CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
                int half = n / 2, base = norm ? half : 0;
                k_sample2d<<<(half + 63) / 64, 64>>>(t, xy + base, out, half);
                CK(cudaDeviceSynchronize());
                ref_tex r = {texels, W, H, 1, {mode, mode, mode}, lin, norm, -7.5f};
                int bad = 0;
                for (int i = 0; i < half; i++) {
                    float want = ref_sample(&r, xy[base + i].x, xy[base + i].y, 0, 2, 1);
                    if (!near(out[i], want)) {
                        if (bad++ < 4)
                            printf("  %s at (%g, %g): got %.9g, want %.9g\n", name, xy[base + i].x, xy[base + i].y,
                                   out[i], want);
                    }
                    if (lin && !near(out[i], ref_sample(&r, xy[base + i].x, xy[base + i].y, 0, 2, 0)))
                        (*linear_diff_exact)++;
                }
                EXPECT_EQ("samples that differ from the reference", 0, bad);
                CK(cudaDestroyTextureObject(t));
            }
    rt_cur = "tex2DLod, tex2DGrad (level 0)";
    {
        cudaResourceDesc rd = {};
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = arr;
        cudaTextureDesc td = {};
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModeLinear;
        cudaTextureObject_t t;
        CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
        int half = n / 2;
        float *g;
        cudaMallocManaged(&g, sizeof(float) * half);
        k_lod_grad<<<(half + 63) / 64, 64>>>(t, xy, out, g, half);
        CK(cudaDeviceSynchronize());
        ref_tex r = {texels, W, H, 1, {1, 1, 1}, 1, 0, 0};
        int bad = 0;
        for (int i = 0; i < half; i++) {
            float want = ref_sample(&r, xy[i].x, xy[i].y, 0, 2, 1);
            if ((!near(out[i], want) || !near(g[i], want)) && bad++ < 4)
                printf("  lod/grad at (%g,%g): got %.9g / %.9g, want %.9g\n", xy[i].x, xy[i].y, out[i], g[i], want);
        }
        EXPECT_EQ("tex.level / tex.grad samples that differ from level 0's reference", 0, bad);
        CK(cudaDestroyTextureObject(t));
        cudaFree(g);
    }
    cudaFree(xy);
    cudaFree(out);
}

static void case_surf3d(void)
{
    rt_cur = "3d float4 surface";
    enum { X = 5, Y = 3, Z = 4 };
    static float4 v[Z][Y][X], back[Z][Y][X];
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++)
                v[z][y][x] = make_float4(x + 0.5f, y - 2.0f, 0, 0);
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<float4>();
    cudaArray_t a;
    CK(cudaMalloc3DArray(&a, &cd, make_cudaExtent(X, Y, Z), cudaArraySurfaceLoadStore));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(v, X * sizeof(float4), X, Y);
    p.dstArray = a;
    p.extent = make_cudaExtent(X, Y, Z);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    cudaSurfaceObject_t s;
    CK(cudaCreateSurfaceObject(&s, &rd));
    k_surf3d<<<dim3(Y, Z), 32>>>(s, X, Y, Z);
    CK(cudaDeviceSynchronize());
    cudaMemcpy3DParms q = {};
    q.srcArray = a;
    q.dstPtr = make_cudaPitchedPtr(back, X * sizeof(float4), X, Y);
    q.extent = make_cudaExtent(X, Y, Z);
    q.kind = cudaMemcpyDeviceToHost;
    CK(cudaMemcpy3D(&q));
    int bad = 0;
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++) {
                float4 w = make_float4(v[z][y][x].x * 2, v[z][y][x].y + 1, (float)x, (float)(y * 10 + z)), g = back[z][y][x];
                if ((g.x != w.x || g.y != w.y || g.z != w.z || g.w != w.w) && bad++ < 4)
                    printf("  (%d,%d,%d): got %g,%g,%g,%g want %g,%g,%g,%g\n", x, y, z, g.x, g.y, g.z, g.w, w.x, w.y, w.z,
                           w.w);
            }
    EXPECT_EQ("3d surface texels that differ after surf3Dread / surf3Dwrite (v4.b32)", 0, bad);
    CK(cudaDestroySurfaceObject(s));
    CK(cudaFreeArray(a));
}

// a graph: a memcpy node into an array (x and width in its elements), then the same array back
// to the host through a second node
static void case_graph(void)
{
    rt_cur = "graph memcpy nodes on an array";
    enum { X = 6, Y = 4 };
    float h[Y][X], back[Y][X + 2];
    for (int y = 0; y < Y; y++)
        for (int x = 0; x < X; x++)
            h[y][x] = y * 10.0f + x;
    memset(back, 0, sizeof back);
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
    cudaArray_t a;
    CK(cudaMallocArray(&a, &cd, X + 2, Y));
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    cudaMemcpy3DParms in = {};
    in.srcPtr = make_cudaPitchedPtr(h, sizeof h[0], X, Y);
    in.dstArray = a;
    in.dstPos = make_cudaPos(2, 0, 0);   // elements
    in.extent = make_cudaExtent(X, Y, 1);
    in.kind = cudaMemcpyHostToDevice;
    cudaMemcpy3DParms out = {};
    out.srcArray = a;
    out.dstPtr = make_cudaPitchedPtr(back, sizeof back[0], X + 2, Y);
    out.extent = make_cudaExtent(X + 2, Y, 1);
    out.kind = cudaMemcpyDeviceToHost;
    cudaGraphNode_t n1, n2;
    CK(cudaGraphAddMemcpyNode(&n1, g, NULL, 0, &in));
    CK(cudaGraphAddMemcpyNode(&n2, g, &n1, 1, &out));
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphLaunch(e, 0));
    CK(cudaStreamSynchronize(0));
    int bad = 0;
    for (int y = 0; y < Y; y++)
        for (int x = 2; x < X + 2; x++)
            if (back[y][x] != h[y][x - 2] && bad++ < 4)
                printf("  (%d,%d): got %g, want %g\n", x, y, back[y][x], h[y][x - 2]);
    EXPECT_EQ("texels that differ after the graph's two memcpy nodes", 0, bad);
    CK(cudaGraphExecDestroy(e));
    CK(cudaGraphDestroy(g));
    CK(cudaFreeArray(a));
}

static void case_unorm(void)
{
    rt_cur = "uchar4 normalized float / element type, tld4";
    uchar4 h[W * H];
    for (int i = 0; i < W * H; i++)
        h[i] = make_uchar4((unsigned char)(i * 37), (unsigned char)(255 - i), (unsigned char)(i * i), 200);
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<uchar4>();
    cudaArray_t a;
    CK(cudaMallocArray(&a, &cd, W, H));
    CK(cudaMemcpy2DToArray(a, 0, 0, h, W * sizeof(uchar4), W * sizeof(uchar4), H, cudaMemcpyHostToDevice));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeNormalizedFloat;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
    int n;
    float2 *xy = coords2d(&n);
    n /= 2;
    float4 *o4;
    uchar4 *ou;
    cudaMallocManaged(&o4, sizeof(float4) * n);
    cudaMallocManaged(&ou, sizeof(uchar4) * n);
    k_sample2d4<<<(n + 63) / 64, 64>>>(t, xy, o4, n);
    CK(cudaDeviceSynchronize());
    float ch[4][W * H];
    for (int i = 0; i < W * H; i++)
        ch[0][i] = h[i].x / 255.0f, ch[1][i] = h[i].y / 255.0f, ch[2][i] = h[i].z / 255.0f, ch[3][i] = h[i].w / 255.0f;
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 4; c++) {
            ref_tex r = {ch[c], W, H, 1, {1, 1, 1}, 1, 0, 0};
            float want = ref_sample(&r, xy[i].x, xy[i].y, 0, 2, 1), got = (&o4[i].x)[c];
            if (!near(got, want) && bad++ < 4)
                printf("  unorm linear at (%g, %g) channel %d: got %.9g, want %.9g\n", xy[i].x, xy[i].y, c, got, want);
        }
    EXPECT_EQ("unorm linear samples that differ from the reference", 0, bad);
    // tld4: channel x of the bilinear footprint, (i,j+1) (i+1,j+1) (i+1,j) (i,j)
    k_gather<<<(n + 63) / 64, 64>>>(t, xy, o4, n);
    CK(cudaDeviceSynchronize());
    bad = 0;
    for (int i = 0; i < n; i++) {
        ref_tex r = {ch[0], W, H, 1, {1, 1, 1}, 0, 0, 0};
        long x0 = (long)floorf(xy[i].x - 0.5f), y0 = (long)floorf(xy[i].y - 0.5f);
        float want[4] = {ref_texel(&r, x0, y0 + 1, 0), ref_texel(&r, x0 + 1, y0 + 1, 0), ref_texel(&r, x0 + 1, y0, 0),
                         ref_texel(&r, x0, y0, 0)};
        for (int c = 0; c < 4; c++)
            if (!near((&o4[i].x)[c], want[c]) && bad++ < 4)
                printf("  tld4 at (%g, %g) [%d]: got %.9g, want %.9g\n", xy[i].x, xy[i].y, c, (&o4[i].x)[c], want[c]);
    }
    EXPECT_EQ("tld4 (tex2Dgather) texels that differ from the reference", 0, bad);
    CK(cudaDestroyTextureObject(t));
    // element type: the bytes themselves, point sampled
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
    k_sample2du4<<<(n + 63) / 64, 64>>>(t, xy, ou, n);
    CK(cudaDeviceSynchronize());
    bad = 0;
    for (int i = 0; i < n; i++) {
        long x = (long)floorf(xy[i].x), y = (long)floorf(xy[i].y);
        x = x < 0 ? 0 : x >= W ? W - 1 : x, y = y < 0 ? 0 : y >= H ? H - 1 : y;
        uchar4 w = h[y * W + x];
        if (memcmp(&w, &ou[i], 4) && bad++ < 4)
            printf("  element type at (%g, %g): got %d,%d,%d,%d want %d,%d,%d,%d\n", xy[i].x, xy[i].y, ou[i].x, ou[i].y,
                   ou[i].z, ou[i].w, w.x, w.y, w.z, w.w);
    }
    EXPECT_EQ("element-type samples that differ", 0, bad);
    EXPECT_RT("linear filtering of an element-type 8-bit texture", cudaErrorInvalidValue,
              (td.filterMode = cudaFilterModeLinear, cudaCreateTextureObject(&t, &rd, &td, NULL)));
    CK(cudaFreeArray(a));
    // snorm: a signed 16-bit texture read as normalized float (-32768 -> -1)
    rt_cur = "short snorm";
    short s[4] = {-32768, -32767, 0, 16384};
    cudaChannelFormatDesc sd = cudaCreateChannelDesc<short>();
    CK(cudaMallocArray(&a, &sd, 4, 1));
    CK(cudaMemcpy2DToArray(a, 0, 0, s, sizeof s, sizeof s, 1, cudaMemcpyHostToDevice));
    rd.res.array.array = a;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeNormalizedFloat;
    CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
    for (int i = 0; i < 4; i++)
        xy[i] = make_float2(i + 0.5f, 0.5f);
    k_sample2d<<<1, 4>>>(t, xy, (float *)o4, 4);
    CK(cudaDeviceSynchronize());
    float want[4] = {-1.0f, -1.0f, 0.0f, 16384.0f / 32767.0f};
    for (int i = 0; i < 4; i++)
        if (!near(((float *)o4)[i], want[i])) {
            printf("FAIL %s: texel %d: got %.9g, want %.9g\n", rt_cur, i, ((float *)o4)[i], want[i]);
            rt_fails++;
        }
    printf("ok %s: checked\n", rt_cur);
    CK(cudaDestroyTextureObject(t));
    CK(cudaFreeArray(a));
    cudaFree(xy);
    cudaFree(o4);
    cudaFree(ou);
}

static void case_3d_layered(void)
{
    rt_cur = "3d";
    enum { X = 4, Y = 5, Z = 6, N = 64 };
    static float v[X * Y * Z];
    for (int i = 0; i < X * Y * Z; i++)
        v[i] = sinf(i * 0.7f) * 10.0f;
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
    cudaArray_t a;
    CK(cudaMalloc3DArray(&a, &cd, make_cudaExtent(X, Y, Z)));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(v, X * sizeof(float), X, Y);
    p.dstArray = a;
    p.extent = make_cudaExtent(X, Y, Z);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p));
    float4 *pts;
    float *out;
    cudaMallocManaged(&pts, sizeof(float4) * N);
    cudaMallocManaged(&out, sizeof(float) * N);
    for (int i = 0; i < N; i++)
        pts[i] = make_float4(-0.5f + (i * 0.173f), 0.3f + i * 0.091f, -0.4f + i * 0.137f, 0);
    for (int lin = 0; lin < 2; lin++) {
        cudaResourceDesc rd = {};
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = a;
        cudaTextureDesc td = {};
        td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
        td.filterMode = lin ? cudaFilterModeLinear : cudaFilterModePoint;
        cudaTextureObject_t t;
        CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
        k_sample3d<<<1, N>>>(t, pts, out, N);
        CK(cudaDeviceSynchronize());
        ref_tex r = {v, X, Y, Z, {1, 1, 1}, lin, 0, 0};
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float want = ref_sample(&r, pts[i].x, pts[i].y, pts[i].z, 3, 1);
            if (!near(out[i], want) && bad++ < 4)
                printf("  3d %s at (%g,%g,%g): got %.9g, want %.9g\n", lin ? "linear" : "point", pts[i].x, pts[i].y,
                       pts[i].z, out[i], want);
        }
        EXPECT_EQ(lin ? "3d linear samples that differ" : "3d point samples that differ", 0, bad);
        CK(cudaDestroyTextureObject(t));
    }
    // the array read back through cudaMemcpy3D
    static float back[X * Y * Z];
    cudaMemcpy3DParms q = {};
    q.srcArray = a;
    q.dstPtr = make_cudaPitchedPtr(back, X * sizeof(float), X, Y);
    q.extent = make_cudaExtent(X, Y, Z);
    q.kind = cudaMemcpyDeviceToHost;
    CK(cudaMemcpy3D(&q));
    EXPECT_EQ("3d array read back equals what was written", 0, memcmp(back, v, sizeof v));
    CK(cudaFreeArray(a));

    rt_cur = "2d layered";
    CK(cudaMalloc3DArray(&a, &cd, make_cudaExtent(X, Y, Z), cudaArrayLayered));
    p.dstArray = a;
    CK(cudaMemcpy3D(&p));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
    for (int i = 0; i < N; i++)
        pts[i] = make_float4(i % 7 - 1.2f, (i / 7) % 6 + 0.3f, (float)(i % Z), 0);
    k_layered<<<1, N>>>(t, pts, out, N);
    CK(cudaDeviceSynchronize());
    int bad = 0;
    for (int i = 0; i < N; i++) {
        long x = (long)floorf(pts[i].x), y = (long)floorf(pts[i].y), l = (long)pts[i].z;
        x = x < 0 ? 0 : x >= X ? X - 1 : x, y = y < 0 ? 0 : y >= Y ? Y - 1 : y;
        float want = v[(l * Y + y) * X + x];
        if (out[i] != want && bad++ < 4)
            printf("  layered at (%g,%g) layer %ld: got %.9g, want %.9g\n", pts[i].x, pts[i].y, l, out[i], want);
    }
    EXPECT_EQ("layered samples that differ", 0, bad);
    CK(cudaDestroyTextureObject(t));
    CK(cudaFreeArray(a));
    cudaFree(pts);
    cudaFree(out);
}

static void case_linear_pitch(void)
{
    rt_cur = "linear and pitch2D resources";
    enum { N = 40 };
    float *d, *out;
    CK(cudaMalloc(&d, N * sizeof(float)));
    float h[N];
    for (int i = 0; i < N; i++)
        h[i] = i * 1.5f - 3;
    CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    cudaMallocManaged(&out, sizeof(float) * N);
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeLinear;
    rd.res.linear.devPtr = d;
    rd.res.linear.desc = cudaCreateChannelDesc<float>();
    rd.res.linear.sizeInBytes = N * sizeof(float);
    cudaTextureDesc td = {};
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
    k_fetch1d<<<1, N>>>(t, out, N, 5);   // elements 5 .. 44: the last five are out of range (0)
    CK(cudaDeviceSynchronize());
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = i + 5 < N ? h[i + 5] : 0.0f;
        if (out[i] != want && bad++ < 4)
            printf("  tex1Dfetch %d: got %g, want %g\n", i + 5, out[i], want);
    }
    EXPECT_EQ("tex1Dfetch elements that differ", 0, bad);
    CK(cudaDestroyTextureObject(t));
    cudaResourceDesc got = {};
    // pitch2D over an 8 x 4 image in a 64-byte pitch
    float *img;
    size_t pitch;
    CK(cudaMallocPitch((void **)&img, &pitch, 8 * sizeof(float), 4));
    float hi[4][8];
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 8; x++)
            hi[y][x] = y * 10.0f + x;
    CK(cudaMemcpy2D(img, pitch, hi, sizeof hi[0], sizeof hi[0], 4, cudaMemcpyHostToDevice));
    rd.resType = cudaResourceTypePitch2D;
    rd.res.pitch2D.devPtr = img;
    rd.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    rd.res.pitch2D.width = 8;
    rd.res.pitch2D.height = 4;
    rd.res.pitch2D.pitchInBytes = pitch;
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
    CK(cudaGetTextureObjectResourceDesc(&got, t));
    EXPECT_EQ("resource desc round trip: pitch", (long long)pitch, (long long)got.res.pitch2D.pitchInBytes);
    float2 *xy;
    cudaMallocManaged(&xy, sizeof(float2) * N);
    for (int i = 0; i < N; i++)
        xy[i] = make_float2(i * 0.23f - 0.5f, i * 0.11f);
    k_sample2d<<<1, N>>>(t, xy, out, N);
    CK(cudaDeviceSynchronize());
    ref_tex r = {&hi[0][0], 8, 4, 1, {1, 1, 1}, 1, 0, 0};
    bad = 0;
    for (int i = 0; i < N; i++) {
        float want = ref_sample(&r, xy[i].x, xy[i].y, 0, 2, 1);
        if (!near(out[i], want) && bad++ < 4)
            printf("  pitch2D at (%g,%g): got %.9g, want %.9g\n", xy[i].x, xy[i].y, out[i], want);
    }
    EXPECT_EQ("pitch2D linear samples that differ", 0, bad);
    CK(cudaDestroyTextureObject(t));
    rd.res.pitch2D.pitchInBytes = pitch + 4;   // not a multiple of the texture pitch alignment
    EXPECT_RT("pitch2D with a misaligned pitch", cudaErrorInvalidValue, cudaCreateTextureObject(&t, &rd, &td, NULL));
    cudaFree(xy);
    cudaFree(img);
    cudaFree(d);
    cudaFree(out);
}

static void case_surface(cudaArray_t *keep, cudaSurfaceObject_t *keep_s)
{
    rt_cur = "surface write, read";
    enum { SW = 10, SH = 3 };
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
    cudaArray_t a;
    CK(cudaMallocArray(&a, &cd, SW, SH, cudaArraySurfaceLoadStore));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    cudaSurfaceObject_t s;
    CK(cudaCreateSurfaceObject(&s, &rd));
    k_surf_write<<<dim3(1, SH), 32>>>(s, SW, SH);
    CK(cudaDeviceSynchronize());
    float back[SH][SW];
    CK(cudaMemcpy2DFromArray(back, sizeof back[0], a, 0, 0, sizeof back[0], SH, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < SW; x++)
            if (back[y][x] != 100.0f * y + x && bad++ < 4)
                printf("  surface (%d,%d): got %g, want %g\n", x, y, back[y][x], 100.0f * y + x);
    EXPECT_EQ("surface texels that differ after surf2Dwrite", 0, bad);
    enum { N = 6 };
    int2 *xy;
    float *c, *z;
    cudaMallocManaged(&xy, sizeof(int2) * N);
    cudaMallocManaged(&c, sizeof(float) * N);
    cudaMallocManaged(&z, sizeof(float) * N);
    int2 pts[N] = {{0, 0}, {9, 2}, {-3, 1}, {12, 1}, {4, -1}, {5, 7}};
    memcpy(xy, pts, sizeof pts);
    k_surf_read<<<1, N>>>(s, xy, c, z, N);
    CK(cudaDeviceSynchronize());
    bad = 0;
    for (int i = 0; i < N; i++) {
        int x = pts[i].x, y = pts[i].y, in = x >= 0 && x < SW && y >= 0 && y < SH;
        int cx = x < 0 ? 0 : x >= SW ? SW - 1 : x, cy = y < 0 ? 0 : y >= SH ? SH - 1 : y;
        float wc = 100.0f * cy + cx, wz = in ? wc : 0.0f;
        if ((c[i] != wc || z[i] != wz) && bad++ < 4)
            printf("  surf2Dread (%d,%d): clamp got %g want %g, zero got %g want %g\n", x, y, c[i], wc, z[i], wz);
    }
    EXPECT_EQ("surf2Dread clamp / zero values that differ", 0, bad);
    // txq / suq
    int *q;
    cudaMallocManaged(&q, sizeof(int) * 3);
    cudaTextureDesc td = {};
    cudaTextureObject_t t;
    CK(cudaCreateTextureObject(&t, &rd, &td, NULL));
    k_query<<<1, 1>>>(t, s, q);
    CK(cudaDeviceSynchronize());
    EXPECT_EQ("txq.width", SW, q[0]);
    EXPECT_EQ("txq.height", SH, q[1]);
    EXPECT_EQ("suq.width", SW, q[2]);
    CK(cudaDestroyTextureObject(t));
    cudaFree(q);
    cudaFree(xy);
    cudaFree(c);
    cudaFree(z);
    *keep = a;
    *keep_s = s;
}

static void case_driver(void)
{
    rt_cur = "driver API";
    CUarray a;
    CUDA_ARRAY3D_DESCRIPTOR d = {};
    d.Width = W, d.Height = H, d.Format = CU_AD_FORMAT_FLOAT, d.NumChannels = 1;
    CKD(cuArray3DCreate(&a, &d));
    CUDA_ARRAY_DESCRIPTOR d2;
    CKD(cuArrayGetDescriptor(&d2, a));
    EXPECT_EQ("cuArrayGetDescriptor width", W, d2.Width);
    EXPECT_EQ("cuArrayGetDescriptor height", H, d2.Height);
    // the first row through cuMemcpyHtoA, the rest through cuMemcpy2D
    CKD(cuMemcpyHtoA(a, 0, texels, W * sizeof(float)));
    CUDA_MEMCPY2D c = {};
    c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = texels + W, c.srcPitch = W * sizeof(float);
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = a, c.dstY = 1;
    c.WidthInBytes = W * sizeof(float), c.Height = H - 1;
    CKD(cuMemcpy2D(&c));
    float back[W * H];
    CKD(cuMemcpyAtoH(back, a, 0, sizeof back));
    EXPECT_EQ("cuMemcpyAtoH equals what was written", 0, memcmp(back, texels, sizeof back));
    // array -> device -> another array -> host, through AtoD, DtoA (a mid-row range), AtoA, AtoHAsync
    {
        CUdeviceptr dv;
        CUarray a2;
        CKD(cuMemAlloc(&dv, sizeof back));
        CKD(cuArray3DCreate(&a2, &d));
        CKD(cuMemcpyAtoD(dv, a, 0, sizeof back));
        CKD(cuMemcpyDtoA(a2, 0, dv, sizeof back));
        CKD(cuMemcpyDtoA(a2, 3 * sizeof(float), dv + 3 * sizeof(float), 4 * sizeof(float)));   // inside row 0
        CUarray a3;
        CKD(cuArray3DCreate(&a3, &d));
        CKD(cuMemcpyAtoA(a3, 0, a2, 0, sizeof back));
        float b3[W * H];
        memset(b3, 0, sizeof b3);
        CKD(cuMemcpyAtoHAsync(b3, a3, 0, sizeof b3, 0));
        CKD(cuCtxSynchronize());
        EXPECT_EQ("AtoD, DtoA, AtoA, AtoHAsync carry the texels", 0, memcmp(b3, texels, sizeof b3));
        EXPECT_EQ("cuMemcpyDtoA across a row end in mid-row", CUDA_ERROR_INVALID_VALUE,
                  cuMemcpyDtoA(a2, 6 * sizeof(float), dv, 4 * sizeof(float)));
        EXPECT_EQ("cuMemcpyAtoH past the array's end", CUDA_ERROR_INVALID_VALUE,
                  cuMemcpyAtoH(b3, a3, sizeof(float), sizeof b3));
        CKD(cuArrayDestroy(a2));
        CKD(cuArrayDestroy(a3));
        CKD(cuMemFree(dv));
    }
    CUDA_RESOURCE_DESC rd = {};
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = a;
    CUDA_TEXTURE_DESC td = {};
    td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_MIRROR;
    td.filterMode = CU_TR_FILTER_MODE_LINEAR;
    td.flags = CU_TRSF_NORMALIZED_COORDINATES;
    CUtexObject t;
    CKD(cuTexObjectCreate(&t, &rd, &td, NULL));
    CUDA_TEXTURE_DESC tg;
    CKD(cuTexObjectGetTextureDesc(&tg, t));
    EXPECT_EQ("cuTexObjectGetTextureDesc address mode", CU_TR_ADDRESS_MODE_MIRROR, tg.addressMode[1]);
    CUDA_RESOURCE_DESC rg;
    CKD(cuTexObjectGetResourceDesc(&rg, t));
    EXPECT_EQ("cuTexObjectGetResourceDesc array", (long long)(uintptr_t)a, (long long)(uintptr_t)rg.res.array.hArray);
    int n;
    float2 *xy = coords2d(&n);
    float *out;
    cudaMallocManaged(&out, sizeof(float) * n);
    n /= 2;
    k_sample2d<<<(n + 63) / 64, 64>>>(t, xy + n, out, n);
    CK(cudaDeviceSynchronize());
    ref_tex r = {texels, W, H, 1, {2, 2, 2}, 1, 1, 0};
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want = ref_sample(&r, xy[n + i].x, xy[n + i].y, 0, 2, 1);
        if (!near(out[i], want) && bad++ < 4)
            printf("  driver mirror linear at (%g,%g): got %.9g, want %.9g\n", xy[n + i].x, xy[n + i].y, out[i], want);
    }
    EXPECT_EQ("driver-made texture: samples that differ", 0, bad);
    CKD(cuTexObjectDestroy(t));
    EXPECT_EQ("a destroyed texture object", CUDA_ERROR_INVALID_VALUE, cuTexObjectGetTextureDesc(&tg, t));
    // bad descriptors
    CUarray b;
    CUDA_ARRAY3D_DESCRIPTOR bd = d;
    bd.NumChannels = 3;
    EXPECT_EQ("cuArray3DCreate with 3 channels", CUDA_ERROR_INVALID_VALUE, cuArray3DCreate(&b, &bd));
    bd = d, bd.Format = (CUarray_format)0x77;
    EXPECT_EQ("cuArray3DCreate with an unknown format", CUDA_ERROR_INVALID_VALUE, cuArray3DCreate(&b, &bd));
    bd = d, bd.Width = 0;
    EXPECT_EQ("cuArray3DCreate with width 0", CUDA_ERROR_INVALID_VALUE, cuArray3DCreate(&b, &bd));
    bd = d, bd.Height = 0, bd.Depth = 4;
    EXPECT_EQ("cuArray3DCreate with depth but no height", CUDA_ERROR_INVALID_VALUE, cuArray3DCreate(&b, &bd));
    int mw = 0;
    CK(cudaDeviceGetAttribute(&mw, cudaDevAttrMaxTexture1DWidth, 0));
    bd = d, bd.Height = 0, bd.Width = (size_t)mw;
    EXPECT_EQ("a 1D array as wide as MAXIMUM_TEXTURE1D_WIDTH", CUDA_SUCCESS, cuArray3DCreate(&b, &bd));
    CKD(cuArrayDestroy(b));
    bd.Width = (size_t)mw + 1;
    EXPECT_EQ("a 1D array wider than MAXIMUM_TEXTURE1D_WIDTH", CUDA_ERROR_INVALID_VALUE, cuArray3DCreate(&b, &bd));
    CUsurfObject s;
    EXPECT_EQ("cuSurfObjectCreate on an array without SURFACE_LDST", CUDA_ERROR_INVALID_VALUE,
              cuSurfObjectCreate(&s, &rd));
    td.addressMode[0] = (CUaddress_mode)9;
    EXPECT_EQ("cuTexObjectCreate with a bad address mode", CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, &rd, &td, NULL));
    c.dstY = H;   // rows past the array's end
    EXPECT_EQ("cuMemcpy2D past the array's last row", CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    CKD(cuArrayDestroy(a));
    EXPECT_EQ("cuArrayGetDescriptor of a destroyed array", CUDA_ERROR_INVALID_HANDLE, cuArrayGetDescriptor(&d2, a));
    rd.res.array.hArray = a;
    td.addressMode[0] = CU_TR_ADDRESS_MODE_CLAMP;
    EXPECT_EQ("cuTexObjectCreate on a destroyed array", CUDA_ERROR_INVALID_HANDLE, cuTexObjectCreate(&t, &rd, &td, NULL));
    cudaChannelFormatDesc three = cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
    cudaArray_t ra;
    EXPECT_RT("cudaMallocArray with a 3-channel descriptor", cudaErrorInvalidChannelDescriptor,
              cudaMallocArray(&ra, &three, 4, 4));
    cudaFree(xy);
    cudaFree(out);
}

int main(void)
{
    const char *only = getenv("RT_TEX_CASE");
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            texels[j * W + i] = i * 1.37f + j * j * 0.71f - 3.0f + (i * j % 3) * 0.25f;
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    rt_cur = "setup";
    CK(cudaMallocArray(&arr, &cd, W, H));
    CK(cudaMemcpyToArray(arr, 0, 0, texels, sizeof texels, cudaMemcpyHostToDevice));   // deprecated, still used
    float back[W * H];
    CK(cudaMemcpyFromArray(back, arr, 0, 0, sizeof back, cudaMemcpyDeviceToHost));
    EXPECT_EQ("cudaMemcpyFromArray equals cudaMemcpyToArray's data", 0, memcmp(back, texels, sizeof back));
    cudaChannelFormatDesc gd;
    cudaExtent ge;
    unsigned gf;
    CK(cudaArrayGetInfo(&gd, &ge, &gf, arr));
    EXPECT_EQ("cudaArrayGetInfo width", W, ge.width);
    EXPECT_EQ("cudaArrayGetInfo channel bits", 32, gd.x);
    {   // array to array: a rectangle into a wider array at (3 floats, row 1), bytes through the rows
        cudaArray_t wide, same;
        CK(cudaMallocArray(&wide, &cd, W + 3, H));
        CK(cudaMallocArray(&same, &cd, W, H));
        CK(cudaMemcpy2DArrayToArray(wide, 3 * sizeof(float), 1, arr, 0, 0, W * sizeof(float), H - 1,
                                    cudaMemcpyDeviceToDevice));
        float wb[H - 1][W];
        CK(cudaMemcpy2DFromArray(wb, sizeof wb[0], wide, 3 * sizeof(float), 1, sizeof wb[0], H - 1,
                                 cudaMemcpyDeviceToHost));
        EXPECT_EQ("cudaMemcpy2DArrayToArray carries the rectangle", 0, memcmp(wb, texels, sizeof wb));
        EXPECT_RT("cudaMemcpy2DArrayToArray past the wider array's row end", cudaErrorInvalidValue,
                  cudaMemcpy2DArrayToArray(wide, 4 * sizeof(float), 1, arr, 0, 0, W * sizeof(float), 1,
                                           cudaMemcpyDeviceToDevice));
        CK(cudaMemcpyArrayToArray(same, 0, 0, arr, 0, 0, sizeof texels, cudaMemcpyDeviceToDevice));
        float sb[W * H];
        CK(cudaMemcpyFromArray(sb, same, 0, 0, sizeof sb, cudaMemcpyDeviceToHost));
        EXPECT_EQ("cudaMemcpyArrayToArray carries every byte", 0, memcmp(sb, texels, sizeof sb));
        EXPECT_RT("cudaMemcpyArrayToArray host to device", cudaErrorInvalidMemcpyDirection,
                  cudaMemcpyArrayToArray(same, 0, 0, arr, 0, 0, 4, cudaMemcpyHostToDevice));
        CK(cudaFreeArray(wide));
        CK(cudaFreeArray(same));
    }
    if (only) {   // the faulting programs
        float *out;
        cudaMalloc(&out, 4);
        cudaError_t e = cudaSuccess;
        if (!strcmp(only, "ldarray")) {
            k_ldptr<<<1, 1>>>((const float *)arr, out);   // an array handle used as a pointer
        } else if (!strcmp(only, "badhandle")) {
            float2 *xy;
            cudaMalloc(&xy, sizeof(float2));
            k_sample2d<<<1, 1>>>(0x5eed, xy, out, 1);
        } else if (!strcmp(only, "trap")) {
            cudaArray_t a;
            cudaSurfaceObject_t s;
            case_surface(&a, &s);
            k_surf_trap<<<1, 1>>>(s, 10);   // one past the last texel
        }
        e = cudaDeviceSynchronize();
        printf("launch (%s): %s\n", only, cudaGetErrorName(e));
        return e == cudaSuccess ? 0 : 1;
    }
    int diff_exact = 0;
    case_2d(arr, &diff_exact);
    rt_cur = "negative control: exact weights";
    printf("%s: %d linear samples differ from a reference with exact weights\n", rt_cur, diff_exact);
    EXPECT_EQ("some linear samples differ from the exact-weight reference", 1, diff_exact > 0);
    case_unorm();
    case_3d_layered();
    case_surf3d();
    case_graph();
    case_linear_pitch();
    cudaArray_t sa;
    cudaSurfaceObject_t ss;
    case_surface(&sa, &ss);
    rt_cur = "surface teardown";
    CK(cudaDestroySurfaceObject(ss));
    CK(cudaFreeArray(sa));
    case_driver();
    CK(cudaFreeArray(arr));
    printf("%s: %d failed\n", rt_fails ? "FAIL" : "PASS", rt_fails);
    return rt_fails ? 1 : 0;
}
