// Shim for the OpenCL ICD loader. Kernels target OpenCL C 1.2; the host API is used at the 1.2 level
// so that every conformant driver (PoCL, NVIDIA, AMD, Intel) works.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
