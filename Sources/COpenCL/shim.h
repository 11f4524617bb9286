// Shim for the OpenCL headers. Kernels target OpenCL C 1.2; the host API is used at the 1.2 level
// so that every conformant driver (PoCL, NVIDIA, AMD, Intel) works.
//
// Only the headers are used: nothing links against libOpenCL. The backend opens the ICD loader at
// run time (`OpenCLLibrary`, dlopen) and calls it through function pointers whose types come from
// `cl_icd.h` (`cl_api_clCreateBuffer`, ...), so a machine without the library still runs the
// engine, with the `opencl` backend reported unavailable.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_icd.h>
