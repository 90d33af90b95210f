/* tex_kernels.cu — texture and surface kernels for test_hc_tex (Driver API only; PTX via nvcc):
 * a layered 1D texture (tex.a1d), integer and 16-bit unorm 2D textures (tex.2d.v4.s32 / .f32),
 * 1D byte surfaces (suld/sust.b.1d.b8 with .zero and .clamp), txq.array_size and a store to a
 * surface handle that is no surface object. */
extern "C" __global__ void tx_a1d(cudaTextureObject_t t, const float *x, const int *layer, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1DLayered<float>(t, x[i], layer[i]);
}

extern "C" __global__ void tx_int2d(cudaTextureObject_t t, const float2 *xy, int4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<int4>(t, xy[i].x, xy[i].y);
}

extern "C" __global__ void tx_unorm16(cudaTextureObject_t t, const float2 *xy, float2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<float2>(t, xy[i].x, xy[i].y);
}

/* out[i] = surface byte at x[i] (zero beyond the edge) + 1, written back at x[i] clamped */
extern "C" __global__ void tx_surf1d(cudaSurfaceObject_t s, const int *x, unsigned char *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned char v = surf1Dread<unsigned char>(s, x[i], cudaBoundaryModeZero);
        out[i] = v;
        surf1Dwrite<unsigned char>((unsigned char)(v + 1), s, x[i], cudaBoundaryModeClamp);
    }
}

extern "C" __global__ void tx_layers(cudaTextureObject_t t, int *out)
{
    int v;
    asm("txq.array_size.b32 %0, [%1];" : "=r"(v) : "l"(t));
    out[0] = v;
}

extern "C" __global__ void tx_badsurf(cudaSurfaceObject_t s)
{
    surf1Dwrite<float>(1.0f, s, 0);
}

/* a 16-byte clamped read of a surface whose row is one byte: no position holds it */
extern "C" __global__ void tx_widesurf(cudaSurfaceObject_t s, float4 *out)
{
    out[0] = surf1Dread<float4>(s, 0, cudaBoundaryModeClamp);
}
