/* rt_thrust.cu — an ordinary Thrust/CUB program (built as a user builds one: nvcc's default code,
 * -cudart shared) whose every algorithm runs CUB's kernels from their PTX on hostcuda: sort and
 * sort_by_key (CUB's radix sort: single-tile for a small input, onesweep for a large one),
 * reduce, inclusive/exclusive scan, transform, copy_if, unique, max_element, inner_product.
 * Each result is compared with the C++ standard library's on the same input; a mismatch prints
 * the first differing index with both values and the program exits 1.
 *   rt_thrust [N] [--corrupt]   N: elements (default 20000); --corrupt: the negative control,
 *                               one expected value is changed before the comparisons, so the
 *                               sort check must fail.
 * Must not: check a result against itself or against Thrust (the reference is std::).
 */
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/extrema.h>
#include <thrust/host_vector.h>
#include <thrust/inner_product.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

static int failures;

template <class T> static void check(const char *what, const std::vector<T> &want, const thrust::host_vector<T> &got)
{
    size_t n = want.size() < got.size() ? want.size() : got.size();
    for (size_t i = 0; i < n; i++)
        if (!(want[i] == got[i])) {
            std::printf("not ok - %s: index %zu: got %g, expected %g\n", what, i, (double)got[i], (double)want[i]);
            failures++;
            return;
        }
    if (want.size() != got.size()) {
        std::printf("not ok - %s: %zu elements, expected %zu\n", what, got.size(), want.size());
        failures++;
        return;
    }
    std::printf("ok - %s (%zu elements)\n", what, n);
}

template <class T> static void check1(const char *what, T want, T got)
{
    if (want == got)
        std::printf("ok - %s (%g)\n", what, (double)got);
    else {
        std::printf("not ok - %s: got %g, expected %g\n", what, (double)got, (double)want);
        failures++;
    }
}

struct saxpy {
    float a;
    __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};
struct is_even {
    __host__ __device__ bool operator()(int x) const { return x % 2 == 0; }
};

int main(int argc, char **argv)
{
    int n = 20000, corrupt = 0;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--corrupt"))
            corrupt = 1;
        else if ((n = std::atoi(argv[i])) <= 0) {
            std::fprintf(stderr, "usage: rt_thrust [N > 0] [--corrupt]\n");
            return 2;
        }
    }
    std::vector<int> h(n);
    std::vector<float> hf(n), hg(n);
    unsigned s = 12345;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        h[i] = (int)(s >> 8) % 100000 - 50000;
        hf[i] = (float)((s >> 4) % 1000) * 0.25f;
        hg[i] = (float)(i % 17) - 8.0f;
    }
    thrust::device_vector<int> d(h.begin(), h.end());
    thrust::device_vector<float> df(hf.begin(), hf.end()), dg(hg.begin(), hg.end());

    /* sort: large (onesweep) and small (single tile) */
    std::vector<int> want = h;
    std::sort(want.begin(), want.end());
    if (corrupt)
        want[n / 2] += 1;
    thrust::device_vector<int> ds = d;
    thrust::sort(ds.begin(), ds.end());
    check("thrust::sort of ints (CUB radix sort)", want, thrust::host_vector<int>(ds));
    std::vector<int> want_small(h.begin(), h.begin() + 100);
    std::sort(want_small.begin(), want_small.end());
    thrust::device_vector<int> dsmall(h.begin(), h.begin() + 100);
    thrust::sort(dsmall.begin(), dsmall.end());
    check("thrust::sort of 100 ints (single tile)", want_small, thrust::host_vector<int>(dsmall));

    /* sort_by_key: float keys, int values (stable) */
    std::vector<int> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return hf[a] < hf[b]; });
    thrust::device_vector<float> dk = df;
    thrust::device_vector<int> dv(n);
    thrust::sequence(dv.begin(), dv.end());
    thrust::sort_by_key(dk.begin(), dk.end(), dv.begin());
    check("thrust::sort_by_key, float keys (values in stable order)", idx, thrust::host_vector<int>(dv));

    /* reductions and scans */
    long long hsum = 0;
    for (int x : h)
        hsum += x;
    check1("thrust::reduce (sum of ints)", hsum, thrust::reduce(d.begin(), d.end(), 0LL, thrust::plus<long long>()));
    std::vector<int> inc(n), exc(n);
    std::partial_sum(h.begin(), h.end(), inc.begin());
    exc[0] = 7;
    for (int i = 1; i < n; i++)
        exc[i] = exc[i - 1] + h[i - 1];
    thrust::device_vector<int> dscan(n);
    thrust::inclusive_scan(d.begin(), d.end(), dscan.begin());
    check("thrust::inclusive_scan", inc, thrust::host_vector<int>(dscan));
    thrust::exclusive_scan(d.begin(), d.end(), dscan.begin(), 7);
    check("thrust::exclusive_scan (init 7)", exc, thrust::host_vector<int>(dscan));

    /* transform, copy_if, unique, max_element, inner_product */
    std::vector<float> sx(n);
    for (int i = 0; i < n; i++)
        sx[i] = 2.5f * hf[i] + hg[i];
    thrust::device_vector<float> dy(n);
    thrust::transform(df.begin(), df.end(), dg.begin(), dy.begin(), saxpy{2.5f});
    check("thrust::transform (saxpy)", sx, thrust::host_vector<float>(dy));
    std::vector<int> ev;
    std::copy_if(h.begin(), h.end(), std::back_inserter(ev), [](int x) { return x % 2 == 0; });
    thrust::device_vector<int> dev(n);
    auto end = thrust::copy_if(d.begin(), d.end(), dev.begin(), is_even());
    dev.resize(end - dev.begin());
    check("thrust::copy_if (the even ones, in order)", ev, thrust::host_vector<int>(dev));
    std::vector<int> uq = want;
    if (corrupt)
        uq[n / 2] -= 1;
    uq.erase(std::unique(uq.begin(), uq.end()), uq.end());
    auto uend = thrust::unique(ds.begin(), ds.end());
    ds.resize(uend - ds.begin());
    check("thrust::unique of the sorted ints", uq, thrust::host_vector<int>(ds));
    int hmax = *std::max_element(h.begin(), h.end());
    check1("thrust::max_element", hmax, (int)*thrust::max_element(d.begin(), d.end()));
    double hip = 0;
    for (int i = 0; i < n; i++)
        hip += (double)hf[i] * (double)hg[i];
    check1("thrust::inner_product (exact: quarter-integer products)", hip,
           thrust::inner_product(df.begin(), df.end(), dg.begin(), 0.0, thrust::plus<double>(),
                                 thrust::multiplies<double>()));
    std::printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
