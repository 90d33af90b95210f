/* hooks_module.c — the image load hooks (cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx,
 * cuModuleLoadFatBinary, cuLibraryLoadData, cuLibraryLoadFromFile): each calls its real twin
 * and, only in explain mode (ash_explain_on) and only after a successful load, hands what it was
 * given (the image, or the file's path) to shim/explain/; likewise to the step watch while it is
 * on (ash_unfired_watch_on: its kernels' facts). Fatbins a runtime registers come
 * through these too (cudart 12+ loads them with cuLibraryLoadData).
 * Must not: change the arguments or the CUresult the driver gave; read an image outside explain
 *   mode or the step watch; hand either a failed load.
 */
#include "ash_explain.h"
#include "ash_hook.h"
#include "ash_unfired.h"

#define ASH_IMAGE_HOOK(name, PARAMS, ARGS, IMAGE, PATH)                                    \
    ASH_EXPORT CUresult CUDAAPI name PARAMS                                                \
    {                                                                                      \
        ash_hook_init();                                                                   \
        if (ASH_UNLIKELY(ash_real.name == NULL))                                           \
            return ash_hook_missing(#name);                                                \
        CUresult r = ash_real.name ARGS;                                                   \
        if (ASH_UNLIKELY(ash_explain_on) && r == CUDA_SUCCESS)                             \
            ash_explain_image(#name, (IMAGE), (PATH));                                     \
        if (ASH_UNLIKELY(ash_unfired_watch_on) && r == CUDA_SUCCESS) /* the step watch */  \
            ash_unfired_image(#name, (IMAGE), (PATH));                                     \
        return r;                                                                          \
    }

ASH_IMAGE_HOOK(cuModuleLoad, (CUmodule *module, const char *fname), (module, fname), NULL, fname)
ASH_IMAGE_HOOK(cuModuleLoadData, (CUmodule *module, const void *image), (module, image), image, NULL)
ASH_IMAGE_HOOK(cuModuleLoadDataEx,
               (CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                void **optionValues),
               (module, image, numOptions, options, optionValues), image, NULL)
ASH_IMAGE_HOOK(cuModuleLoadFatBinary, (CUmodule *module, const void *fatCubin), (module, fatCubin), fatCubin, NULL)
ASH_IMAGE_HOOK(cuLibraryLoadData,
               (CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                unsigned int numLibraryOptions),
               (library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                numLibraryOptions),
               code, NULL)
ASH_IMAGE_HOOK(cuLibraryLoadFromFile,
               (CUlibrary *library, const char *fileName, CUjit_option *jitOptions, void **jitOptionsValues,
                unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                unsigned int numLibraryOptions),
               (library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                numLibraryOptions),
               NULL, fileName)
